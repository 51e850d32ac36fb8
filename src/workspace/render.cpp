#include "workspace/render.hpp"

#include <algorithm>
#include <optional>

namespace hearth::workspace {
namespace {

constexpr std::size_t kWidth = 78;  ///< columns of a text box, borders included
constexpr int kTypeDepth = 4;       ///< nesting a compact type spells out

std::string_view access_word(Access a) {
  switch (a) {
    case Access::kRead:
      return "READ_ONLY";
    case Access::kWrite:
      return "WRITE_ONLY";
    case Access::kReadWrite:
      return "READ_AND_WRITE";
  }
  return "READ_ONLY";
}

/// Pretty JSON (two-space indent, short scalar arrays on one line), stopping once `out` is past
/// `limit` characters (a value that large is cut anyway).
void pretty(const json::value& v, std::size_t indent, std::string& out,
            std::size_t limit = std::string::npos) {
  const std::string pad(indent, ' ');
  if (const auto* o = v.if_object()) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    std::size_t i = 0;
    for (const auto& kv : *o) {
      if (out.size() > limit) return;
      out += pad + "  " + json::serialize(json::value(kv.key())) + ": ";
      pretty(kv.value(), indent + 2, out, limit);
      out += ++i < o->size() ? ",\n" : "\n";
    }
    out += pad + "}";
    return;
  }
  if (const auto* a = v.if_array()) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    // Short arrays of scalars stay on one line.
    const bool scalars =
        a->size() <= 16 && std::all_of(a->begin(), a->end(), [](const json::value& e) {
          return !e.is_object() && !e.is_array();
        });
    if (scalars) {
      std::string line = json::serialize(v);
      if (line.size() + indent <= 60) {
        out += line;
        return;
      }
    }
    out += "[\n";
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (out.size() > limit) return;
      out += pad + "  ";
      pretty((*a)[i], indent + 2, out, limit);
      out += i + 1 < a->size() ? ",\n" : "\n";
    }
    out += pad + "]";
    return;
  }
  out += json::serialize(v);
}

