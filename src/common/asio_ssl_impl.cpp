// The one compiled instance of Boost.Asio's TLS layer (see asio_impl.cpp). Kept apart so that
// only what uses TLS (the HTTP client, the JS engine's fetch) links OpenSSL through it.
#include <boost/asio/ssl/impl/src.hpp>
