#include "agent/context.hpp"

#include <vector>

namespace hearth::agent {

namespace {

/// A message's fixed cost beyond its text (role, ids, JSON punctuation).
constexpr std::size_t kOverhead = 16;
/// Texts this short are not worth a note.
constexpr std::size_t kElideOver = 240;

bool continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

/// The largest prefix length <= n that does not split a UTF-8 sequence.
std::size_t prefix_boundary(std::string_view text, std::size_t n) {
  if (n >= text.size()) return text.size();
  while (n > 0 && continuation(static_cast<unsigned char>(text[n]))) --n;
  return n;
}

/// The smallest suffix start >= n that does not split a UTF-8 sequence.
std::size_t suffix_boundary(std::string_view text, std::size_t n) {
  while (n < text.size() && continuation(static_cast<unsigned char>(text[n]))) ++n;
  return n;
}

std::string_view role_of(const json::object& m) {
  const auto* r = m.if_contains("role");
  return r != nullptr && r->is_string() ? std::string_view(r->get_string()) : std::string_view();
}

std::size_t text_size(const json::value* v) {
  return v != nullptr && v->is_string() ? v->get_string().size() : 0;
}

/// The message with its texts replaced by notes (tool results, assistant texts, tool-call
/// arguments; user and system messages are kept). Returns false when nothing was worth eliding.
bool elide(json::object& m) {
  bool changed = false;
  const std::string_view role = role_of(m);
  if (role == "tool" || role == "assistant") {
    if (const std::size_t n = text_size(m.if_contains("content")); n > kElideOver) {
      m["content"] = role == "tool" ? "[an earlier tool result of " + std::to_string(n) +
                                          " characters was elided to fit the context; later "
                                          "results show the current state]"
                                    : "[" + std::to_string(n) +
                                          " characters of an earlier answer were elided to fit "
                                          "the context]";
      changed = true;
    }
  }
  if (auto* calls = m.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (auto& c : calls->get_array()) {
      auto* f = c.is_object() ? c.get_object().if_contains("function") : nullptr;
      if (f == nullptr || !f->is_object()) continue;
      auto& fo = f->get_object();
      if (const std::size_t n = text_size(fo.if_contains("arguments")); n > kElideOver) {
        // Still a JSON object: some servers parse the arguments of the history again.
        fo["arguments"] =
            json::serialize(json::object{{"elided", std::to_string(n) + " characters"}});
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace

std::string cap_text(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  const std::string note_template =
      "\n[... " + std::to_string(text.size()) + " characters elided ...]\n";
  const std::size_t room = max > note_template.size() ? max - note_template.size() : 0;
  const std::size_t head = prefix_boundary(text, room * 3 / 4);
  const std::size_t tail_start = suffix_boundary(text, text.size() - (room - room * 3 / 4));
  const std::size_t left_out = tail_start - head;
  std::string out(text.substr(0, head));
  out += "\n[... " + std::to_string(left_out) + " characters elided ...]\n";
  out += text.substr(tail_start);
  return out;
}

json::object kept_message(json::object message, std::size_t max) {
  if (auto* c = message.if_contains("content"); c != nullptr && c->is_string()) {
    if (c->get_string().size() > max) *c = json::string(cap_text(c->get_string(), max));
  }
  if (auto* calls = message.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (auto& call : calls->get_array()) {
      auto* f = call.is_object() ? call.get_object().if_contains("function") : nullptr;
      if (f == nullptr || !f->is_object()) continue;
      auto* args = f->get_object().if_contains("arguments");
      if (args != nullptr && args->is_string() && args->get_string().size() > max) {
        *args = json::string(json::serialize(
            json::object{{"elided", std::to_string(args->get_string().size()) + " characters"}}));
      } else if (args != nullptr && args->is_string()) {
        // Arguments that are not a JSON object are kept as one: servers parse the history's
        // arguments again (Ollama refuses the whole request otherwise).
        auto parsed = json::parse_text(args->get_string());
        if (!parsed.ok() || !parsed->is_object()) {
          *args =
              json::string(json::serialize(json::object{{"invalidArguments", args->get_string()}}));
        }
      }
    }
  }
  return message;
}

std::size_t message_size(const json::value& message) {
  if (!message.is_object()) return kOverhead;
  const auto& m = message.get_object();
  std::size_t n = kOverhead + text_size(m.if_contains("content"));
  if (const auto* calls = m.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (const auto& c : calls->get_array()) {
      const auto* f = c.is_object() ? c.get_object().if_contains("function") : nullptr;
      if (f == nullptr || !f->is_object()) continue;
      n += kOverhead + text_size(f->get_object().if_contains("name")) +
           text_size(f->get_object().if_contains("arguments"));
    }
  }
  return n;
}

json::array fit(const json::array& messages, std::size_t head, const ContextBudget& budget,
                FitReport* report) {
  json::array out = messages;
  std::size_t total = 0;
  for (const auto& m : out) total += message_size(m);
  FitReport local;
  FitReport& r = report != nullptr ? *report : local;
  r = FitReport{};
  head = std::min(head, out.size());
  // The latest exchange: from the last assistant message on (everything after the head when
  // there is none).
  std::size_t tail = out.size();
  for (std::size_t i = out.size(); i > head; --i) {
    if (out[i - 1].is_object() && role_of(out[i - 1].get_object()) == "assistant") {
      tail = i - 1;
      break;
    }
  }

  // Older texts become notes, oldest first.
  for (std::size_t i = head; i < tail && total > budget.max_chars; ++i) {
    if (!out[i].is_object()) continue;
    const std::size_t before = message_size(out[i]);
    if (!elide(out[i].get_object())) continue;
    total = total - before + message_size(out[i]);
    ++r.elided;
  }

  // Then whole exchanges, oldest first: a cut falls only before an assistant message (or at the
  // tail), so that no tool result loses its call.
  std::size_t cut = head;
  while (total > budget.max_chars && cut < tail) {
    std::size_t next = cut + 1;
    while (next < tail &&
           !(out[next].is_object() && role_of(out[next].get_object()) == "assistant")) {
      ++next;
    }
    for (std::size_t i = cut; i < next; ++i) total -= message_size(out[i]);
    r.dropped += next - cut;
    cut = next;
  }
  if (r.dropped > 0) {
    json::array kept;
    kept.reserve(out.size() - r.dropped);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i < head || i >= cut) kept.push_back(std::move(out[i]));
    }
    out = std::move(kept);
    // Said in the last message of the head (the task) rather than in a message of its own:
    // some chat templates refuse two user messages in a row.
    const std::string note = "\n\n[" + std::to_string(r.dropped) +
                             " earlier messages of this conversation were left out to fit the "
                             "context.]";
    if (head > 0 && out[head - 1].is_object()) {
      auto& last = out[head - 1].get_object();
      if (auto* c = last.if_contains("content"); c != nullptr && c->is_string()) {
        *c = json::string(std::string(c->get_string()) + note);
        total += note.size();
      }
    }
  }
  r.chars = total;
  return out;
}

}  // namespace hearth::agent
