#include "a2s/template/template.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "a2s/template/variables.hpp"
#include "common/ascii.hpp"
#include "common/rfc9110.hpp"
#include "common/utf8.hpp"
#include "httpclient/url.hpp"

namespace hearth::a2s {
namespace {

/// A piece of templated text: literal text, or a placeholder's name.
struct Piece {
  bool placeholder = false;
  std::string text;
};
using Pieces = std::vector<Piece>;

bool is_name(std::string_view s) {
  if (s.empty() || !(ascii::is_alpha(s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return ascii::is_alnum(c) || c == '_'; });
}

Error line_error(std::size_t line, const std::string& message) {
  return Error::make(ErrorCode::kInvalidParams, "line " + std::to_string(line) + ": " + message);
}

/// Splits text into pieces. `$${` is a literal `${`.
Result<Pieces> split_pieces(std::string_view text, std::size_t line) {
  Pieces out;
  std::string literal;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") == 0) {
      const auto close = text.find('}', i + 2);
      if (close == std::string_view::npos) return line_error(line, "'${' without its '}'");
      const auto name = text.substr(i + 2, close - i - 2);
      if (!is_name(name)) {
        return line_error(
            line, "'${" + std::string(name) + "}' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
      }
      if (!literal.empty()) out.push_back({false, std::move(literal)});
      literal.clear();
      out.push_back({true, std::string(name)});
      i = close + 1;
      continue;
    }
    literal += text[i++];
  }
  if (!literal.empty()) out.push_back({false, std::move(literal)});
  return out;
}

bool has_placeholder(const Pieces& pieces) {
  return std::any_of(pieces.begin(), pieces.end(), [](const Piece& p) { return p.placeholder; });
}

void collect(const Pieces& pieces, std::vector<std::string>& names) {
  for (const auto& p : pieces) {
    if (p.placeholder && std::find(names.begin(), names.end(), p.text) == names.end()) {
      names.push_back(p.text);
    }
  }
}

std::string_view rstrip(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

/// Text that may stand in a request target as written: no whitespace, control characters or '#'.
bool target_text(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f || c == '#';
  });
}

enum class BodyKind { kNone, kJson, kForm, kText, kOther };

BodyKind body_kind(std::string_view content_type) {
  if (content_type.empty()) return BodyKind::kNone;
  if (content_type == "application/json" ||
      (content_type.size() > 5 && content_type.substr(content_type.size() - 5) == "+json")) {
    return BodyKind::kJson;
  }
  if (content_type == "application/x-www-form-urlencoded") return BodyKind::kForm;
  if (content_type.substr(0, 5) == "text/") return BodyKind::kText;
  return BodyKind::kOther;
}

/// The text of a value for a placeholder, checked to be UTF-8 without NUL.
Result<std::string> value_text(std::string_view name, const json::value& value) {
  std::string text = text_of(value);
  if (!is_utf8(text)) {
    return Error::make(ErrorCode::kInvalidParams, std::string(name) + ": must be valid UTF-8",
                       json::object{{"variable", name}, {"rule", "utf8"}});
  }
  if (text.find('\0') != std::string::npos) {
    return Error::make(ErrorCode::kInvalidParams,
                       std::string(name) + ": may not hold a NUL character",
                       json::object{{"variable", name}, {"rule", "nul"}});
  }
  return text;
}

std::string form_encode(std::string_view text) {
  std::string encoded = httpclient::encode_component(text);
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded.compare(i, 3, "%20") == 0) {
      out += '+';
      i += 2;
    } else {
      out += encoded[i];
    }
  }
  return out;
}

/// Fills pieces, each value given to `encode` (which may refuse it); nullopt when a
/// placeholder has no value (the caller leaves its pair or line out).
using Encoder = std::function<Result<std::string>(const std::string& name, std::string text)>;
Result<std::optional<std::string>> fill_pieces(const Pieces& pieces, const Lookup& lookup,
                                               const Encoder& encode) {
  std::string filled;
  for (const auto& p : pieces) {
    if (!p.placeholder) {
      filled += p.text;
      continue;
    }
    const json::value* v = lookup(p.text);
    if (v == nullptr || v->is_null()) return std::optional<std::string>{};
    HEARTH_ASSIGN_OR_RETURN(auto text, value_text(p.text, *v));
    HEARTH_ASSIGN_OR_RETURN(auto encoded, encode(p.text, std::move(text)));
    filled += encoded;
  }
  return std::optional<std::string>(std::move(filled));
}

