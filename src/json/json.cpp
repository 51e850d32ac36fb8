#include "json/json.hpp"

#include <algorithm>
#include <vector>

namespace hearth::json {

Result<value> parse_text(std::string_view text, ParseLimits limits) {
  parse_options opts;
  opts.max_depth = limits.max_depth;
  boost::system::error_code ec;
  monotonic_resource mr;
  stream_parser parser(storage_ptr(), opts);
  std::size_t consumed = parser.write_some(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    object data;
    data["offset"] = consumed;
    data["reason"] = ec.message();
    return Error::make(ErrorCode::kParseError, "Parse error: " + ec.message(), std::move(data));
  }
  if (consumed < text.size()) {
    // write_some stops after a complete value; anything but white space after it is an error.
    auto rest = text.substr(consumed);
    if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      object data;
      data["offset"] = consumed;
      data["reason"] = "extra data after the JSON value";
      return Error::make(ErrorCode::kParseError, "Parse error: extra data after the JSON value",
                         std::move(data));
    }
  }
  return parser.release();
}

std::string dump(const value& v) { return serialize(v); }

namespace {
void canonical_into(const value& v, std::string& out) {
  switch (v.kind()) {
    case kind::object: {
      const auto& obj = v.get_object();
      std::vector<const key_value_pair*> members;
      members.reserve(obj.size());
      for (const auto& kv : obj) members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out += '{';
      bool first = true;
      for (const auto* kv : members) {
        if (!first) out += ',';
        first = false;
        out += serialize(value(kv->key()));
        out += ':';
        canonical_into(kv->value(), out);
      }
      out += '}';
      break;
    }
    case kind::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out += ',';
        first = false;
        canonical_into(item, out);
      }
      out += ']';
      break;
    }
    default:
      out += serialize(v);
  }
}
}  // namespace

std::string canonical(const value& v) {
  std::string out;
  canonical_into(v, out);
  return out;
}

std::string_view kind_name(const value& v) {
  switch (v.kind()) {
    case kind::null: return "null";
    case kind::bool_: return "boolean";
    case kind::int64:
    case kind::uint64: return "integer";
    case kind::double_: return "number";
    case kind::string: return "string";
    case kind::array: return "array";
    case kind::object: return "object";
  }
  return "unknown";
}

const value* member(const value& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  return v.get_object().if_contains(key);
}

}  // namespace hearth::json
