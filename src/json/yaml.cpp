// YAML <-> JSON (A2S definitions, workspace files): yaml-cpp reads, hearth's own emitter writes.
#include "json/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>

#include "common/ascii.hpp"
#include "common/utf8.hpp"

namespace hearth::json {
namespace {

constexpr std::size_t kMaxDepth = 64;
/// Aliases can make a small file expand exponentially ("billion laughs"): a document hearth reads
/// never needs this many values.
constexpr std::size_t kMaxNodes = 200000;
/// ... nor text that adds up past this (an alias of a long string, repeated).
constexpr std::size_t kMaxBytes = std::size_t{2} << 20;

struct Reader {
  std::size_t nodes = 0;
  std::size_t bytes = 0;

  static Error at(const YAML::Node& node, const std::string& message) {
    return Error::make(ErrorCode::kInvalidParams,
                       "line " + std::to_string(node.Mark().line + 1) + ": " + message);
  }

  /// A plain (unquoted) scalar, typed as the YAML 1.2 core schema does.
  static json::value plain(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    const char* digits = (*b == '-' || *b == '+') ? b + 1 : b;
    if (digits != e && std::all_of(digits, e, [](char c) { return ascii::is_digit(c); })) {
      std::int64_t i = 0;
      auto [end, ec] = std::from_chars(*b == '+' ? b + 1 : b, e, i);
      if (ec == std::errc() && end == e) return i;
    }
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
      std::int64_t i = 0;
      auto [end, ec] = std::from_chars(b + 2, e, i, s[1] == 'x' ? 16 : 8);
      if (ec == std::errc() && end == e) return i;
    }
    if (s == ".inf" || s == ".Inf" || s == "+.inf" || s == "-.inf" || s == ".nan" || s == ".NaN") {
      return json::string(s);  // JSON has no infinities: kept as text, refused where a number goes
    }
    const bool numberish = std::all_of(b, e, [](char c) {
      return ascii::is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
    });
    if (numberish && std::any_of(b, e, [](char c) { return ascii::is_digit(c); })) {
      double d = 0;
      auto [end, ec] = std::from_chars(*b == '+' ? b + 1 : b, e, d);
      if (ec == std::errc() && end == e && std::isfinite(d)) return d;
    }
    return json::string(s);
  }

  Result<json::value> convert(const YAML::Node& node, std::size_t depth) {
    if (++nodes > kMaxNodes) {
      return at(node,
                "too many values (more than " + std::to_string(kMaxNodes) + ", aliases included)");
    }
    if (depth > kMaxDepth) return at(node, "nested too deeply");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return json::value(nullptr);
      case YAML::NodeType::Scalar: {
        bytes += node.Scalar().size();
        if (bytes > kMaxBytes) {
          return at(node, "too much text (more than 2 MiB, aliases included)");
        }
        // yaml-cpp decodes some escapes (\N, \_) to single bytes that are not UTF-8.
        if (!is_utf8(node.Scalar())) {
          return at(node, "an escape that does not give UTF-8 text (use \\u escapes)");
        }
        const std::string& tag = node.Tag();
        if (tag == "!") return json::value(json::string(node.Scalar()));  // quoted
        if (tag == "?" || tag.empty()) return plain(node.Scalar());
        if (tag == "tag:yaml.org,2002:str" || tag == "!!str") {
          return json::value(json::string(node.Scalar()));
        }
        return at(node, "YAML tags (" + tag + ") are not supported");
      }
      case YAML::NodeType::Sequence: {
        json::array out;
        for (const auto& item : node) {
          HEARTH_ASSIGN_OR_RETURN(auto v, convert(item, depth + 1));
          out.push_back(std::move(v));
        }
        return json::value(std::move(out));
      }
      case YAML::NodeType::Map: {
        json::object out;
        for (const auto& pair : node) {
          if (!pair.first.IsScalar()) return at(pair.first, "keys must be text");
          const std::string key = pair.first.Scalar();
          if (!is_utf8(key)) return at(pair.first, "a key that is not UTF-8 text");
          if (out.contains(key)) return at(pair.first, "duplicate key '" + key + "'");
          HEARTH_ASSIGN_OR_RETURN(auto v, convert(pair.second, depth + 1));
          out[key] = std::move(v);
        }
        return json::value(std::move(out));
      }
    }
    return json::value(nullptr);
  }
};

bool plain_key(std::string_view key) {
  if (key.empty() || !(ascii::is_alpha(key[0]) || key[0] == '_')) return false;
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '_' || c == '-'; });
}

