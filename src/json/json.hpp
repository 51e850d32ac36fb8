#pragma once
/// Small helpers over Boost.JSON, hearth's one JSON DOM.

#include <boost/json.hpp>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace hearth::json {

using namespace boost::json;  // NOLINT(google-build-using-namespace): json::value, json::object, ...

/// Limits applied while parsing untrusted text.
struct ParseLimits {
  std::size_t max_depth = 64;
};

/// Parses untrusted JSON text. On failure the error is kParseError with the position in `data`.
Result<value> parse_text(std::string_view text, ParseLimits limits = {});

/// Compact serialisation.
std::string dump(const value& v);

/// Serialisation with object keys sorted, so equal values give equal strings.
std::string canonical(const value& v);

/// "null", "boolean", "integer", "number", "string", "array" or "object".
std::string_view kind_name(const value& v);

/// Member lookup that returns nullptr when `v` is not an object or has no such key.
const value* member(const value& v, std::string_view key);

}  // namespace hearth::json
