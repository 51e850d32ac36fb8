// The one compiled instance of Boost.Asio's and Boost.Beast's non-template code.
//
// The whole build defines BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION
// (the top CMakeLists.txt), so a file that includes Asio or Beast compiles only the templates it
// uses; the scheduler, the reactor, socket operations, error categories, Beast's SHA-1 and
// base64 and the rest are compiled here, once. This took a fifth off the slowest translation
// unit of a cold build (docs/benchmarks.md, "Cold build").
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
