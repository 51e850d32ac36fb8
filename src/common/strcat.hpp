#pragma once
/// strcat(a, b, ...): one string from text pieces, with one allocation's worth of appends (what
/// `a + b + c` in a loop would make temporaries for).

#include <string>
#include <string_view>

namespace hearth {

template <class... Parts>
std::string strcat(const Parts&... parts) {
  std::string out;
  out.reserve((std::string_view(parts).size() + ... + 0));
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace hearth
