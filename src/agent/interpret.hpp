#pragma once
/// What a model's reply means to an agent loop, whatever shape its server gave it
/// (docs/workspace.md, "What the loops accept"). No I/O, so it is fuzzed with the stream parser.
///
/// Servers and models differ: a server that parses tool calls gives them as `tool_calls`; one
/// that does not (or a model that ignores the format) leaves them in the text, as
/// - Hermes / Qwen 2.5:  `<tool_call>{"name": N, "arguments": {...}}</tool_call>` (several),
/// - Mistral:            `[TOOL_CALLS][{"name": N, "arguments": {...}}]` or
/// `[TOOL_CALLS]N[ARGS]{...}`,
/// - Llama 3.1 / 3.2:    `<|python_tag|>{"name": N, "parameters": {...}}`, a bare
///                       `{"name": N, "parameters": {...}}` (or a list of them, or several
///                       separated by `;`), or `<function=N>{...}</function>`,
/// - any model:          the same object in a fenced ```json block.
/// Reasoning comes as `reasoning_content` / `reasoning` (vLLM, DeepSeek, Ollama's `thinking`),
/// or as `<think>...</think>` before the answer (an unclosed one, or a closing tag alone when the
/// template opened it). It is kept apart: never part of the answer, never sent back.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reply.hpp"
#include "json/json.hpp"

namespace hearth::agent {

struct Interpreted {
  std::string text;       ///< the answer: reasoning and tool-call markup taken out, trimmed
  std::string reasoning;  ///< what the model thought, from the fields and the tags
  std::vector<ToolCall> calls;
  /// Where the calls came from: "tool_calls" (the server parsed them), "hermes", "mistral",
  /// "llama", "function-tag", "json", or empty when there are none.
  std::string format;
};

/// `tools`: the names offered. A bare JSON object counts as a call only when it names one of
/// them (an answer that is JSON must stay an answer); explicit markup counts whatever it names,
/// so that the model can be told the tool does not exist. Calls without an id get `call_<n>`.
Interpreted interpret(const Reply& reply, const std::vector<std::string>& tools);

/// `text` without its reasoning tags: {answer, reasoning}.
std::pair<std::string, std::string> split_reasoning(std::string_view text);

/// The JSON value an answer holds: the whole text, or a fenced ```json (or ```) block, or the
/// outermost {...} or [...] of the text; nullopt when none parses.
std::optional<json::value> json_in_text(std::string_view text);

/// Why `arguments` are not a JSON object, for the model: empty when they are.
std::string arguments_problem(std::string_view tool, std::string_view arguments);

/// For servers or models without tool support (docs/workspace.md, "Servers without tools"):
/// the conversation as plain chat. The system message describes the tools and asks for a
/// call as `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in the text (the
/// Hermes form interpret() reads back); an assistant message's calls are written that way into
/// its text; tool results become user messages in `<tool_response>`; consecutive user messages
/// are joined (some chat templates insist that roles alternate).
json::array to_prompt_format(const json::array& messages, const json::array& tools);

/// Streamed text with its `<think>` sections held back: feed it the content deltas as they
/// come; it returns what may be shown as the answer so far (a tag split across deltas is
/// waited for).
class ThinkFilter {
 public:
  std::string feed(std::string_view delta);

 private:
  std::string pending_;  ///< the end of the text that may be the start of a tag
  bool inside_ = false;
};

}  // namespace hearth::agent
