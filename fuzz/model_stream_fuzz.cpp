// A model server's answer as the agent loops read it: the bytes as a chat.completion body, and
// as a server-sent event stream of chat.completion.chunk events accumulated into one reply
// within a small limit; then what the reply means (agent/interpret.hpp: calls in the text,
// reasoning, JSON answers) and the same conversation as plain chat. The accumulated answer never
// holds more than the limit, and a stream that fails stops there.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "agent/interpret.hpp"
#include "agent/reply.hpp"
#include "httpclient/sse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> tools{"execute_script", "attempt_completion"};
  if (auto plain = hearth::agent::parse_completion(bytes); plain.ok()) {
    (void)hearth::agent::interpret(plain.value(), tools);
  }
  // The bytes as a model's text: every reader of it must hold.
  hearth::agent::Reply as_text;
  as_text.content = std::string(bytes);
  const auto meant = hearth::agent::interpret(as_text, tools);
  for (const auto& c : meant.calls) (void)hearth::agent::arguments_problem(c.name, c.arguments);
  (void)hearth::agent::json_in_text(bytes);
  hearth::agent::ThinkFilter think;
  for (std::size_t at = 0; at < bytes.size(); at += 3) (void)think.feed(bytes.substr(at, 3));
  hearth::agent::Reply kept;
  kept.content = meant.text;
  kept.tool_calls = meant.calls;
  const hearth::json::array messages{hearth::json::object{{"role", "system"}, {"content", "s"}},
                                     kept.message()};
  (void)hearth::agent::to_prompt_format(messages, hearth::json::array{});

  constexpr std::size_t kLimit = 4096;
  hearth::httpclient::SseParser parser(std::size_t{1} << 16);
  hearth::agent::StreamAccumulator stream(kLimit);
  std::vector<hearth::httpclient::SseEvent> events;
  const std::size_t chunk = 1 + size % 7;
  bool failed = false;
  for (std::size_t at = 0; at < bytes.size() && !failed; at += chunk) {
    events.clear();
    if (!parser.feed(bytes.substr(at, chunk), events)) break;
    for (const auto& e : events) {
      if (e.data == "[DONE]") break;
      if (!stream.add(e.data).ok()) {
        failed = true;
        break;
      }
    }
  }
  if (!failed) {
    const auto reply = stream.take();
    std::size_t held = reply.content.size();
    for (const auto& c : reply.tool_calls) held += c.name.size() + c.arguments.size();
    if (held > kLimit) std::abort();  // an answer past the limit must have failed
    (void)reply.message();
  }
  return 0;
}
