// The egress proxy's request-head parser (what a jailed handler sends to reach the network).
#include <string_view>

#include "egress/proxy_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)hearth::egress::parse_proxy_request(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
