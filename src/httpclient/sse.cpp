#include "httpclient/sse.hpp"

namespace hearth::httpclient {

bool SseParser::feed(std::string_view chunk, std::vector<SseEvent>& out) {
  // A byte order mark at the very start of the stream is dropped, even when it arrives split
  // across chunks (found by fuzz/mcp_sse_fuzz.cpp).
  static constexpr std::string_view kBom = "\xEF\xBB\xBF";
  while (!bom_checked_ && !chunk.empty()) {
    if (chunk.front() != kBom[bom_matched_]) {
      bom_checked_ = true;
      if (bom_matched_ > 0) {
        // Not a mark after all: the bytes held back belong to the stream.
        const std::string held(kBom.substr(0, bom_matched_));
        bom_matched_ = 0;
        if (!feed(held, out)) return false;
      }
      break;
    }
    chunk.remove_prefix(1);
    if (++bom_matched_ == kBom.size()) bom_checked_ = true;
  }
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    const char c = chunk[i];
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      line(pending_, out);
      pending_.clear();
      continue;
    }
    pending_.push_back(c);
    if (pending_.size() + size_ > max_event_) return false;
  }
  return size_ <= max_event_;
}

void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
  if (text.empty()) {  // dispatch
    if (has_data_) {
      if (!event_.id.empty()) last_id_ = event_.id;
      out.push_back(std::move(event_));
    }
    event_ = SseEvent{};
    has_data_ = false;
    size_ = 0;
    return;
  }
  if (text.front() == ':') return;  // a comment (keep-alive)
  std::string_view field = text;
  std::string_view value;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    field = text.substr(0, colon);
    value = text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
    size_ += value.size() + 1;
  } else if (field == "event") {
    event_.event = value.empty() ? "message" : std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) event_.id = std::string(value);
  }
  // `retry` and unknown fields are ignored.
}

}  // namespace hearth::httpclient
