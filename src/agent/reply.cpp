#include "agent/reply.hpp"

namespace hearth::agent {

json::object Reply::message() const {
  json::object m;
  m["role"] = "assistant";
  m["content"] =
      content.empty() && !tool_calls.empty() ? json::value(nullptr) : json::value(content);
  if (!tool_calls.empty()) {
    json::array calls;
    for (const auto& c : tool_calls) {
      calls.push_back(
          json::object{{"id", c.id},
                       {"type", "function"},
                       {"function", json::object{{"name", c.name}, {"arguments", c.arguments}}}});
    }
    m["tool_calls"] = std::move(calls);
  }
  return m;
}

namespace {

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// The reasoning a message or delta carries, under the names servers give it: vLLM and
/// DeepSeek `reasoning_content`, vLLM's newer and OpenRouter's `reasoning`, Ollama's `thinking`.
/// The first one present counts: a server may send the same text under two names.
std::string reasoning_of(const json::object& m) {
  for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
    if (auto text = string_at(m, key); !text.empty()) return text;
  }
  return {};
}

/// Arguments as a server wrote them: JSON text, or (Ollama's native shape) an object.
std::string arguments_of(const json::object& f) {
  const auto* args = f.if_contains("arguments");
  if (args == nullptr || args->is_null()) return {};
  return args->is_string() ? std::string(args->get_string()) : json::serialize(*args);
}

}  // namespace

Error not_a_completion(const std::string& why) {
  return Error::make(ErrorCode::kHandlerError,
                     "the model server's reply is not a chat completion: " + why);
}

Error answer_too_large(std::size_t limit) {
  return Error::make(ErrorCode::kHandlerError,
                     "the model's answer passed the limit of " + std::to_string(limit >> 10) +
                         " KiB; it was stopped there",
                     json::object{{"reason", "answer-too-large"}, {"limitBytes", limit}});
}

Result<Reply> parse_completion(std::string_view body) {
  auto parsed = json::parse_text(body);
  if (!parsed.ok() || !parsed->is_object()) return not_a_completion("not a JSON object");
  const auto& o = parsed->get_object();
  const auto* choices = o.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty() ||
      !choices->get_array()[0].is_object()) {
    return not_a_completion("no choices");
  }
  const auto& choice = choices->get_array()[0].get_object();
  Reply reply;
  reply.finish_reason = string_at(choice, "finish_reason");
  if (const auto* u = o.if_contains("usage")) reply.usage = *u;
  const auto* message = choice.if_contains("message");
  if (message == nullptr || !message->is_object()) {
    return not_a_completion("the choice has no message");
  }
  const auto& m = message->get_object();
  reply.content = string_at(m, "content");
  reply.reasoning = reasoning_of(m);
  if (const auto* calls = m.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (const auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      ToolCall call;
      call.id = string_at(c.get_object(), "id");
      if (const auto* f = c.get_object().if_contains("function"); f != nullptr && f->is_object()) {
        call.name = string_at(f->get_object(), "name");
        call.arguments = arguments_of(f->get_object());
      }
      reply.tool_calls.push_back(std::move(call));
    }
  }
  // The legacy single `function_call` some servers still answer with.
  if (const auto* f = m.if_contains("function_call");
      reply.tool_calls.empty() && f != nullptr && f->is_object()) {
    ToolCall call;
    call.name = string_at(f->get_object(), "name");
    call.arguments = arguments_of(f->get_object());
    if (!call.name.empty()) reply.tool_calls.push_back(std::move(call));
  }
  return reply;
}

Result<std::string> StreamAccumulator::add(std::string_view data) {
  auto parsed = json::parse_text(data);
  if (!parsed.ok() || !parsed->is_object()) {
    return not_a_completion("a stream event is not a JSON object");
  }
  const auto& o = parsed->get_object();
  if (const auto* e = o.if_contains("error")) {
    return Error::make(ErrorCode::kHandlerError,
                       "the model server reported: " + json::serialize(*e));
  }
  if (const auto* u = o.if_contains("usage"); u != nullptr && !u->is_null()) reply_.usage = *u;
  const auto* choices = o.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    return std::string();
  }
  const auto& choice = choices->get_array()[0];
  if (!choice.is_object()) return std::string();
  if (auto reason = string_at(choice.get_object(), "finish_reason"); !reason.empty()) {
    reply_.finish_reason = reason;
  }
  const auto* delta = choice.get_object().if_contains("delta");
  if (delta == nullptr || !delta->is_object()) return std::string();
  const auto& d = delta->get_object();
  std::string text = string_at(d, "content");
  reply_.content += text;
  const std::string thought = reasoning_of(d);
  reply_.reasoning += thought;
  bytes_ += text.size() + thought.size();
  if (const auto* calls = d.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (const auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      const auto& co = c.get_object();
      const std::string id = string_at(co, "id");
      std::size_t index = reply_.tool_calls.size();
      if (const auto* i = co.if_contains("index");
          i != nullptr && i->is_int64() && i->get_int64() >= 0) {
        index = static_cast<std::size_t>(i->get_int64());
        // Some servers number every call 0: another id is another call (or the one that has it).
        if (index < reply_.tool_calls.size() && !id.empty() &&
            !reply_.tool_calls[index].id.empty() && reply_.tool_calls[index].id != id) {
          index = reply_.tool_calls.size();
          for (std::size_t k = 0; k < reply_.tool_calls.size(); ++k) {
            if (reply_.tool_calls[k].id == id) index = k;
          }
        }
      } else if (!reply_.tool_calls.empty() && id.empty()) {
        index = reply_.tool_calls.size() - 1;  // a continuation without an index
      }
      if (index > 64) return not_a_completion("a tool call index past 64");
      if (reply_.tool_calls.size() <= index) reply_.tool_calls.resize(index + 1);
      auto& call = reply_.tool_calls[index];
      if (!id.empty()) call.id = id;
      if (const auto* f = co.if_contains("function"); f != nullptr && f->is_object()) {
        const std::string name = string_at(f->get_object(), "name");
        // The name comes whole in the first delta; a server that repeats it is not appending.
        if (call.name != name) call.name += name;
        const auto* args = f->get_object().if_contains("arguments");
        std::string arguments;
        if (args != nullptr && args->is_string()) {
          arguments = std::string(args->get_string());
          call.arguments += arguments;
        } else if (args != nullptr && args->is_object()) {
          arguments = json::serialize(*args);  // given whole, as an object
          call.arguments = arguments;
        }
        bytes_ += name.size() + arguments.size();
      }
    }
  }
  if (bytes_ > max_bytes_) return answer_too_large(max_bytes_);
  return text;
}

}  // namespace hearth::agent