std::string bounds(const json::object& s, std::string_view min_key, std::string_view max_key,
                   std::string_view xmin_key = {}, std::string_view xmax_key = {}) {
  std::vector<std::string> parts;
  if (const auto* m = s.if_contains(min_key); m != nullptr && m->is_number()) {
    parts.push_back("≥" + json::serialize(*m));
  }
  if (!xmin_key.empty()) {
    if (const auto* m = s.if_contains(xmin_key); m != nullptr && m->is_number()) {
      parts.push_back(">" + json::serialize(*m));
    }
  }
  if (const auto* m = s.if_contains(max_key); m != nullptr && m->is_number()) {
    parts.push_back("≤" + json::serialize(*m));
  }
  if (!xmax_key.empty()) {
    if (const auto* m = s.if_contains(xmax_key); m != nullptr && m->is_number()) {
      parts.push_back("<" + json::serialize(*m));
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string type_of(const json::value& schema, const json::object& types, int depth);

std::string joined(const json::array& alternatives, const json::object& types, int depth,
                   std::string_view sep) {
  std::string out;
  for (const auto& a : alternatives) {
    out += (out.empty() ? "" : std::string(sep)) + type_of(a, types, depth);
  }
  return out;
}

std::string type_of(const json::value& schema, const json::object& types, int depth) {
  if (schema.is_bool()) return schema.get_bool() ? "any" : "never";
  if (!schema.is_object()) return "any";
  const auto& s = schema.get_object();
  if (const auto* ref = s.if_contains("$ref"); ref != nullptr && ref->is_string()) {
    std::string_view r = ref->get_string();
    const auto slash = r.rfind('/');
    return std::string(slash == std::string_view::npos ? r : r.substr(slash + 1));
  }
  if (const auto* c = s.if_contains("const")) return json::serialize(*c);
  if (const auto* e = s.if_contains("enum"); e != nullptr && e->is_array()) {
    std::string out;
    for (const auto& v : e->get_array()) out += (out.empty() ? "" : " | ") + json::serialize(v);
    return out;
  }
  for (const char* k : {"anyOf", "oneOf"}) {
    if (const auto* a = s.if_contains(k); a != nullptr && a->is_array()) {
      return joined(a->get_array(), types, depth, " | ");
    }
  }
  if (const auto* a = s.if_contains("allOf"); a != nullptr && a->is_array()) {
    return joined(a->get_array(), types, depth, " & ");
  }
  std::string type;
  if (const auto* t = s.if_contains("type")) {
    if (t->is_string()) {
      type = t->get_string();
    } else if (t->is_array()) {
      std::string out;
      for (const auto& one : t->get_array()) {
        if (!one.is_string()) continue;
        json::object copy = s;
        copy["type"] = one;
        out += (out.empty() ? "" : " | ") + type_of(copy, types, depth);
      }
      return out;
    }
  } else if (s.contains("properties")) {
    type = "object";
  } else if (s.contains("items")) {
    type = "array";
  }
  if (type == "object") {
    const auto* props = s.if_contains("properties");
    if (props == nullptr || !props->is_object() || props->get_object().empty()) {
      if (const auto* ap = s.if_contains("additionalProperties");
          ap != nullptr && ap->is_object()) {
        return "{ [key: string]: " + type_of(*ap, types, depth + 1) + " }";
      }
      return "object";
    }
    if (depth >= kTypeDepth) return "{…}";
    std::vector<std::string> required;
    if (const auto* r = s.if_contains("required"); r != nullptr && r->is_array()) {
      for (const auto& n : r->get_array()) {
        if (n.is_string()) required.emplace_back(n.get_string());
      }
    }
    std::string out = "{ ";
    std::size_t i = 0;
    for (const auto& kv : props->get_object()) {
      const bool req =
          std::find(required.begin(), required.end(), std::string(kv.key())) != required.end();
      out += std::string(kv.key()) + (req ? ": " : "?: ") + type_of(kv.value(), types, depth + 1);
      if (++i < props->get_object().size()) out += ", ";
    }
    return out + " }";
  }
  if (type == "array") {
    std::string item = "any";
    if (const auto* items = s.if_contains("items")) item = type_of(*items, types, depth + 1);
    if (item.find(' ') != std::string::npos && !item.starts_with("{")) item = "(" + item + ")";
    std::string out = item + "[]";
    const std::string b = bounds(s, "minItems", "maxItems");
    return b.empty() ? out : out + " (" + b + " items)";
  }
  if (type == "string") {
    std::vector<std::string> notes;
    const std::string b = bounds(s, "minLength", "maxLength");
    if (!b.empty()) notes.push_back(b);
    if (const auto* f = s.if_contains("format"); f != nullptr && f->is_string()) {
      notes.emplace_back(f->get_string());
    }
    if (const auto* p = s.if_contains("pattern"); p != nullptr && p->is_string()) {
      notes.push_back("/" + std::string(p->get_string()) + "/");
    }
    std::string out = "string";
    if (!notes.empty()) {
      out += " (";
      for (std::size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "") + notes[i];
      out += ")";
    }
    return out;
  }
  if (type == "number" || type == "integer") {
    const std::string b = bounds(s, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum");
    return b.empty() ? type : type + " (" + b + ")";
  }
  if (type.empty()) return "any";
  return type;
}

/// UTF-8 code points of `text` with their byte offsets.
std::size_t code_point_width(char32_t c) {
  // East Asian wide and fullwidth ranges (enough for CJK, Hangul, fullwidth forms, emoji).
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) ||
      (c >= 0x3041 && c <= 0x33FF) || (c >= 0x3400 && c <= 0x4DBF) ||
      (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD)) {
    return 2;
  }
  if (c == 0x200B || (c >= 0x0300 && c <= 0x036F)) return 0;  // zero width, combining marks
  return 1;
}

/// Decodes the code point at `i` (advancing it); malformed bytes count as one column each.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t len = b < 0x80           ? 1
                    : (b >> 5) == 0x6  ? 2
                    : (b >> 4) == 0xE  ? 3
                    : (b >> 3) == 0x1E ? 4
                                       : 1;
  if (i + len > s.size()) len = 1;
  char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  i += len;
  return c;
}

/// Splits `text` into lines of at most `width` columns, at spaces where it can.
std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    std::string_view para =
        text.substr(start, nl == std::string_view::npos ? text.size() - start : nl - start);
    // Wrap one paragraph.
    while (display_width(para) > width) {
      std::size_t i = 0;
      std::size_t cols = 0;
      std::size_t last_space = std::string_view::npos;
      while (i < para.size()) {
        std::size_t j = i;
        const char32_t c = next_code_point(para, j);
        const std::size_t w = code_point_width(c);
        if (cols + w > width) break;
        if (c == ' ') last_space = i;
        cols += w;
        i = j;
      }
      const std::size_t cut =
          last_space != std::string_view::npos && last_space > 0 ? last_space : i;
      lines.emplace_back(para.substr(0, cut));
      para = para.substr(cut);
      if (!para.empty() && para.front() == ' ') para.remove_prefix(1);
      if (cut == 0) break;
    }
    lines.emplace_back(para);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

/// Boxes of kWidth columns.
class Box {
 public:
  explicit Box(std::string& out) : out_(out) {}
  void top(std::string_view title = {}) {
    if (title.empty()) {
      out_ += "┌" + repeat("─", kWidth - 2) + "┐\n";
      return;
    }
    std::string head = "─ " + std::string(title) + " ";
    const std::size_t w = display_width(head);
    out_ += "┌" + head + repeat("─", w + 2 < kWidth ? kWidth - 2 - w : 0) + "┐\n";
  }
  void rule() { out_ += "├" + repeat("─", kWidth - 2) + "┤\n"; }
  void bottom() { out_ += "└" + repeat("─", kWidth - 2) + "┘\n"; }
  /// `label` (padded to a column) then `text`, wrapped under itself.
  void field(std::string_view label, std::string_view text, std::size_t label_width = 14) {
    const std::size_t inner = kWidth - 4;
    const std::size_t text_width = inner - label_width;
    auto lines = wrap(text, text_width);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::string left = i == 0 ? std::string(label) : std::string();
      left += std::string(label_width - std::min(label_width, display_width(left)), ' ');
      line(left + lines[i]);
    }
  }
  /// One line of text inside the borders (wrapped when too long).
  void line(std::string_view text) {
    const std::size_t inner = kWidth - 4;
    for (const auto& l : wrap(text, inner)) {
      out_ += "│ " + l + std::string(inner - std::min(inner, display_width(l)), ' ') + " │\n";
    }
  }

 private:
  std::string& out_;
};

