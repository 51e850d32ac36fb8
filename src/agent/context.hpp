#pragma once
/// What a conversation with a model may hold (both agent loops: the workspace loop and the App
/// Server's turns). Real agent loops compact their context rather than send it whole: a long task
/// must not grow its requests, the daemon's memory or its transcript without limit.
///
/// - A message joining the conversation is capped (`cap_text`): its beginning and end kept, the
///   middle replaced by a note that says how much was left out.
/// - Each request carries `fit()` of the conversation: the head (the system prompt and the task)
///   and the latest exchange (the last assistant message and what answered it: the newest
///   render) are always kept; older tool results, then older assistant texts and tool
///   arguments, are replaced by notes, oldest first, until the request fits; if that is not
///   enough, the oldest exchanges are left out whole (an assistant message with its tool
///   results, so that every tool result still follows its call) and the task says so.
/// Sizes are characters of message text (content and tool-call arguments) plus a small
/// overhead a message: a measure that needs no tokenizer and errs on the side of fitting.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "json/json.hpp"

namespace hearth::agent {

struct ContextBudget {
  /// What one request's messages may hold (about 24k tokens of English or code).
  std::size_t max_chars = 96000;
  /// What one message may hold as it joins the conversation (at most a third of max_chars:
  /// the latest exchange is always sent whole).
  std::size_t max_message_chars = 32000;
  std::size_t message_cap() const { return std::min(max_message_chars, max_chars / 3); }
};

/// `text` when it fits in `max` characters (bytes, cut on UTF-8 boundaries); otherwise its first
/// three quarters and its last quarter around "[... N characters elided ...]".
std::string cap_text(std::string_view text, std::size_t max);

/// An assistant message as the conversation keeps it: its text capped, tool-call arguments
/// longer than `max` replaced by a note that is still a JSON object (the call itself ran with
/// the whole arguments), and arguments that are not a JSON object wrapped in one
/// ({"invalidArguments": TEXT}), since servers parse the history's arguments again.
json::object kept_message(json::object message, std::size_t max);

/// The size fit() counts for one message.
std::size_t message_size(const json::value& message);

/// What fit() did, for events and transcripts.
struct FitReport {
  std::size_t elided = 0;   ///< messages replaced by a note
  std::size_t dropped = 0;  ///< messages left out
  std::size_t chars = 0;    ///< the size sent
};

/// The messages a request carries (see above). `head` is how many leading messages are always
/// kept (system prompt, task). The conversation itself is not changed.
json::array fit(const json::array& messages, std::size_t head, const ContextBudget& budget,
                FitReport* report = nullptr);

}  // namespace hearth::agent
