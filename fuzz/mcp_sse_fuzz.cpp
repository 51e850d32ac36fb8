// The server-sent events parser of MCP over Streamable HTTP, fed in chunks of varying size: the
// events must not depend on where the chunks split.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "httpclient/sse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto run = [&](std::size_t chunk, std::vector<hearth::httpclient::SseEvent>& events) {
    hearth::httpclient::SseParser parser;
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
      if (!parser.feed(bytes.substr(at, chunk), events)) return false;
    }
    return true;
  };
  std::vector<hearth::httpclient::SseEvent> a, b;
  const bool ok_a = run(bytes.size() + 1, a);
  const bool ok_b = run(1 + (size % 5), b);
  if (ok_a && ok_b && a.size() != b.size()) std::abort();
  return 0;
}