std::string signature(const Utility& u) {
  return (u.is_async ? "async " : "") + u.name + "(" + u.params + ")";
}

/// The state a call's result goes into, as the model may know it: a private one is not named.
std::optional<std::string> shown_assign(const Definition& def, const SideEffect& e) {
  if (!e.assign) return std::nullopt;
  const StateDef* target = def.find(*e.assign);
  if (target == nullptr || !target->is_public) return std::string("a private state");
  return *e.assign;
}

/// The calls a change of `s` makes, in words.
std::vector<std::string> effect_lines(const Definition& def, const StateDef& s) {
  std::vector<std::string> out;
  for (const auto& e : s.effects) {
    std::string line = "→ calls " + e.call.service + "/" + e.call.endpoint;
    if (auto target = shown_assign(def, e)) line += ", result into " + *target;
    line += e.compensate ? " (undone if a later step fails)" : " (irreversible)";
    out.push_back(std::move(line));
  }
  return out;
}

std::string source_line(const StateDef& s) {
  if (!s.source) return {};
  return std::string(s.source->subscription ? "live from " : "from ") + s.source->call.service +
         "/" + s.source->call.endpoint;
}

/// The text of a value within `allowance` characters (and, when given, `max_lines` lines); a cut
/// value ends with a note. Values of up to 40 characters are shown whatever the allowance.
std::string value_text(const json::value& v, std::size_t allowance, bool& elided,
                       std::size_t max_lines = 0) {
  allowance = std::max<std::size_t>(allowance, 40);  // a small value is always shown whole
  std::string text;
  pretty(v, 0, text, allowance);
  elided = false;
  if (max_lines > 0) {
    // In a box every line takes the box's width, however short its text.
    std::size_t lines = 0;
    for (std::size_t i = 0; i < text.size() && lines <= max_lines; ++i) {
      if (text[i] == '\n' && ++lines == max_lines) allowance = std::min(allowance, i);
    }
  }
  if (text.size() <= allowance) return text;  // whole: pretty() stops only past the allowance
  elided = true;
  std::size_t cut = allowance == 0 ? 0 : text.rfind('\n', allowance);
  if (cut == std::string::npos || cut < allowance / 2) cut = allowance;
  // Never split a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = text.substr(0, cut);
  if (!out.empty()) out += "\n";
  out += "… (elided: the value is " + std::to_string(json::serialize(v).size()) +
         " characters of JSON; read it whole with workspace/state, or narrow it in a script)";
  return out;
}

