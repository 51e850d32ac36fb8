#include "json/json.hpp"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace hearth::json {

namespace {

/// The value-building handler of boost::json::parser, plus what hearth needs to know about
/// numbers: where each one that the DOM cannot carry as written sits in a JSON-RPC message.
class Builder {
 public:
  // The names Boost.JSON's basic_parser asks its handler for.
  // NOLINTBEGIN(readability-identifier-naming)
  static constexpr std::size_t max_object_size = object::max_size();
  static constexpr std::size_t max_array_size = array::max_size();
  static constexpr std::size_t max_key_size = string::max_size();
  static constexpr std::size_t max_string_size = string::max_size();
  // NOLINTEND(readability-identifier-naming)

  Builder(std::vector<RawNumber>* raw, bool clamp) : raw_(raw), clamp_(clamp) {
    st.reset(storage_ptr());
  }

  value_stack st;
  /// Set by a strict parse at the first out-of-range number.
  std::string out_of_range_text;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    begin(false);
    return true;
  }
  bool on_object_end(std::size_t n, boost::system::error_code&) {
    st.push_object(n);
    end();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) {
    begin(true);
    return true;
  }
  bool on_array_end(std::size_t n, boost::system::error_code&) {
    st.push_array(n);
    end();
    return true;
  }
  bool on_key_part(string_view s, std::size_t, boost::system::error_code&) {
    st.push_chars(s);
    if (at_request_level()) key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(string_view s, std::size_t, boost::system::error_code&) {
    st.push_key(s);
    if (at_request_level()) {
      key_.append(s.data(), s.size());
      member_ = std::move(key_);
      key_.clear();
    }
    return true;
  }
  bool on_string_part(string_view s, std::size_t, boost::system::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(string_view s, std::size_t, boost::system::error_code&) {
    st.push_string(s);
    scalar_done();
    return true;
  }
  bool on_number_part(string_view s, boost::system::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, string_view s, boost::system::error_code& ec) {
    std::optional<double> none;
    if (!number(s, none, ec)) return false;
    st.push_int64(i);
    scalar_done();
    return true;
  }
  bool on_uint64(std::uint64_t u, string_view s, boost::system::error_code& ec) {
    std::optional<double> none;
    if (!number(s, none, ec)) return false;
    st.push_uint64(u);
    scalar_done();
    return true;
  }
  bool on_double(double d, string_view s, boost::system::error_code& ec) {
    std::optional<double> value = d;
    if (!number(s, value, ec)) return false;
    st.push_double(*value);
    scalar_done();
    return true;
  }
  bool on_bool(bool b, boost::system::error_code&) {
    st.push_bool(b);
    scalar_done();
    return true;
  }
  bool on_null(boost::system::error_code&) {
    st.push_null();
    scalar_done();
    return true;
  }
  bool on_comment_part(string_view, boost::system::error_code&) { return true; }
  bool on_comment(string_view, boost::system::error_code&) { return true; }

 private:
  std::size_t request_depth() const { return top_is_array_ ? 2 : 1; }
  // Keys are remembered only where they name a request's members.
  bool at_request_level() const {
    return raw_ != nullptr && depth_ == request_depth() && request_is_object_;
  }
  void begin(bool array) {
    if (depth_ == 0) top_is_array_ = array;
    if (depth_ + 1 == request_depth()) request_is_object_ = !array;
    ++depth_;
  }
  void end() {
    --depth_;
    if (depth_ + 1 == request_depth()) member_.clear();
    scalar_done();
  }
  void scalar_done() {
    if (top_is_array_ && depth_ == 1) ++element_;
  }

  /// `d` is set when the parser made a double of the text; clamping may change it.
  bool number(string_view last, std::optional<double>& d, boost::system::error_code& ec) {
    std::string text = std::move(number_);
    number_.clear();
    text.append(last.data(), last.size());
    if (d) {
      // Boost.JSON 1.81 reads some numbers one unit in the last place off (934.5146729745181:
      // one in ten uniform random doubles in [0, 1000) written in full); std::from_chars rounds
      // correctly, so that what hearth writes reads back as the same double. What it cannot
      // hold (1e400, 1e-400) keeps Boost.JSON's value for the checks below.
      double exact = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), exact);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) d = exact;
    }
    // An integer literal becomes a double only when no 64-bit integer holds it.
    const bool out_of_range =
        d && (!std::isfinite(*d) || text.find_first_of(".eE") == std::string::npos);
    if (clamp_) {
      if (d && !std::isfinite(*d)) d = std::copysign(std::numeric_limits<double>::max(), *d);
    } else if (raw_ == nullptr) {
      if (out_of_range) {
        out_of_range_text = std::move(text);
        ec = error::exponent_overflow;
        return false;
      }
    } else if (depth_ >= request_depth() && request_is_object_ && !member_.empty()) {
      const bool direct = depth_ == request_depth();
      // An id's text is kept whenever serialising the DOM value could write it differently.
      const bool id_text = direct && member_ == "id" && (d || text.rfind("-0", 0) == 0);
      if (out_of_range || id_text) {
        RawNumber r;
        r.element = top_is_array_ ? element_ : RawNumber::kNoElement;
        r.member = member_;
        r.direct = direct;
        r.out_of_range = out_of_range;
        r.text = std::move(text);
        raw_->push_back(std::move(r));
      }
    } else if (out_of_range) {
      // Not inside a request object (a malformed message): refused as an invalid request
      // anyway, never echoed.
      RawNumber r;
      r.element = top_is_array_ && depth_ >= 1 ? element_ : RawNumber::kNoElement;
      r.out_of_range = true;
      r.text = std::move(text);
      raw_->push_back(std::move(r));
    }
    return true;
  }

  std::vector<RawNumber>* raw_;
  bool clamp_ = false;
  std::size_t depth_ = 0;
  bool top_is_array_ = false;
  bool request_is_object_ = false;
  std::size_t element_ = 0;
  std::string key_;
  std::string member_;
  std::string number_;
};