/// Fills `&`-separated pairs (a query, a form body): a pair any of whose placeholders has no
/// value is dropped whole; values are encoded with `encode`.
Result<std::string> fill_pairs(std::string_view text, const Lookup& lookup,
                               std::string (*encode)(std::string_view)) {
  const Encoder by_pair = [encode](const std::string&,
                                   const std::string& piece) -> Result<std::string> {
    return encode(piece);
  };
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto amp = text.find('&', start);
    const auto pair =
        text.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    start = amp == std::string_view::npos ? text.size() + 1 : amp + 1;
    if (pair.empty()) continue;
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(pair, 0));
    HEARTH_ASSIGN_OR_RETURN(auto filled, fill_pieces(pieces, lookup, by_pair));
    if (!filled) continue;
    if (!out.empty()) out += '&';
    out += *filled;
  }
  return out;
}

std::string encode_query(std::string_view text) {
  return httpclient::encode_component(text);
}
std::string encode_form(std::string_view text) {
  return form_encode(text);
}

Result<std::string> fill_path(std::string_view path, const Lookup& lookup) {
  std::string out;
  std::size_t start = 0;
  bool first = true;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto segment = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    start = slash == std::string_view::npos ? path.size() + 1 : slash + 1;
    if (!first) out += '/';
    first = false;
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(segment, 0));
    std::string filled;
    std::string raw;  // the segment as the values make it, before encoding
    for (const auto& p : pieces) {
      if (!p.placeholder) {
        filled += p.text;
        raw += p.text;
        continue;
      }
      const json::value* v = lookup(p.text);
      if (v == nullptr || v->is_null()) {
        return Error::make(ErrorCode::kInvalidParams, p.text + ": required in the path",
                           json::object{{"variable", p.text}, {"rule", "required"}});
      }
      HEARTH_ASSIGN_OR_RETURN(auto t, value_text(p.text, *v));
      raw += t;
      filled += httpclient::encode_component(t);
    }
    if (has_placeholder(pieces) && (raw == "." || raw == ".." || raw.empty())) {
      std::string name;
      for (const auto& p : pieces) {
        if (p.placeholder) name = p.text;
      }
      return Error::make(ErrorCode::kInvalidParams,
                         name + ": would make a path segment empty, \".\" or \"..\"",
                         json::object{{"variable", name}, {"rule", "path-segment"}});
    }
    out += filled;
  }
  return out;
}

Result<std::string> fill_json(std::string_view body, const Lookup& lookup) {
  // Walks the body as JSON text, so that a placeholder inside a string literal is escaped into
  // it and one outside is a whole JSON value.
  std::string out;
  bool in_string = false;
  std::size_t i = 0;
  while (i < body.size()) {
    const char c = body[i];
    if (in_string && c == '\\' && i + 1 < body.size()) {
      out += body.substr(i, 2);
      i += 2;
      continue;
    }
    if (c == '"') {
      in_string = !in_string;
      out += c;
      ++i;
      continue;
    }
    if (body.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 3;
      continue;
    }
    if (body.compare(i, 2, "${") == 0) {
      const auto close = body.find('}', i + 2);
      const std::string name(body.substr(i + 2, close - i - 2));
      i = close + 1;
      const json::value* v = lookup(name);
      if (in_string) {
        if (v == nullptr || v->is_null()) continue;
        HEARTH_ASSIGN_OR_RETURN(auto t, value_text(name, *v));
        const std::string quoted = json::serialize(json::string(t));
        out += quoted.substr(1, quoted.size() - 2);
      } else {
        out += v == nullptr ? std::string("null") : json::serialize(*v);
      }
      continue;
    }
    out += c;
    ++i;
  }
  auto parsed = json::parse_text(out);
  if (!parsed.ok()) {
    return Error::make(
        ErrorCode::kInvalidParams,
        "the template's JSON body is not JSON once filled: " + parsed.error().message);
  }
  return out;
}

/// Whether a placeholder stands in a query parameter's name ("${K}=v"): a value there could
/// add parameters.
bool placeholder_in_query_name(std::string_view query) {
  std::size_t s = 0;
  while (s <= query.size()) {
    const auto amp = query.find('&', s);
    const auto item =
        query.substr(s, amp == std::string_view::npos ? std::string_view::npos : amp - s);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && item.substr(0, eq).find("${") != std::string_view::npos) {
      return true;
    }
    if (amp == std::string_view::npos) break;
    s = amp + 1;
  }
  return false;
}

