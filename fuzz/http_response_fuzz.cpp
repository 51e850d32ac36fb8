// The HTTP client's response reader (httpclient/ResponseReader), fed what a hostile server could
// send, in pieces of varying size. The first byte chooses the limits; the outcome (an error, or
// the status and body) must not depend on where the pieces split, and a body limit must hold.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "httpclient/response_reader_testing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  hearth::httpclient::ResponseReader::Limits limits;
  limits.head_request = (data[0] & 1) != 0;
  if ((data[0] & 2) != 0) limits.max_body = data[0] >> 2;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  using hearth::httpclient::testing::read_in_pieces;
  const auto whole = read_in_pieces(wire, wire.size() + 1, limits);
  const auto pieces = read_in_pieces(wire, 1 + (size % 7), limits);
  // An error may come after part of the body reached the sink, at a point that depends on the
  // pieces; a success must be the same response either way.
  if (whole.ok != pieces.ok) std::abort();
  if (whole.ok && (whole.status != pieces.status || whole.body != pieces.body || !pieces.done)) {
    std::abort();
  }
  if (whole.ok && limits.max_body && whole.body.size() > *limits.max_body) std::abort();
  if (whole.ok && !whole.done) std::abort();
  if (whole.ok && (whole.status < 100 || whole.status > 999)) std::abort();
  return 0;
}