const std::string_view kRules =
    "Write JavaScript that reads and changes the states above; it runs as the body of an async "
    "function (await works, return gives the output). r states are frozen; w states can be "
    "assigned (whole, or member by member) but not read; rw states both. Every changed state "
    "is checked against its type: if anything fails, nothing changes and the error names the "
    "state, the path and the rule. Private states and the side effects' services are not "
    "reachable from a script.";

/// Each readable value's share of the budget: the rest of the view is measured without values.
std::size_t value_allowance(const Definition& def, const RenderOptions& options,
                            std::size_t fixed) {
  std::size_t readable = 0;
  for (const auto& s : def.states) readable += s.readable() ? 1 : 0;
  if (readable == 0) return options.budget;
  const std::size_t left = options.budget > fixed ? options.budget - fixed : 0;
  // A share too small to show anything useful shows the note alone.
  const std::size_t share = left / readable;
  return share < 80 ? 0 : share;
}

std::string guide_text(const Definition& def, bool markdown) {
  std::string out;
  const std::string h = markdown ? "## " : "";
  out += h + (markdown ? "Utilities\n\n" : "UTILITIES (callable in scripts)\n");
  if (def.utilities.empty()) out += markdown ? "None.\n" : "  none\n";
  for (const auto& u : def.utilities) {
    out += (markdown ? "- `" : "  ") + signature(u) + (markdown ? "`" : "");
    if (!u.doc.empty()) out += (markdown ? ": " : "  // ") + u.doc;
    out += "\n";
  }
  out += "\n" + h + (markdown ? "Examples\n\n" : "EXAMPLES\n");
  if (def.examples.empty()) out += markdown ? "None.\n" : "  none\n";
  for (const auto& e : def.examples) {
    if (markdown) {
      out += "**" + e.title + "**\n\n```js\n" + e.script;
      if (!e.script.ends_with('\n')) out += '\n';
      out += "```\n\n";
    } else {
      out += "  // " + e.title + "\n";
      std::string_view script = e.script;
      while (!script.empty() && script.back() == '\n') script.remove_suffix(1);
      std::size_t start = 0;
      while (start <= script.size()) {
        const auto nl = script.find('\n', start);
        out += "  " +
               std::string(script.substr(
                   start, nl == std::string_view::npos ? std::string_view::npos : nl - start)) +
               "\n";
        if (nl == std::string_view::npos) break;
        start = nl + 1;
      }
    }
  }
  out += "\n" + h + (markdown ? "Tools\n\n" : "TOOLS\n");
  out += std::string(markdown ? "- `" : "  • ") + "execute_script(script: string)" +
         (markdown ? "`" : "") + ": run a script against the states above\n";
  out += std::string(markdown ? "- `" : "  • ") + "attempt_completion(result: string)" +
         (markdown ? "`" : "") + ": finish the task with a summary (also callable in a script)\n";
  out += "\n" + h + (markdown ? "Rules\n\n" : "RULES\n");
  if (markdown) {
    out += std::string(kRules) + "\n";
  } else {
    for (const auto& l : wrap(kRules, kWidth - 2)) out += "  " + l + "\n";
  }
  std::string limits =
      "Limits: " + std::to_string(def.limits.timeout.count()) + " ms, " +
      std::to_string(def.limits.memory_bytes >> 20) +
      " MB. Date.now()/new Date(): " + (def.grants.time ? "the time of the change" : "refused") +
      ". Math.random(): " + (def.grants.random ? "seeded per change" : "refused") +
      ". readFile: " + (def.grants.files ? "granted" : "refused") + ". fetch: " +
      (std::get_if<bool>(&def.grants.network) != nullptr && !std::get<bool>(def.grants.network)
           ? "refused"
           : "granted") +
      ".";
  if (markdown) {
    out += "\n" + limits + "\n";
  } else {
    for (const auto& l : wrap(limits, kWidth - 2)) out += "  " + l + "\n";
  }
  return out;
}