Result<value> parse_with(std::string_view text, ParseLimits limits, std::vector<RawNumber>* raw) {
  parse_options opts;
  opts.max_depth = limits.max_depth;
  basic_parser<Builder> parser(opts, raw, limits.clamp_numbers);
  boost::system::error_code ec;
  std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (ec && !parser.handler().out_of_range_text.empty()) {
    const std::string& number = parser.handler().out_of_range_text;
    object data;
    data["offset"] = consumed;
    data["reason"] = "number out of range";
    const std::string shown = number.size() > 64 ? number.substr(0, 64) + "..." : number;
    data["number"] = shown;
    std::string message = "Parse error: the number " + shown +
                          " is beyond what a 64-bit integer or a finite double holds";
    return Error::make(ErrorCode::kParseError, std::move(message), std::move(data));
  }
  if (ec == error::extra_data || (!ec && consumed < text.size())) {
    // Anything but white space after the value is an error.
    auto rest = text.substr(consumed);
    if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      object data;
      data["offset"] = consumed;
      data["reason"] = "extra data after the JSON value";
      return Error::make(ErrorCode::kParseError, "Parse error: extra data after the JSON value",
                         std::move(data));
    }
    ec.clear();
  }
  if (!ec && !parser.done()) ec = error::incomplete;
  if (ec) {
    object data;
    data["offset"] = consumed;
    data["reason"] = ec.message();
    return Error::make(ErrorCode::kParseError, "Parse error: " + ec.message(), std::move(data));
  }
  return parser.handler().st.release();
}

}  // namespace

Result<value> parse_text(std::string_view text, ParseLimits limits) {
  return parse_with(text, limits, nullptr);
}

Result<value> parse_message(std::string_view text, ParseLimits limits,
                            std::vector<RawNumber>& raw) {
  return parse_with(text, limits, &raw);
}

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
        serialize_string_to(out, kv->key());
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
    case kind::double_: {
      // Integral values as integers (1.0 and 1 are one number), others in their shortest form
      // that reads back the same. Not serialize's form (1e-07 here, 1e-7 there; 1e-06 here,
      // 0.000001 there): A2S checksums are over this text and must not change.
      const double d = v.get_double();
      if (std::floor(d) == d && std::fabs(d) < 9007199254740992.0) {
        out += std::to_string(static_cast<long long>(d));
        break;
      }
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
      out.append(buf, ec == std::errc() ? end : buf);
      break;
    }
    default:
      serialize_to(out, v);
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
    case kind::null:
      return "null";
    case kind::bool_:
      return "boolean";
    case kind::int64:
    case kind::uint64:
      return "integer";
    case kind::double_:
      return "number";
    case kind::string:
      return "string";
    case kind::array:
      return "array";
    case kind::object:
      return "object";
  }
  return "unknown";
}

const value* member(const value& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  return v.get_object().if_contains(key);
}

std::string string_member(const value& v, std::string_view key) {
  const auto* m = member(v, key);
  return m != nullptr && m->is_string() ? std::string(m->get_string()) : std::string();
}

}  // namespace hearth::json
