#include "agent/interpret.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include "common/ascii.hpp"
#include "common/random.hpp"

namespace hearth::agent {

namespace {

/// What trimming removes: spaces, tabs and line ends.
constexpr std::string_view kSpace = " \t\r\n";

struct Tag {
  std::string_view open;
  std::string_view close;
};
constexpr std::array<Tag, 2> kThinkTags{{{"<think>", "</think>"}, {"<thinking>", "</thinking>"}}};

std::string trimmed(std::string_view s) {
  return std::string(ascii::trim(s, kSpace));
}

/// The first think tag's `side` (Tag::open or Tag::close) at or after `from`: {position, tag}.
/// Every tag starts with '<', so one walk over the '<'s finds the first of any of them, and reads
/// no further than it: a text with many sections is read once, not once a tag a section.
std::pair<std::size_t, const Tag*> find_first(std::string_view text, std::size_t from,
                                              std::string_view Tag::*side) {
  for (auto at = text.find('<', from); at != std::string_view::npos; at = text.find('<', at + 1)) {
    for (const auto& tag : kThinkTags) {
      if (text.substr(at).starts_with(tag.*side)) return {at, &tag};
    }
  }
  return {std::string_view::npos, nullptr};
}

std::pair<std::size_t, const Tag*> find_open(std::string_view text, std::size_t from) {
  return find_first(text, from, &Tag::open);
}

std::pair<std::size_t, const Tag*> find_close(std::string_view text, std::size_t from) {
  return find_first(text, from, &Tag::close);
}

/// Where the JSON object or array starting at `start` ends (one past its closing bracket), or
/// npos: brackets counted outside strings, escapes honoured.
std::size_t json_end(std::string_view text, std::size_t start) {
  if (start >= text.size() || (text[start] != '{' && text[start] != '[')) {
    return std::string_view::npos;
  }
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

std::optional<json::value> parse(std::string_view text) {
  auto v = json::parse_text(text);
  if (!v.ok()) return std::nullopt;
  return std::move(v).value();
}

std::string string_of(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool known(const std::vector<std::string>& tools, std::string_view name) {
  return std::find(tools.begin(), tools.end(), name) != tools.end();
}

/// A call object as the formats write it: {name, arguments | parameters, id?}, or
/// {type: "function", function: {name, arguments}}.
std::optional<ToolCall> call_of(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr) return std::nullopt;
  if (const auto* f = o->if_contains("function"); f != nullptr && f->is_object()) {
    auto inner = call_of(*f);
    if (inner && inner->id.empty()) inner->id = string_of(*o, "id");
    return inner;
  }
  ToolCall call;
  call.name = string_of(*o, "name");
  if (call.name.empty()) return std::nullopt;
  call.id = string_of(*o, "id");
  const json::value* args = o->if_contains("arguments");
  if (args == nullptr) args = o->if_contains("parameters");
  if (args == nullptr || args->is_null()) {
    call.arguments = "{}";
  } else if (args->is_string()) {
    call.arguments = std::string(args->get_string());
  } else {
    call.arguments = json::serialize(*args);
  }
  return call;
}

/// A call that markup announced but whose JSON could not be read.
ToolCall unreadable(std::string_view what, std::string_view text) {
  ToolCall call;
  std::string shown(text.substr(0, 300));
  call.problem = "the tool call in " + std::string(what) + " could not be read as " +
                 "{\"name\": ..., \"arguments\": {...}}: " + shown;
  return call;
}

/// The JSON value at the start of `text` (after spaces): {value, length consumed}.
std::optional<std::pair<json::value, std::size_t>> leading_json(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size() && ascii::is_space(text[start])) ++start;
  const std::size_t end = json_end(text, start);
  if (end == std::string_view::npos) return std::nullopt;
  auto v = parse(text.substr(start, end - start));
  if (!v) return std::nullopt;
  return std::pair{std::move(*v), end};
}

/// Appends the calls of `v` (a call object or an array of them) to `out`; false when `v` is
/// neither.
bool add_calls(const json::value& v, std::vector<ToolCall>& out) {
  if (auto call = call_of(v)) {
    out.push_back(std::move(*call));
    return true;
  }
  const auto* a = v.if_array();
  if (a == nullptr || a->empty()) return false;
  std::vector<ToolCall> calls;
  for (const auto& e : *a) {
    auto call = call_of(e);
    if (!call) return false;
    calls.push_back(std::move(*call));
  }
  for (auto& c : calls) out.push_back(std::move(c));
  return true;
}

/// A Python literal as Llama's "pythonic" calls write arguments: strings ('..' or ".."), numbers,
/// True/False/None, lists, dicts with string keys. `pos` moves past it. Nested no deeper than
/// JSON text is read (json::ParseLimits::max_depth): a model's text must not exhaust the stack.
std::optional<json::value> python_literal(std::string_view t, std::size_t& pos,
                                          std::size_t depth = 0);

void skip_space(std::string_view t, std::size_t& pos) {
  while (pos < t.size() && ascii::is_space(t[pos])) ++pos;
}

std::optional<std::string> python_string(std::string_view t, std::size_t& pos) {
  const char quote = t[pos++];
  std::string out;
  while (pos < t.size() && t[pos] != quote) {
    char c = t[pos++];
    if (c == '\\' && pos < t.size()) {
      const char e = t[pos++];
      switch (e) {
        case 'n':
          c = '\n';
          break;
        case 't':
          c = '\t';
          break;
        case 'r':
          c = '\r';
          break;
        default:
          c = e;
      }
    }
    out += c;
  }
  if (pos >= t.size()) return std::nullopt;
  ++pos;
  return out;
}

std::optional<json::value> python_literal(std::string_view t, std::size_t& pos, std::size_t depth) {
  if (depth >= json::ParseLimits{}.max_depth) return std::nullopt;
  skip_space(t, pos);
  if (pos >= t.size()) return std::nullopt;
  const char c = t[pos];
  if (c == '\'' || c == '"') {
    auto text = python_string(t, pos);
    if (!text) return std::nullopt;
    return json::value(json::string(*text));
  }
  if (c == '[' || c == '(') {
    const char close = c == '[' ? ']' : ')';
    ++pos;
    json::array out;
    skip_space(t, pos);
    while (pos < t.size() && t[pos] != close) {
      auto v = python_literal(t, pos, depth + 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
      skip_space(t, pos);
      if (pos < t.size() && t[pos] == ',') ++pos;
      skip_space(t, pos);
    }
    if (pos >= t.size()) return std::nullopt;
    ++pos;
    return json::value(std::move(out));
  }
  if (c == '{') {
    ++pos;
    json::object out;
    skip_space(t, pos);
    while (pos < t.size() && t[pos] != '}') {
      auto key = python_literal(t, pos, depth + 1);
      if (!key || !key->is_string()) return std::nullopt;
      skip_space(t, pos);
      if (pos >= t.size() || t[pos] != ':') return std::nullopt;
      ++pos;
      auto v = python_literal(t, pos, depth + 1);
      if (!v) return std::nullopt;
      out[key->get_string()] = std::move(*v);
      skip_space(t, pos);
      if (pos < t.size() && t[pos] == ',') ++pos;
      skip_space(t, pos);
    }
    if (pos >= t.size()) return std::nullopt;
    ++pos;
    return json::value(std::move(out));
  }
  std::size_t end = pos;
  while (end < t.size() && (ascii::is_alnum(t[end]) || t[end] == '.' || t[end] == '-' ||
                            t[end] == '+' || t[end] == '_')) {
    ++end;
  }
  const std::string_view word = t.substr(pos, end - pos);
  pos = end;
  if (word == "True" || word == "true") return json::value(true);
  if (word == "False" || word == "false") return json::value(false);
  if (word == "None" || word == "null") return json::value(nullptr);
  if (word.empty()) return std::nullopt;
  return parse(word);  // a number
}

/// Llama 3.2 / 4 "pythonic" calls: the whole text is [name(key=value, ...), ...], every name an
/// offered tool.
bool pythonic(std::string& text, const std::vector<std::string>& tools,
              std::vector<ToolCall>& calls) {
  const std::string_view t = ascii::trim(text, kSpace);
  if (t.size() < 4 || t.front() != '[' || t.back() != ']') return false;
  std::vector<ToolCall> found;
  std::size_t pos = 1;
  while (true) {
    skip_space(t, pos);
    std::size_t end = pos;
    while (end < t.size() &&
           (ascii::is_alnum(t[end]) || t[end] == '_' || t[end] == '-' || t[end] == '.')) {
      ++end;
    }
    if (end == pos || end >= t.size() || t[end] != '(') return false;
    ToolCall call;
    call.name = std::string(t.substr(pos, end - pos));
    if (!known(tools, call.name)) return false;
    pos = end + 1;
    json::object args;
    skip_space(t, pos);
    while (pos < t.size() && t[pos] != ')') {
      std::size_t key_end = pos;
      while (key_end < t.size() && (ascii::is_alnum(t[key_end]) || t[key_end] == '_')) ++key_end;
      if (key_end == pos) return false;
      const std::string key(t.substr(pos, key_end - pos));
      pos = key_end;
      skip_space(t, pos);
      if (pos >= t.size() || t[pos] != '=') return false;
      ++pos;
      auto v = python_literal(t, pos);
      if (!v) return false;
      args[key] = std::move(*v);
      skip_space(t, pos);
      if (pos < t.size() && t[pos] == ',') ++pos;
      skip_space(t, pos);
    }
    if (pos >= t.size()) return false;
    ++pos;  // ')'
    call.arguments = json::serialize(args);
    found.push_back(std::move(call));
    skip_space(t, pos);
    if (pos < t.size() && t[pos] == ',') {
      ++pos;
      continue;
    }
    if (pos == t.size() - 1) break;  // the closing ']'
    return false;
  }
  for (auto& c : found) calls.push_back(std::move(c));
  text.clear();
  return true;
}

/// Qwen3-Coder's XML form inside <tool_call>: <function=NAME><parameter=KEY>VALUE</parameter>...
std::optional<ToolCall> qwen_xml(std::string_view inner) {
  static constexpr std::string_view kFunction = "<function=";
  static constexpr std::string_view kParameter = "<parameter=";
  static constexpr std::string_view kParameterEnd = "</parameter>";
  const auto f = inner.find(kFunction);
  if (f == std::string_view::npos) return std::nullopt;
  const auto name_end = inner.find('>', f + kFunction.size());
  if (name_end == std::string_view::npos) return std::nullopt;
  ToolCall call;
  call.name = trimmed(inner.substr(f + kFunction.size(), name_end - f - kFunction.size()));
  json::object args;
  std::size_t pos = name_end + 1;
  while (true) {
    const auto p = inner.find(kParameter, pos);
    if (p == std::string_view::npos) break;
    const auto key_end = inner.find('>', p + kParameter.size());
    if (key_end == std::string_view::npos) return std::nullopt;
    const std::string key =
        trimmed(inner.substr(p + kParameter.size(), key_end - p - kParameter.size()));
    const auto end = inner.find(kParameterEnd, key_end + 1);
    const std::string_view raw = inner.substr(
        key_end + 1, end == std::string_view::npos ? std::string_view::npos : end - key_end - 1);
    // A value is JSON when it reads as JSON (numbers, objects); otherwise it is the text.
    std::string value_text = trimmed(raw);
    auto v = parse(value_text);
    args[key] = v ? std::move(*v) : json::value(json::string(value_text));
    if (end == std::string_view::npos) break;
    pos = end + kParameterEnd.size();
  }
  call.arguments = json::serialize(args);
  return call;
}

/// An id as every server takes it: nine letters and digits (Mistral's templates insist).
std::string new_call_id() {
  static constexpr std::string_view kAlphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::array<unsigned char, 9> bytes{};
  random_bytes(bytes.data(), bytes.size());
  std::string id;
  for (unsigned char b : bytes) id += kAlphabet[b % kAlphabet.size()];
  return id;
}

/// Takes every `open`...`close` section out of `text` (the last may be unclosed: it runs to the
/// end), giving each one's body to `each`; what is outside the sections stays. False (and `text`
/// untouched) when there is none.
bool take_sections(std::string& text, std::string_view open, std::string_view close,
                   const std::function<void(std::string_view body)>& each) {
  if (text.find(open) == std::string::npos) return false;
  std::string rest;
  std::size_t pos = 0;
  while (true) {
    const auto at = text.find(open, pos);
    if (at == std::string::npos) {
      rest += text.substr(pos);
      break;
    }
    rest += text.substr(pos, at - pos);
    const auto body = at + open.size();
    const auto end = text.find(close, body);
    each(std::string_view(text).substr(body,
                                       end == std::string::npos ? std::string::npos : end - body));
    if (end == std::string::npos) break;
    pos = end + close.size();
  }
  text = rest;
  return true;
}

/// Hermes / Qwen: <tool_call>{...}</tool_call>, as often as it comes (Qwen3-Coder's XML form
/// inside the same tags).
bool hermes(std::string& text, std::vector<ToolCall>& calls) {
  return take_sections(text, "<tool_call>", "</tool_call>", [&calls](std::string_view inner) {
    auto parsed = leading_json(inner);
    if (parsed && add_calls(parsed->first, calls)) return;
    if (auto xml = qwen_xml(inner)) {
      calls.push_back(std::move(*xml));
    } else {
      calls.push_back(unreadable("<tool_call>", inner));
    }
  });
}

/// Mistral: [TOOL_CALLS][{...}, ...] or [TOOL_CALLS]name[ARGS]{...}, possibly repeated.
bool mistral(std::string& text, std::vector<ToolCall>& calls) {
  static constexpr std::string_view kMark = "[TOOL_CALLS]";
  static constexpr std::string_view kArgs = "[ARGS]";
  const auto first = text.find(kMark);
  if (first == std::string::npos) return false;
  std::string rest = text.substr(0, first);
  std::string_view tail = std::string_view(text).substr(first);
  while (!tail.empty()) {
    if (!tail.starts_with(kMark)) {
      // Text after the calls.
      const auto next = tail.find(kMark);
      rest += std::string(tail.substr(0, next));
      if (next == std::string_view::npos) break;
      tail.remove_prefix(next);
      continue;
    }
    tail.remove_prefix(kMark.size());
    std::size_t skip = 0;
    while (skip < tail.size() && ascii::is_space(tail[skip])) ++skip;
    if (skip < tail.size() && (tail[skip] == '[' || tail[skip] == '{')) {
      auto parsed = leading_json(tail);
      if (!parsed || !add_calls(parsed->first, calls)) {
        calls.push_back(unreadable("[TOOL_CALLS]", tail));
        break;
      }
      tail.remove_prefix(parsed->second);
      continue;
    }
    const auto args = tail.find(kArgs);
    if (args == std::string_view::npos) {
      calls.push_back(unreadable("[TOOL_CALLS]", tail));
      break;
    }
    ToolCall call;
    call.name = trimmed(tail.substr(0, args));
    tail.remove_prefix(args + kArgs.size());
    auto parsed = leading_json(tail);
    if (!parsed) {
      // Arguments that do not parse are still this tool's: the loop says what is wrong.
      const auto next = tail.find(kMark);
      call.arguments = trimmed(tail.substr(0, next));
      calls.push_back(std::move(call));
      if (next == std::string_view::npos) break;
      tail.remove_prefix(next);
      continue;
    }
    call.arguments = json::serialize(parsed->first);
    calls.push_back(std::move(call));
    tail.remove_prefix(parsed->second);
  }
  text = rest;
  return true;
}

/// Llama 3.1's <function=name>{...}</function>.
bool function_tags(std::string& text, std::vector<ToolCall>& calls) {
  return take_sections(text, "<function=", "</function>", [&calls](std::string_view inner) {
    const auto name_end = inner.find('>');
    if (name_end == std::string_view::npos) {
      calls.push_back(unreadable("<function=...>", inner));
      return;
    }
    ToolCall call;
    call.name = trimmed(inner.substr(0, name_end));
    call.arguments = trimmed(inner.substr(name_end + 1));
    if (call.arguments.empty()) call.arguments = "{}";
    calls.push_back(std::move(call));
  });
}

/// Llama 3.x without markup: the whole text (after <|python_tag|>, or in a fence) is a call
/// object naming an offered tool, a list of them, or several separated by ';'.
bool bare_json(std::string& text, const std::vector<std::string>& tools,
               std::vector<ToolCall>& calls, bool tagged) {
  std::string_view body = ascii::trim(text, kSpace);
  if (body.starts_with("```")) {
    auto v = json_in_text(body);
    if (!v) return false;
    std::vector<ToolCall> found;
    if (!add_calls(*v, found)) return false;
    for (const auto& c : found) {
      if (!known(tools, c.name)) return false;
    }
    for (auto& c : found) calls.push_back(std::move(c));
    text.clear();
    return true;
  }
  std::vector<ToolCall> found;
  while (!body.empty()) {
    auto parsed = leading_json(body);
    if (!parsed || !add_calls(parsed->first, found)) return false;
    body = ascii::trim(body.substr(parsed->second), kSpace);
    if (!body.empty() && body.front() == ';') body = ascii::trim(body.substr(1), kSpace);
  }
  if (found.empty()) return false;
  if (!tagged) {
    for (const auto& c : found) {
      if (!known(tools, c.name)) return false;  // an answer that happens to be JSON
    }
  }
  for (auto& c : found) calls.push_back(std::move(c));
  text.clear();
  return true;
}

/// llama.cpp's "Generic" format when its parsing is off: the whole text is
/// {"tool_calls": [{name, arguments, id?}, ...]}, {"tool_call": {...}} or {"response": TEXT}.
bool generic(std::string& text, std::vector<ToolCall>& calls) {
  auto v = parse(ascii::trim(text, kSpace));
  const auto* o = v ? v->if_object() : nullptr;
  if (o == nullptr || o->size() != 1) return false;
  if (const auto* many = o->if_contains("tool_calls"); many != nullptr && many->is_array()) {
    std::vector<ToolCall> found;
    if (!add_calls(*many, found)) return false;
    for (auto& c : found) calls.push_back(std::move(c));
    text.clear();
    return true;
  }
  if (const auto* one = o->if_contains("tool_call")) {
    std::vector<ToolCall> found;
    if (!add_calls(*one, found)) return false;
    for (auto& c : found) calls.push_back(std::move(c));
    text.clear();
    return true;
  }
  if (const auto* response = o->if_contains("response");
      response != nullptr && response->is_string()) {
    text = std::string(response->get_string());
    return false;  // an answer, in the generic format's wrapper
  }
  return false;
}

}  // namespace

std::pair<std::string, std::string> split_reasoning(std::string_view text) {
  std::string answer;
  std::string reasoning;
  std::size_t pos = 0;
  // A closing tag before any opening one: the chat template opened the section itself.
  const auto first_open = find_open(text, 0);
  const auto first_close = find_close(text, 0);
  if (first_close.second != nullptr && first_close.first < first_open.first) {
    reasoning += text.substr(0, first_close.first);
    pos = first_close.first + first_close.second->close.size();
  }
  while (pos <= text.size()) {
    const auto open = find_open(text, pos);
    if (open.second == nullptr) {
      answer += text.substr(pos);
      break;
    }
    answer += text.substr(pos, open.first - pos);
    const std::size_t body = open.first + open.second->open.size();
    const auto close = text.find(open.second->close, body);
    if (close == std::string_view::npos) {  // cut short while thinking: the rest is thought
      if (!reasoning.empty()) reasoning += "\n";
      reasoning += text.substr(body);
      break;
    }
    if (!reasoning.empty()) reasoning += "\n";
    reasoning += text.substr(body, close - body);
    pos = close + open.second->close.size();
  }
  return {trimmed(answer), trimmed(reasoning)};
}

std::optional<json::value> json_in_text(std::string_view text) {
  const std::string_view t = ascii::trim(text, kSpace);
  if (t.empty()) return std::nullopt;
  if (auto whole = parse(t)) return whole;
  // A fenced block: ```json ... ``` or ``` ... ```.
  if (const auto fence = t.find("```"); fence != std::string_view::npos) {
    auto start = t.find('\n', fence);
    if (start != std::string_view::npos) {
      const auto end = t.find("```", start);
      if (end != std::string_view::npos) {
        if (auto v = parse(ascii::trim(t.substr(start + 1, end - start - 1), kSpace))) return v;
      }
    }
  }
  // The outermost object or array in the text.
  const auto brace = t.find_first_of("{[");
  if (brace == std::string_view::npos) return std::nullopt;
  const auto end = json_end(t, brace);
  if (end == std::string_view::npos) return std::nullopt;
  return parse(t.substr(brace, end - brace));
}

std::string arguments_problem(std::string_view tool, std::string_view arguments) {
  if (ascii::trim(arguments, kSpace).empty()) return {};
  auto v = json::parse_text(arguments);
  const std::string shown = arguments.size() > 300 ? std::string(arguments.substr(0, 300)) + "..."
                                                   : std::string(arguments);
  if (!v.ok()) {
    return "the arguments of " + std::string(tool) + " are not valid JSON (" + v.error().message +
           "): " + shown + ". Send them again as one JSON object, with strings quoted and escaped.";
  }
  if (!v->is_object()) {
    return "the arguments of " + std::string(tool) + " must be a JSON object, not " +
           std::string(json::kind_name(*v)) + ": " + shown;
  }
  return {};
}

Interpreted interpret(const Reply& reply, const std::vector<std::string>& tools) {
  Interpreted out;
  auto [answer, thought] = split_reasoning(reply.content);
  out.reasoning = trimmed(reply.reasoning);
  if (!thought.empty()) {
    if (!out.reasoning.empty()) out.reasoning += "\n";
    out.reasoning += thought;
  }
  std::string text = std::move(answer);
  if (!reply.tool_calls.empty()) {
    out.calls = reply.tool_calls;
    out.format = "tool_calls";
  } else if (hermes(text, out.calls)) {
    out.format = "hermes";
  } else if (mistral(text, out.calls)) {
    out.format = "mistral";
  } else if (function_tags(text, out.calls)) {
    out.format = "function-tag";
  } else if (const auto tag = text.find("<|python_tag|>"); tag != std::string::npos) {
    std::string body = text.substr(tag + std::string_view("<|python_tag|>").size());
    if (bare_json(body, tools, out.calls, true)) {
      text = text.substr(0, tag);
      out.format = "llama";
    } else {
      out.calls.push_back(unreadable("<|python_tag|>", body));
      text = text.substr(0, tag);
      out.format = "llama";
    }
  } else if (generic(text, out.calls)) {
    out.format = "generic";
  } else if (pythonic(text, tools, out.calls)) {
    out.format = "pythonic";
  } else if (bare_json(text, tools, out.calls, false)) {
    out.format = "json";
  }
  for (auto& c : out.calls) {
    if (c.id.empty()) c.id = new_call_id();
    if (c.arguments.empty()) c.arguments = "{}";
  }
  out.text = trimmed(text);
  return out;
}

namespace {

std::string tool_instructions(const json::array& tools) {
  std::string out =
      "\n\n# Tools\n\nYou have these tools. To call one, answer with the call alone, in this "
      "form (one block per call):\n<tool_call>\n{\"name\": \"TOOL NAME\", \"arguments\": "
      "{ARGUMENTS AS A JSON OBJECT}}\n</tool_call>\nEach result comes back to you in "
      "<tool_response>. When you need no tool, answer in plain text.\n";
  for (const auto& t : tools) {
    const auto* f = t.is_object() ? t.get_object().if_contains("function") : nullptr;
    if (f == nullptr || !f->is_object()) continue;
    const auto& fo = f->get_object();
    out += "\n## " + string_of(fo, "name") + "\n" + string_of(fo, "description") + "\n";
    if (const auto* p = fo.if_contains("parameters")) {
      out += "Arguments (JSON Schema): " + json::serialize(*p) + "\n";
    }
  }
  return out;
}

std::string call_block(const json::value& call) {
  const auto* f = call.is_object() ? call.get_object().if_contains("function") : nullptr;
  if (f == nullptr || !f->is_object()) return {};
  const auto& fo = f->get_object();
  json::value args = json::object();
  const std::string text = string_of(fo, "arguments");
  if (auto parsed = parse(text)) {
    args = std::move(*parsed);
  } else if (!text.empty()) {
    args = json::string(text);
  }
  return "<tool_call>\n" +
         json::serialize(json::object{{"name", string_of(fo, "name")}, {"arguments", args}}) +
         "\n</tool_call>";
}

}  // namespace

json::array to_prompt_format(const json::array& messages, const json::array& tools) {
  json::array out;
  bool described = false;
  auto append_user = [&out](const std::string& text) {
    if (!out.empty() && out.back().is_object() &&
        string_of(out.back().get_object(), "role") == "user") {
      auto& last = out.back().get_object();
      last["content"] = string_of(last, "content") + "\n\n" + text;
      return;
    }
    out.push_back(json::object{{"role", "user"}, {"content", text}});
  };
  for (const auto& m : messages) {
    if (!m.is_object()) continue;
    const auto& o = m.get_object();
    const std::string role = string_of(o, "role");
    if (role == "system") {
      out.push_back(json::object{
          {"role", "system"},
          {"content", string_of(o, "content") + (described ? "" : tool_instructions(tools))}});
      described = true;
    } else if (role == "assistant") {
      std::string text = string_of(o, "content");
      if (const auto* calls = o.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
        for (const auto& c : calls->get_array()) {
          const std::string block = call_block(c);
          if (!block.empty()) text += (text.empty() ? "" : "\n") + block;
        }
      }
      out.push_back(json::object{{"role", "assistant"}, {"content", text}});
    } else if (role == "tool") {
      append_user("<tool_response>\n" + string_of(o, "content") + "\n</tool_response>");
    } else {
      append_user(string_of(o, "content"));
    }
  }
  if (!described) {
    out.insert(out.begin(),
               json::object{{"role", "system"}, {"content", tool_instructions(tools).substr(2)}});
  }
  return out;
}

std::string ThinkFilter::feed(std::string_view delta) {
  pending_ += delta;
  std::string out;
  std::size_t pos = 0;  // what is before it is handled
  while (true) {
    const auto tag = inside_ ? find_close(pending_, pos) : find_open(pending_, pos);
    if (tag.second == nullptr) break;
    if (!inside_) out.append(pending_, pos, tag.first - pos);
    pos = tag.first + (inside_ ? tag.second->close : tag.second->open).size();
    inside_ = !inside_;
  }
  // No whole tag after `pos`: keep back only what could still become one.
  std::size_t keep = 0;
  if (const auto lt = pending_.rfind('<'); lt != std::string::npos && lt >= pos) {
    const std::string_view tail = std::string_view(pending_).substr(lt);
    for (const auto& tag : kThinkTags) {
      if (tag.open.starts_with(tail) || tag.close.starts_with(tail)) keep = tail.size();
    }
  }
  const std::size_t end = pending_.size() - keep;
  if (!inside_) out.append(pending_, pos, end - pos);
  pending_.erase(0, end);
  return out;
}

}  // namespace hearth::agent
