#pragma once
/// What a chat-completions server answers, read with no I/O (so it is fuzzed: fuzz/
/// model_stream_fuzz.cpp): a chat.completion body, or the chat.completion.chunk events of a
/// stream accumulated into one reply, within a size limit.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::agent {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  ///< JSON text, as the model wrote it
  /// Set when markup announced a call that could not be read: what to tell the model.
  std::string problem;
};

struct Reply {
  std::string content;
  /// What the server gave as the model's reasoning (`reasoning_content`, `reasoning`,
  /// `thinking`), kept apart from the answer.
  std::string reasoning;
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  json::value usage;  ///< as the server reported it, or null
  /// The assistant message to append to the conversation.
  json::object message() const;
};

/// Reads a non-streamed chat.completion response body.
Result<Reply> parse_completion(std::string_view body);

/// Accumulates streamed chat.completion.chunk events into a Reply.
class StreamAccumulator {
 public:
  explicit StreamAccumulator(std::size_t max_bytes = std::size_t{8} << 20)
      : max_bytes_(max_bytes) {}
  /// One event's data (not "[DONE]"); the text it added (for on_delta), or an error (also once
  /// the answer holds more than `max_bytes` of text, tool names and arguments).
  Result<std::string> add(std::string_view data);
  Reply take() { return std::move(reply_); }

 private:
  Reply reply_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
};

/// The error of a reply that cannot be read ("the model server's reply is not a chat
/// completion: WHY").
Error not_a_completion(const std::string& why);

/// The error of an answer past its limit (data {reason: "answer-too-large", limitBytes}).
Error answer_too_large(std::size_t limit);

}  // namespace hearth::agent
