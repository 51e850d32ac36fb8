#include "a2s/template/variables.hpp"

#include <re2/re2.h>

#include <boost/asio/ip/address.hpp>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "common/ascii.hpp"
#include "common/utf8.hpp"

namespace hearth::a2s {
namespace {

Error violation(const Variable& var, std::string_view rule, std::string expected) {
  return Error::make(ErrorCode::kInvalidParams, var.name + ": must be " + expected,
                     json::object{{"variable", var.name}, {"rule", rule}, {"expected", expected}});
}

std::string_view type_word(VarType t) {
  switch (t) {
    case VarType::kString:
      return "a string";
    case VarType::kNumber:
      return "a number";
    case VarType::kInteger:
      return "an integer";
    case VarType::kBoolean:
      return "a boolean (true or false)";
    case VarType::kDate:
      return "a date (YYYY-MM-DD, or an RFC 3339 date-time)";
    case VarType::kObject:
      return "an object";
    case VarType::kArray:
      return "an array";
  }
  return "a value";
}

/// Patterns compiled once (RE2: linear time, no backtracking).
/// Shared, so a pattern in use outlives the cache being started afresh.
std::shared_ptr<const RE2> compiled(const std::string& pattern) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const RE2>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    // Bounded: the patterns of the loaded definitions fit many times over; a flood of distinct
    // ones (a reload loop, a fuzzer) starts the cache afresh rather than growing without end.
    if (cache.size() >= 4096) cache.clear();
    RE2::Options options;
    options.set_log_errors(false);
    it = cache.emplace(pattern, std::make_shared<const RE2>(pattern, options)).first;
  }
  return it->second->ok() ? it->second : nullptr;
}

bool digits(std::string_view s, std::size_t n) {
  return s.size() == n &&
         std::all_of(s.begin(), s.end(), [](char c) { return ascii::is_digit(c); });
}

int number(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool valid_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!digits(s.substr(0, 4), 4) || !digits(s.substr(5, 2), 2) || !digits(s.substr(8, 2), 2)) {
    return false;
  }
  const int y = number(s.substr(0, 4));
  const int m = number(s.substr(5, 2));
  const int d = number(s.substr(8, 2));
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

/// HH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
bool valid_time(std::string_view s, bool zone_required) {
  if (s.size() < 8 || s[2] != ':' || s[5] != ':') return false;
  if (!digits(s.substr(0, 2), 2) || !digits(s.substr(3, 2), 2) || !digits(s.substr(6, 2), 2)) {
    return false;
  }
  if (number(s.substr(0, 2)) > 23 || number(s.substr(3, 2)) > 59 || number(s.substr(6, 2)) > 60) {
    return false;
  }
  std::size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    const std::size_t start = ++i;
    while (i < s.size() && ascii::is_digit(s[i])) ++i;
    if (i == start) return false;
  }
  const auto zone = s.substr(i);
  if (zone.empty()) return !zone_required;
  if (zone == "Z" || zone == "z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' &&
         digits(zone.substr(1, 2), 2) && digits(zone.substr(4, 2), 2) &&
         number(zone.substr(1, 2)) <= 23 && number(zone.substr(4, 2)) <= 59;
}

bool valid_date_time(std::string_view s) {
  return s.size() > 11 && (s[10] == 'T' || s[10] == 't' || s[10] == ' ') &&
         valid_date(s.substr(0, 10)) && valid_time(s.substr(11), true);
}

