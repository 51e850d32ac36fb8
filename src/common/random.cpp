#include "common/random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <vector>

namespace hearth {

void random_bytes(void* out, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(out);
  std::size_t got = 0;
  while (got < size) {
    ssize_t n = ::getrandom(bytes + got, size - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);  // EINTR: try again; it never fails otherwise
  }
}

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  random_bytes(buf.data(), bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char b : buf) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace hearth
