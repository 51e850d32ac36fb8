#pragma once
/// Raw HTTP request templates (a2s-protocol.md, "request: |"), parsed once and filled safely:
/// every `${NAME}` is encoded for the place it sits in (docs/a2s.md, "Request templates").

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::a2s {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// A parsed template. Nothing is expanded yet; `${NAME}` placeholders are kept as written.
struct Template {
  std::string method;  ///< "GET", "POST", ...
  std::string target;  ///< origin-form path with its query, e.g. "/v1/forecast?units=${UNITS}"
  std::string host;    ///< the Host header's value as written; never holds a placeholder
  Headers headers;     ///< every other header line, in order, placeholders unexpanded
  /// The spec's form that puts the query after the blank line ("\n\n?date=${DATE}&lat=..."):
  /// the text after the '?', appended to the target's query when filled. Empty otherwise.
  std::string trailing_query;
  std::string body;          ///< the body as written (empty when there is none)
  std::string content_type;  ///< the Content-Type header's media type, lowercased, or ""
  /// Every distinct placeholder name, in order of first appearance.
  std::vector<std::string> placeholders;
};

/// Parses a template. The error (kInvalidParams) names the line and what is wrong, e.g.
/// "line 3: header line without ':'", "line 2: the Host header cannot hold a placeholder".
Result<Template> parse_template(std::string_view text);

/// A variable's value for a placeholder; nullptr when the variable has no value (an optional
/// variable left out).
using Lookup = std::function<const json::value*(std::string_view name)>;

/// A filled request, ready to send to the template's host.
struct FilledRequest {
  std::string method;
  std::string target;  ///< origin-form, every value percent-encoded
  Headers headers;     ///< without Host (the domain is the host)
  std::string body;
};

/// Fills `t`: values percent-encoded in the path and the query, JSON-escaped in a JSON body,
/// form-encoded in a form body; refused (kInvalidParams, naming the variable) where a value
/// would add a header line, hold a control character in a header, or make a whole path
/// segment "." or "..". An absent value drops its query parameter, form field or header line,
/// and is null in a JSON body; a path placeholder without a value is an error.
Result<FilledRequest> fill(const Template& t, const Lookup& lookup);

}  // namespace hearth::a2s