/// The length of a character YAML does not print as it is (it would read it as a line break
/// or drop it): C0 controls but tab and LF, DEL, C1 controls (NEL among them), U+2028, U+2029
/// and U+FEFF. 0 for any other character.
std::size_t unprintable(std::string_view s, std::size_t i) {
  const auto u = static_cast<unsigned char>(s[i]);
  if ((u < 0x20 && s[i] != '\t' && s[i] != '\n') || u == 0x7f) return 1;
  const auto next = [&](std::size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  if (u == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) return 2;
  if (u == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) return 3;
  if (u == 0xEF && next(1) == 0xBB && next(2) == 0xBF) return 3;
  return 0;
}

/// A YAML double-quoted scalar: JSON's escapes, plus \uXXXX for what YAML does not print.
std::string quoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const std::size_t n = unprintable(s, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (n > 0) {
      // Decode the character to its code point for \uXXXX.
      std::uint32_t cp = static_cast<unsigned char>(c);
      if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
      if (n == 3) {
        cp = ((cp & 0x0F) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3F) << 6) |
             (static_cast<unsigned char>(s[i + 2]) & 0x3F);
      }
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
      i += n;
    } else {
      out += c;
      ++i;
    }
  }
  out += '"';
  return out;
}

/// A multi-line string as a literal block, when it can be one exactly.
bool literal_block(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  if (s.front() == ' ' || s.front() == '\n') return false;  // would need an indentation indicator
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (unprintable(s, i) > 0) return false;
  }
  return true;
}

void emit(const json::value& v, std::size_t indent, std::string& out);

void emit_scalar(const json::value& v, std::size_t indent, std::string& out) {
  switch (v.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case json::kind::string: {
      const std::string_view s = v.get_string();
      if (literal_block(s)) {
        std::size_t trailing = 0;
        while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
        out += trailing == 0 ? "|-" : (trailing == 1 ? "|" : "|+");
        std::size_t start = 0;
        const auto body = s.substr(0, s.size() - (trailing >= 1 ? 1 : 0));
        while (start <= body.size()) {
          const auto nl = body.find('\n', start);
          const auto line = body.substr(
              start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
          out += '\n';
          // A block at the top level still needs indenting.
          if (!line.empty()) {
            out += std::string(std::max<std::size_t>(indent, 2), ' ');
            out += line;
          }
          if (nl == std::string_view::npos) break;
          start = nl + 1;
        }
        return;
      }
      out += quoted(s);
      return;
    }
    case json::kind::double_: {
      // JSON's text writes 100.0 as 100, which YAML reads as an integer: a fraction keeps it a
      // double (1e+16 and 0.5 already read as doubles).
      const std::size_t at = out.size();
      json::serialize_number_to(out, v.get_double());
      if (out.find_first_of(".en", at) == std::string::npos) out += ".0";
      return;
    }
    default:
      out += json::serialize(v);
  }
}

void emit(const json::value& v, std::size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    const auto& o = v.get_object();
    if (o.empty()) {
      out += "{}";
      return;
    }
    bool first = true;
    for (const auto& [key, item] : o) {
      if (!first) out += "\n" + pad;
      first = false;
      out += plain_key(key) ? std::string(key) : quoted(key);
      out += ':';
      if ((item.is_object() && !item.get_object().empty()) ||
          (item.is_array() && !item.get_array().empty())) {
        out += "\n" + pad + "  ";
        emit(item, indent + 2, out);
      } else {
        out += ' ';
        emit_scalar(item, indent + 2, out);
      }
    }
    return;
  }
  if (v.is_array()) {
    const auto& a = v.get_array();
    if (a.empty()) {
      out += "[]";
      return;
    }
    bool first = true;
    for (const auto& item : a) {
      if (!first) out += "\n" + pad;
      first = false;
      out += "- ";
      if ((item.is_object() && !item.get_object().empty()) ||
          (item.is_array() && !item.get_array().empty())) {
        emit(item, indent + 2, out);
      } else {
        emit_scalar(item, indent + 2, out);
      }
    }
    return;
  }
  emit_scalar(v, indent, out);
}

}  // namespace

Result<json::value> yaml_to_json(std::string_view text) {
  if (!is_utf8(text)) {
    return Error::make(ErrorCode::kInvalidParams, "the file is not valid UTF-8 text");
  }
  // YAML streams are printable text (YAML 1.2, c-printable): a NUL or another control
  // character is refused here rather than carried into names and templates.
  std::size_t line = 1;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') ++line;
    if ((u < 0x20 && c != '\n' && c != '\r' && c != '\t') || u == 0x7f) {
      return Error::make(ErrorCode::kInvalidParams,
                         "line " + std::to_string(line) + ": a control character (not text)");
    }
  }
  try {
    const auto docs = YAML::LoadAll(std::string(text));
    if (docs.empty()) return Error::make(ErrorCode::kInvalidParams, "the file is empty");
    if (docs.size() > 1) {
      return Error::make(ErrorCode::kInvalidParams, "one YAML document a file (this one has " +
                                                        std::to_string(docs.size()) +
                                                        " YAML documents)");
    }
    Reader reader;
    return reader.convert(docs.front(), 0);
  } catch (const YAML::Exception& e) {
    return Error::make(ErrorCode::kInvalidParams,
                       "line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Error::make(ErrorCode::kInvalidParams, std::string("not YAML: ") + e.what());
  }
}

std::string json_to_yaml(const json::value& value) {
  std::string out;
  emit(value, 0, out);
  out += '\n';
  return out;
}

}  // namespace hearth::json
