#pragma once
/// An incremental parser of `text/event-stream` (the WHATWG server-sent events format), as MCP's
/// Streamable HTTP transport and streamed chat completions (the agent loop) use it: fed chunks as
/// they arrive, it returns complete events.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::httpclient {

struct SseEvent {
  std::string event = "message";  ///< the `event:` field, "message" by default
  std::string data;               ///< `data:` lines joined by '\n'
  std::string id;                 ///< the `id:` field, empty when absent
};

class SseParser {
 public:
  /// An event (or a line) larger than `max_event` bytes makes feed() fail.
  explicit SseParser(std::size_t max_event = std::size_t{16} << 20) : max_event_(max_event) {}
  /// Appends the events `chunk` completes to `out`; false when the stream broke a limit.
  bool feed(std::string_view chunk, std::vector<SseEvent>& out);
  /// The last event id seen (for Last-Event-ID).
  const std::string& last_id() const { return last_id_; }

 private:
  void line(std::string_view text, std::vector<SseEvent>& out);

  std::size_t max_event_;
  std::string pending_;   ///< an incomplete line
  bool skip_lf_ = false;  ///< the previous chunk ended with '\r'
  bool bom_checked_ = false;
  std::size_t bom_matched_ = 0;  ///< bytes of a byte order mark seen so far at the start
  SseEvent event_;
  bool has_data_ = false;
  std::size_t size_ = 0;
  std::string last_id_;
};

}  // namespace hearth::httpclient