/// The request line (line `line_no`): METHOD TARGET [HTTP/1.x].
Status read_request_line(std::string_view text, std::size_t line_no, Template& t) {
  const auto line = ascii::trim(rstrip(text));
  const auto sp = line.find(' ');
  if (sp == std::string_view::npos) {
    return line_error(line_no, "the request line must be 'METHOD /path HTTP/1.1'");
  }
  t.method = std::string(line.substr(0, sp));
  auto rest = ascii::trim(line.substr(sp + 1));
  const auto sp2 = rest.rfind(' ');
  std::string_view version;
  if (sp2 != std::string_view::npos) {
    version = ascii::trim(rest.substr(sp2 + 1));
    rest = ascii::trim(rest.substr(0, sp2));
  }
  if (!rfc9110::is_token(t.method) || t.method.find("${") != std::string::npos ||
      ascii::upper(t.method) != t.method) {
    return line_error(line_no, "the method must be an upper-case token (GET, POST, ...)");
  }
  if (!version.empty() && version != "HTTP/1.1" && version != "HTTP/1.0") {
    return line_error(line_no, "the HTTP version must be HTTP/1.1");
  }
  if (rest.empty() || rest.front() != '/') {
    return line_error(line_no,
                      "the target must be a path starting with '/' (the host is the "
                      "service's domain; absolute URLs are not allowed)");
  }
  if (rest.size() > 1 && rest[1] == '/') {
    return line_error(line_no, "the target may not start with '//'");
  }
  if (!target_text(rest)) {
    return line_error(line_no, "the target may not hold spaces, control characters or a fragment");
  }
  t.target = std::string(rest);
  HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(t.target, line_no));
  if (const auto q = t.target.find('?'); q != std::string::npos) {
    if (placeholder_in_query_name(std::string_view(t.target).substr(q + 1))) {
      return line_error(line_no, "a placeholder may not be a query parameter's name");
    }
  }
  collect(pieces, t.placeholders);
  return Status{};
}

/// The header lines from `n` up to the first blank line; the index of that line (or the
/// number of lines).
Result<std::size_t> read_headers(const std::vector<std::string_view>& lines, std::size_t n,
                                 Template& t) {
  bool have_host = false;
  for (; n < lines.size(); ++n) {
    const auto line = rstrip(lines[n]);
    if (ascii::trim(line).empty()) break;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return line_error(n + 1, "header line without ':'");
    const auto name = line.substr(0, colon);
    const auto value = ascii::trim(line.substr(colon + 1));
    if (!rfc9110::is_token(name)) {
      return line_error(n + 1, "'" + std::string(name) + "' is not a header name");
    }
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(value, n + 1));
    for (const auto& piece : pieces) {
      const bool control = std::any_of(piece.text.begin(), piece.text.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
      });
      if (!piece.placeholder && control) {
        return line_error(n + 1, "a header value may not hold control characters");
      }
    }
    const auto lower = ascii::lower(name);
    if (lower == "host") {
      if (have_host) return line_error(n + 1, "a second Host header");
      if (has_placeholder(pieces)) {
        return line_error(n + 1, "the Host header cannot hold a placeholder");
      }
      have_host = true;
      t.host = std::string(value);
      continue;
    }
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection") {
      return line_error(n + 1,
                        "the " + std::string(name) + " header is hearth's to set: leave it out");
    }
    if (lower == "content-type") {
      if (has_placeholder(pieces)) {
        return line_error(n + 1, "the Content-Type header cannot hold a placeholder");
      }
      t.content_type = ascii::lower(ascii::trim(value.substr(0, value.find(';'))));
    }
    collect(pieces, t.placeholders);
    t.headers.emplace_back(std::string(name), std::string(value));
  }
  if (!have_host) return line_error(2, "a Host header is required");
  return n;
}

