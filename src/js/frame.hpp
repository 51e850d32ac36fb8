#pragma once
/// The framing between the daemon and a JS worker (hearth-js-worker): each message is a 4-byte
/// big-endian length followed by that many bytes of compact JSON (one object with a "t" member
/// naming the message). The messages are listed in docs/protocol.md ("JS worker protocol").

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::js {

/// Larger frames are refused: a worker that sends one is broken and is replaced.
constexpr std::size_t kMaxFrame = std::size_t{64} * 1024 * 1024;

/// `payload` with its length prefix.
std::string encode_frame(std::string_view payload);

/// Splits a byte stream into frame payloads.
class FrameReader {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  /// The next complete payload, nullopt when more bytes are needed. Sets error() (and returns
  /// nullopt from then on) for a frame longer than kMaxFrame.
  std::optional<std::string> next();
  bool failed() const { return failed_; }
  std::size_t buffered() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  std::size_t offset_ = 0;
  bool failed_ = false;
};

}  // namespace hearth::js
