#include "js/frame.hpp"

#include <cstddef>
#include <cstdint>

namespace hearth::js {

std::string encode_frame(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 4);
  const auto n = static_cast<std::uint32_t>(payload.size());
  out.push_back(static_cast<char>((n >> 24) & 0xFF));
  out.push_back(static_cast<char>((n >> 16) & 0xFF));
  out.push_back(static_cast<char>((n >> 8) & 0xFF));
  out.push_back(static_cast<char>(n & 0xFF));
  out.append(payload);
  return out;
}

std::optional<std::string> FrameReader::next() {
  if (failed_ || buffer_.size() - offset_ < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  const std::size_t n = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                        (std::size_t{p[2]} << 8) | std::size_t{p[3]};
  if (n > kMaxFrame) {
    failed_ = true;
    return std::nullopt;
  }
  if (buffer_.size() - offset_ - 4 < n) return std::nullopt;
  std::string payload = buffer_.substr(offset_ + 4, n);
  offset_ += 4 + n;
  // Compact once the consumed prefix dominates, keeping appends amortised O(1).
  if (offset_ > std::size_t{64} << 10 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return payload;
}

}  // namespace hearth::js