bool valid_hostname(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto dot = s.find('.', start);
    const auto label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (const char c : label) {
      if (!ascii::is_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool valid_email(std::string_view s) {
  const auto at = s.rfind('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return false;
  const auto local = s.substr(0, at);
  for (const char c : local) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == '@' || c == '"' || c == '(' || c == ')' ||
        c == ',' || c == ':' || c == ';' || c == '<' || c == '>' || c == '[' || c == ']' ||
        c == '\\') {
      return false;
    }
  }
  const auto domain = s.substr(at + 1);
  return domain.find('.') != std::string_view::npos && valid_hostname(domain);
}

bool valid_uri(std::string_view s) {
  // scheme ":" hier-part, without spaces or control characters.
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || !ascii::is_alpha(s[0])) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = s[i];
    if (!ascii::is_alnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return std::none_of(s.begin(), s.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

bool valid_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!ascii::is_hex_digit(s[i])) {
      return false;
    }
  }
  return true;
}

bool upper_letters(std::string_view s, std::size_t n) {
  return s.size() == n &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

bool valid_language(std::string_view s) {
  // BCP 47, simplified: a 2-3 letter primary subtag, then subtags of 1-8 letters or digits.
  std::size_t start = 0;
  bool first = true;
  while (start <= s.size()) {
    const auto dash = s.find('-', start);
    const auto tag =
        s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
    if (first) {
      if (tag.size() < 2 || tag.size() > 3 ||
          !std::all_of(tag.begin(), tag.end(), [](char c) { return ascii::is_alpha(c); })) {
        return false;
      }
    } else if (tag.empty() || tag.size() > 8 ||
               !std::all_of(tag.begin(), tag.end(), [](char c) { return ascii::is_alnum(c); })) {
      return false;
    }
    first = false;
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return true;
}

/// nullopt: the format is not one hearth checks (the definition validator refuses unknown
/// formats at load, so this happens only for values checked outside a definition).
std::optional<std::pair<bool, std::string>> check_format(std::string_view format,
                                                         std::string_view s) {
  boost::system::error_code ec;
  if (format == "date") return std::make_pair(valid_date(s), std::string("a date (YYYY-MM-DD)"));
  if (format == "date-time") {
    return std::make_pair(valid_date_time(s), std::string("an RFC 3339 date-time"));
  }
  if (format == "time") {
    return std::make_pair(valid_time(s, false), std::string("a time (HH:MM:SS)"));
  }
  if (format == "email") return std::make_pair(valid_email(s), std::string("an email address"));
  if (format == "uri" || format == "url") {
    return std::make_pair(valid_uri(s), std::string("an absolute URI"));
  }
  if (format == "uuid") return std::make_pair(valid_uuid(s), std::string("a UUID"));
  if (format == "ipv4") {
    const auto a = boost::asio::ip::make_address_v4(std::string(s), ec);
    (void)a;
    return std::make_pair(!ec, std::string("an IPv4 address"));
  }
  if (format == "ipv6") {
    const auto a = boost::asio::ip::make_address_v6(std::string(s), ec);
    (void)a;
    return std::make_pair(!ec, std::string("an IPv6 address"));
  }
  if (format == "hostname") return std::make_pair(valid_hostname(s), std::string("a host name"));
  if (format == "airport_code") {
    return std::make_pair(upper_letters(s, 3),
                          std::string("an IATA airport code (3 capital letters)"));
  }
  if (format == "currency") {
    return std::make_pair(upper_letters(s, 3), std::string("an ISO 4217 currency code"));
  }
  if (format == "country") {
    return std::make_pair(upper_letters(s, 2), std::string("an ISO 3166-1 alpha-2 country code"));
  }
  if (format == "language") {
    return std::make_pair(valid_language(s), std::string("a BCP 47 language tag"));
  }
  return std::nullopt;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  return json::serialize(json::value(v));
}

}  // namespace

bool known_format(std::string_view format) {
  return check_format(format, "").has_value();
}

std::string text_of(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  if (value.is_double()) {
    // The shortest text that reads back as the same double, in plain form where it fits
    // ("-122.3", not Boost.JSON's "-1.223E2").
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.get_double());
    if (ec == std::errc()) return std::string(buf, end);
  }
  return json::serialize(value);
}

Result<json::value> check_value(const Variable& var, const json::value& in) {
  json::value value = in;
  // Text is converted to the variable's type (values from the vault and the command line).
  if (value.is_string() && var.type != VarType::kString && var.type != VarType::kDate) {
    const std::string text(ascii::trim(std::string_view(value.get_string())));
    if (var.type == VarType::kBoolean) {
      if (text == "true") {
        value = true;
      } else if (text == "false") {
        value = false;
      }
    } else {
      auto parsed = json::parse_text(text);
      if (parsed.ok()) value = std::move(parsed).value();
    }
  }
  if (var.type == VarType::kString && (value.is_number() || value.is_bool())) {
    value = json::string(text_of(value));  // a zip code sent as 12345 is the text "12345"
  }
  switch (var.type) {
    case VarType::kString:
    case VarType::kDate:
      if (!value.is_string()) return violation(var, "type", std::string(type_word(var.type)));
      break;
    case VarType::kNumber:
      if (!value.is_number()) return violation(var, "type", "a number");
      break;
    case VarType::kInteger: {
      if (!value.is_number()) return violation(var, "type", "an integer");
      const double d = value.to_number<double>();
      if (std::floor(d) != d) return violation(var, "type", "an integer");
      if (value.is_double()) value = static_cast<std::int64_t>(d);
      break;
    }
    case VarType::kBoolean:
      if (!value.is_bool()) return violation(var, "type", "a boolean (true or false)");
      break;
    case VarType::kObject:
      if (!value.is_object()) return violation(var, "type", "an object");
      break;
    case VarType::kArray:
      if (!value.is_array()) return violation(var, "type", "an array");
      break;
  }
  if (value.is_string()) {
    const std::string_view s = value.get_string();
    if (!is_utf8(s)) return violation(var, "utf8", "valid UTF-8 text");
    if (var.type == VarType::kDate && !valid_date(s) && !valid_date_time(s)) {
      return violation(var, "type", std::string(type_word(VarType::kDate)));
    }
    if (var.format) {
      if (auto checked = check_format(*var.format, s); checked && !checked->first) {
        return violation(var, "format", checked->second);
      }
    }
    if (var.pattern) {
      const auto re = compiled(*var.pattern);
      if (re == nullptr) return violation(var, "pattern", "checked by a valid pattern");
      if (!RE2::FullMatch(re2::StringPiece(s.data(), s.size()), *re)) {
        return violation(var, "pattern", "text matching " + *var.pattern);
      }
    }
  } else if (var.pattern && !value.is_object() && !value.is_array()) {
    const auto re = compiled(*var.pattern);
    const std::string text = text_of(value);
    if (re == nullptr || !RE2::FullMatch(text, *re)) {
      return violation(var, "pattern", "text matching " + *var.pattern);
    }
  }
  // min and max: numbers by value, strings by length in code points, arrays by items.
  double measure = 0;
  std::string what;
  if (value.is_number()) {
    measure = value.to_number<double>();
  } else if (value.is_string()) {
    measure = static_cast<double>(code_points(value.get_string()));
    what = " characters";
  } else if (value.is_array()) {
    measure = static_cast<double>(value.get_array().size());
    what = " items";
  } else {
    return value;
  }
  if (var.min && measure < *var.min) {
    return violation(var, "min", "at least " + number_text(*var.min) + what);
  }
  if (var.max && measure > *var.max) {
    return violation(var, "max", "at most " + number_text(*var.max) + what);
  }
  return value;
}

}  // namespace hearth::a2s