std::string render_text(const Definition& def, std::int64_t version, const json::object& state,
                        const RenderOptions& options) {
  // The frame first (everything but values), to know what the values may take.
  auto frame = [&](std::size_t allowance, bool with_values) {
    std::string out;
    Box box(out);
    box.top("VIRTUAL WORKSPACE: " + def.name + " (v" + std::to_string(version) + ")");
    if (!def.description.empty()) box.line(def.description);
    box.bottom();
    for (const auto& s : def.states) {
      if (!s.is_public) continue;
      box.top("State: " + s.name);
      box.field("Type:", "PUBLIC, component " + s.component);
      box.field("Permission:",
                std::string(access_word(s.access)) + " (" + std::string(to_string(s.access)) + ")");
      box.field("Schema:", compact_type(s.schema_json));
      if (!s.description.empty()) box.field("About:", s.description);
      if (!s.side_effects.empty() || !s.effects.empty()) {
        std::string text = s.side_effects;
        for (const auto& l : effect_lines(def, s)) text += (text.empty() ? "" : "\n") + l;
        box.field("Side effects:", text);
      }
      if (s.source) box.field("Source:", source_line(s));
      box.rule();
      if (!s.readable()) {
        box.line("Current value: (write-only: assign it, it cannot be read)");
      } else if (with_values) {
        box.line("Current value:");
        bool elided = false;
        const auto* v = state.if_contains(s.name);
        // A boxed line costs the box's width (its borders are 3-byte characters).
        const std::size_t max_lines = std::max<std::size_t>(1, allowance / (kWidth + 6));
        const std::string text =
            value_text(v ? *v : json::value(nullptr), allowance, elided, max_lines);
        for (const auto& l : wrap(text, kWidth - 4)) box.line(l);
      } else {
        box.line("Current value:");
      }
      box.bottom();
    }
    if (options.guide) {
      out += "\n" + guide_text(def, false);
    }
    return out;
  };
  const std::string bare = frame(0, false);
  return frame(value_allowance(def, options, bare.size()), true);
}

std::string render_markdown(const Definition& def, std::int64_t version, const json::object& state,
                            const RenderOptions& options) {
  auto frame = [&](std::size_t allowance, bool with_values) {
    std::string out = "# Workspace: " + def.name + " (v" + std::to_string(version) + ")\n\n";
    if (!def.description.empty()) out += def.description + "\n\n";
    for (const auto& s : def.states) {
      if (!s.is_public) continue;
      out += "## " + s.name + "\n\n";
      out += "- Component: " + s.component + "\n";
      out += "- Permission: " + std::string(access_word(s.access)) + " (`" +
             std::string(to_string(s.access)) + "`)\n";
      out += "- Type: `" + compact_type(s.schema_json) + "`\n";
      if (!s.description.empty()) out += "- About: " + s.description + "\n";
      if (!s.side_effects.empty() || !s.effects.empty()) {
        out += "- Side effects: " + s.side_effects;
        for (const auto& l : effect_lines(def, s)) out += " " + l;
        out += "\n";
      }
      if (s.source) out += "- Source: " + source_line(s) + "\n";
      if (!s.readable()) {
        out += "\nWrite-only: assign it; it cannot be read.\n\n";
      } else if (with_values) {
        bool elided = false;
        const auto* v = state.if_contains(s.name);
        out += "\n```json\n" + value_text(v ? *v : json::value(nullptr), allowance, elided) +
               "\n```\n\n";
      } else {
        out += "\n```json\n```\n\n";
      }
    }
    if (options.guide) out += guide_text(def, true);
    return out;
  };
  const std::string bare = frame(0, false);
  return frame(value_allowance(def, options, bare.size()), true);
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t cols = 0;
  for (std::size_t i = 0; i < text.size();) cols += code_point_width(next_code_point(text, i));
  return cols;
}