/// The body: everything after the blank line `n`, without the trailing blank lines a YAML
/// block leaves. A single `?query` line under a bodiless method (or without a Content-Type) is
/// the trailing query; a JSON body must stay JSON whatever the values.
Status read_body(const std::vector<std::string_view>& lines, std::size_t n, Template& t) {
  const std::size_t body_line = n + 2;
  std::string body;
  for (std::size_t i = n + 1; i < lines.size(); ++i) {
    if (!body.empty() || i > n + 1) body += '\n';
    body += std::string(lines[i].substr(0, lines[i].size() - (lines[i].ends_with('\r') ? 1 : 0)));
  }
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ' || body.back() == '\t')) {
    body.pop_back();
  }
  while (!body.empty() && (body.front() == '\n')) body.erase(body.begin());
  const bool bodiless_method = t.method == "GET" || t.method == "HEAD" || t.method == "DELETE";
  if (!body.empty() && body.front() == '?' && body.find('\n') == std::string::npos &&
      (bodiless_method || t.content_type.empty())) {
    t.trailing_query = body.substr(1);
    if (!target_text(t.trailing_query)) {
      return line_error(body_line,
                        "the query may not hold spaces, control characters or a fragment");
    }
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(t.trailing_query, body_line));
    if (placeholder_in_query_name(t.trailing_query)) {
      return line_error(body_line, "a placeholder may not be a query parameter's name");
    }
    collect(pieces, t.placeholders);
  } else if (!body.empty()) {
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(body, body_line));
    if (has_placeholder(pieces) && body_kind(t.content_type) == BodyKind::kOther) {
      return line_error(body_line, "placeholders in a " + t.content_type +
                                       " body are not supported (use application/json, "
                                       "application/x-www-form-urlencoded or text/*)");
    }
    if (body_kind(t.content_type) == BodyKind::kJson) {
      // The body must be JSON whatever the values: check it with each placeholder as null
      // outside strings.
      const Lookup none = [](std::string_view) -> const json::value* { return nullptr; };
      if (auto filled = fill_json(body, none); !filled.ok()) {
        return line_error(body_line, "the JSON body is not JSON with its placeholders filled: " +
                                         filled.error().message);
      }
    }
    collect(pieces, t.placeholders);
    t.body = std::move(body);
  }
  return Status{};
}

}  // namespace

Result<Template> parse_template(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    lines.push_back(
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  std::size_t n = 0;
  while (n < lines.size() && rstrip(lines[n]).empty()) ++n;
  if (n == lines.size()) return line_error(1, "empty template: a request line is required");

  Template t;
  HEARTH_RETURN_IF_ERROR(read_request_line(lines[n], n + 1, t));
  HEARTH_ASSIGN_OR_RETURN(n, read_headers(lines, n + 1, t));
  HEARTH_RETURN_IF_ERROR(read_body(lines, n, t));
  return t;
}

Result<FilledRequest> fill(const Template& t, const Lookup& lookup) {
  FilledRequest out;
  out.method = t.method;
  // Target: the path, then the query (the target's, and the trailing form's).
  const auto q = t.target.find('?');
  HEARTH_ASSIGN_OR_RETURN(out.target, fill_path(std::string_view(t.target).substr(0, q), lookup));
  std::string query_template;
  if (q != std::string::npos) query_template = t.target.substr(q + 1);
  if (!t.trailing_query.empty()) {
    if (!query_template.empty()) query_template += '&';
    query_template += t.trailing_query;
  }
  if (!query_template.empty()) {
    HEARTH_ASSIGN_OR_RETURN(auto query, fill_pairs(query_template, lookup, encode_query));
    if (!query.empty()) out.target += "?" + query;
  }
  if (out.target.size() > 1 && out.target[1] == '/') {
    return Error::make(ErrorCode::kInvalidParams, "the filled target would start with '//'");
  }
  // Headers: a line whose placeholder has no value is left out.
  const Encoder header_value = [](const std::string& variable,
                                  std::string text) -> Result<std::string> {
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        return Error::make(ErrorCode::kInvalidParams,
                           variable +
                               ": a header value may not hold line breaks or other control "
                               "characters",
                           json::object{{"variable", variable}, {"rule", "header-value"}});
      }
    }
    return text;
  };
  for (const auto& [name, value] : t.headers) {
    HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(value, 0));
    HEARTH_ASSIGN_OR_RETURN(auto filled, fill_pieces(pieces, lookup, header_value));
    if (filled) out.headers.emplace_back(name, std::move(*filled));
  }
  // Body.
  if (!t.body.empty()) {
    switch (body_kind(t.content_type)) {
      case BodyKind::kJson: {
        HEARTH_ASSIGN_OR_RETURN(out.body, fill_json(t.body, lookup));
        break;
      }
      case BodyKind::kForm: {
        HEARTH_ASSIGN_OR_RETURN(out.body, fill_pairs(t.body, lookup, encode_form));
        break;
      }
      default: {
        HEARTH_ASSIGN_OR_RETURN(auto pieces, split_pieces(t.body, 0));
        for (const auto& p : pieces) {
          if (!p.placeholder) {
            out.body += p.text;
            continue;
          }
          const json::value* v = lookup(p.text);
          if (v == nullptr || v->is_null()) continue;
          HEARTH_ASSIGN_OR_RETURN(auto text, value_text(p.text, *v));
          out.body += text;
        }
      }
    }
  }
  return out;
}

}  // namespace hearth::a2s
