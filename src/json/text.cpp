#include "json/text.hpp"

namespace hearth::json {

std::optional<std::string> text_of(const value& v) {
  switch (v.kind()) {
    case kind::null:
      return std::nullopt;
    case kind::string:
      return std::string(v.get_string());
    case kind::bool_:
      return std::string(v.get_bool() ? "true" : "false");
    case kind::int64:
      return std::to_string(v.get_int64());
    case kind::uint64:
      return std::to_string(v.get_uint64());
    case kind::double_:
    case kind::array:
    case kind::object:
      return json::serialize(v);
  }
  return std::nullopt;
}

}  // namespace hearth::json