std::string compact_type(const json::value& schema, const json::object& types) {
  return type_of(schema, types, 0);
}

json::object render_json(const Definition& def, std::int64_t version, const json::object& state,
                         const RenderOptions& options) {
  json::object view;
  view["workspace"] = def.name;
  view["version"] = version;
  view["description"] = def.description;
  // Values share the budget as in the text form (measured as compact JSON).
  std::size_t readable = 0;
  for (const auto& s : def.states) readable += s.readable() ? 1 : 0;
  const std::size_t allowance =
      readable == 0 ? options.budget : std::max<std::size_t>(40, options.budget / readable);
  json::array states;
  for (const auto& s : def.states) {
    if (!s.is_public) continue;
    json::object o;
    o["name"] = s.name;
    o["component"] = s.component;
    o["permission"] = to_string(s.access);
    o["type"] = compact_type(s.schema_json);
    o["schema"] = s.schema_json;
    if (!s.description.empty()) o["description"] = s.description;
    if (!s.side_effects.empty() || !s.effects.empty()) {
      json::array calls;
      for (const auto& e : s.effects) {
        calls.push_back(json::object{
            {"service", e.call.service},
            {"endpoint", e.call.endpoint},
            {"assign", e.assign ? json::value(*shown_assign(def, e)) : json::value(nullptr)},
            {"reversible", e.compensate.has_value()}});
      }
      o["sideEffects"] = json::object{{"description", s.side_effects}, {"calls", calls}};
    }
    if (s.source) {
      o["source"] = json::object{{"service", s.source->call.service},
                                 {"endpoint", s.source->call.endpoint},
                                 {"live", s.source->subscription}};
    }
    if (!s.readable()) {
      o["writeOnly"] = true;
    } else {
      const auto* v = state.if_contains(s.name);
      const json::value value = v ? *v : json::value(nullptr);
      const std::string text = json::serialize(value);
      if (text.size() > allowance) {
        o["elided"] =
            json::object{{"chars", text.size()},
                         {"note", "too large for the view; read it with workspace/state"}};
      } else {
        o["value"] = value;
      }
    }
    states.push_back(std::move(o));
  }
  view["states"] = std::move(states);
  if (options.guide) {
    json::array utilities;
    for (const auto& u : def.utilities) {
      utilities.push_back(
          json::object{{"name", u.name}, {"signature", signature(u)}, {"doc", u.doc}});
    }
    view["utilities"] = std::move(utilities);
    json::array examples;
    for (const auto& e : def.examples) {
      examples.push_back(
          json::object{{"component", e.component}, {"title", e.title}, {"script", e.script}});
    }
    view["examples"] = std::move(examples);
    view["tools"] = json::array{"execute_script", "attempt_completion"};
    view["rules"] = kRules;
    view["grants"] = json::object{{"time", def.grants.time},
                                  {"random", def.grants.random},
                                  {"files", def.grants.files.has_value()},
                                  {"network", !(std::get_if<bool>(&def.grants.network) != nullptr &&
                                                !std::get<bool>(def.grants.network))}};
  }
  return view;
}

std::string render(const Definition& def, std::int64_t version, const json::object& state,
                   const RenderOptions& options) {
  switch (options.format) {
    case Format::kText:
      return render_text(def, version, state, options);
    case Format::kMarkdown:
      return render_markdown(def, version, state, options);
    case Format::kJson:
      return json::serialize(render_json(def, version, state, options));
  }
  return {};
}

}  // namespace hearth::workspace
