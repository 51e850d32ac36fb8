#include "schema/own_keywords.hpp"

#include <cmath>
#include <memory>
#include <new>
#include <pthread.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <valijson/constraint_builder.hpp>
#include <valijson/constraints/concrete_constraints.hpp>
#include <valijson/internal/adapter.hpp>
#include <valijson/validation_results.hpp>
#include <vector>

#include "schema/violations.hpp"

namespace hearth::schema::detail {
namespace {

using valijson::ValidationResults;
using valijson::adapters::Adapter;
using Context = std::vector<std::string>;

std::string string_of(const Adapter& value, std::string_view keyword) {
  std::string out;
  if (!value.isString() || !value.getString(out)) {
    throw std::runtime_error("'" + std::string(keyword) + "' must be a string");
  }
  return out;
}

// --- type -------------------------------------------------------------------------------------

/// The draft-07 kind of a value; integral doubles (1.0) are integers, as the spec says.
std::string_view kind_of(const Adapter& value) {
  if (value.isNull()) return "null";
  if (value.isBool()) return "boolean";
  if (value.isString()) return "string";
  if (value.isArray()) return "array";
  if (value.isObject()) return "object";
  if (value.isInteger()) return "integer";
  double d = 0;
  if (value.isDouble() && value.getDouble(d) && std::isfinite(d) && std::floor(d) == d) {
    return "integer";
  }
  return "number";
}

class TypeConstraint final : public valijson::constraints::PolyConstraint {
 public:
  explicit TypeConstraint(std::vector<std::string> allowed) : allowed_(std::move(allowed)) {}

  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
    const std::string_view kind = kind_of(target);
    for (const std::string& allowed : allowed_) {
      if (allowed == kind || (allowed == "number" && kind == "integer")) return true;
    }
    if (results != nullptr) {
      std::string expected;
      for (std::size_t i = 0; i < allowed_.size(); ++i) {
        if (i > 0) expected += i + 1 == allowed_.size() ? " or " : ", ";
        expected += allowed_[i];
      }
      results->pushError(context, own_description("type", "must be of type " + expected + ", not " +
                                                              std::string(kind)));
    }
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override { return new (memory) TypeConstraint(*this); }
  size_t sizeOf() const override { return sizeof(TypeConstraint); }

  std::vector<std::string> allowed_;
};

class TypeBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& value) const override {
    std::vector<std::string> allowed;
    if (value.isArray()) {
      value.applyToArray([&](const Adapter& item) {
        allowed.push_back(string_of(item, "type"));
        return true;
      });
    } else {
      allowed.push_back(string_of(value, "type"));
    }
    return new TypeConstraint(std::move(allowed));
  }
};

// --- format -----------------------------------------------------------------------------------

bool digits(std::string_view text, std::size_t pos, std::size_t count, int& out) {
  if (pos + count > text.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

/// RFC 3339 full-date: YYYY-MM-DD with a day that exists in that month.
bool is_date(std::string_view text) {
  int year = 0;
  int month = 0;
  int day = 0;
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  if (!digits(text, 0, 4, year) || !digits(text, 5, 2, month) || !digits(text, 8, 2, day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1) return false;
  constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days = month == 2 && leap ? 29 : kDaysInMonth[month - 1];
  return day <= days;
}

/// RFC 3339 full-time: HH:MM:SS[.fraction](Z|+HH:MM|-HH:MM); second 60 is a leap second.
bool is_time(std::string_view text) {
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text.size() < 9 || text[2] != ':' || text[5] != ':') return false;
  if (!digits(text, 0, 2, hour) || !digits(text, 3, 2, minute) || !digits(text, 6, 2, second)) {
    return false;
  }
  if (hour > 23 || minute > 59 || second > 60) return false;
  std::size_t pos = 8;
  if (text[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return false;
  }
  if (pos >= text.size()) return false;
  if ((text[pos] == 'Z' || text[pos] == 'z') && pos + 1 == text.size()) return true;
  int offset_hour = 0;
  int offset_minute = 0;
  return (text[pos] == '+' || text[pos] == '-') && pos + 6 == text.size() && text[pos + 3] == ':' &&
         digits(text, pos + 1, 2, offset_hour) && digits(text, pos + 4, 2, offset_minute) &&
         offset_hour <= 23 && offset_minute <= 59;
}

class FormatConstraint final : public valijson::constraints::PolyConstraint {
 public:
  explicit FormatConstraint(std::string format) : format_(std::move(format)) {}

  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
    std::string text;
    // Formats constrain strings only; every other kind of value passes.
    if (!target.isString() || !target.getString(text)) return true;
    if (matches_format(format_, text)) return true;
    if (results != nullptr) {
      results->pushError(context, own_description("format", "must be a valid " + format_));
    }
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) FormatConstraint(*this);
  }
  size_t sizeOf() const override { return sizeof(FormatConstraint); }

  std::string format_;
};

class FormatBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& value) const override {
    return new FormatConstraint(string_of(value, "format"));
  }
};

// --- pattern ----------------------------------------------------------------------------------

class PatternConstraint final : public valijson::constraints::PolyConstraint {
 public:
  // std::regex_error (an invalid pattern) propagates: the compiler reports it as a problem.
  explicit PatternConstraint(std::string pattern)
      : pattern_(std::move(pattern)), regex_(pattern_, std::regex::ECMAScript) {}

  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
    std::string text;
    if (!target.isString() || !target.getString(text)) return true;
    if (text.size() > kMaxPatternText) {
      if (results != nullptr) {
        results->pushError(context, own_description("pattern", "is too long to be checked against "
                                                               "the pattern (over " +
                                                               std::to_string(kMaxPatternText) +
                                                               " characters)"));
      }
      return false;
    }
    if (search(text)) return true;
    if (results != nullptr) {
      results->pushError(context,
                         own_description("pattern", "must match the pattern '" + pattern_ + "'"));
    }
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternConstraint(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternConstraint); }

  // libstdc++'s std::regex matches recursively, about 1 KiB of stack per character of input:
  // a 100 KB string overflows an 8 MiB thread stack and would crash the daemon. Short strings
  // are matched in place; longer ones on a thread whose stack is sized to the input; beyond
  // kMaxPatternText the string is refused as a violation.
  static constexpr std::size_t kInlinePatternText = 2048;
  static constexpr std::size_t kMaxPatternText = 256 * 1024;
  static constexpr std::size_t kStackPerChar = 4096;  // room for sanitizer builds' larger frames

  bool search(const std::string& text) const {
    // Only const operations on the shared regex: safe from many threads at once.
    if (text.size() <= kInlinePatternText) return std::regex_search(text, regex_);
    struct Job {
      const std::string* text;
      const std::regex* regex;
      bool matched;
    } job{&text, &regex_, false};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (16u << 20) + text.size() * kStackPerChar);
    pthread_t thread;
    int rc = pthread_create(
        &thread, &attr,
        [](void* arg) -> void* {
          auto* j = static_cast<Job*>(arg);
          j->matched = std::regex_search(*j->text, *j->regex);
          return nullptr;
        },
        &job);
    pthread_attr_destroy(&attr);
    if (rc != 0) return false;  // no thread (out of memory): the value is refused, not crashed on
    pthread_join(thread, nullptr);
    return job.matched;
  }

  std::string pattern_;
  std::regex regex_;
};

class PatternBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& value) const override {
    return new PatternConstraint(string_of(value, "pattern"));
  }
};

void add_builder(valijson::SchemaParser& parser, std::string_view keyword,
                 std::unique_ptr<valijson::ConstraintBuilder> builder) {
  parser.addConstraintBuilder(std::string(keyword), builder.get());
  // The parser owns it from here on (it deletes its builders in its destructor).
  static_cast<void>(builder.release());
}

}  // namespace

void add_own_keywords(valijson::SchemaParser& parser) {
  add_builder(parser, kTypeKeyword, std::make_unique<TypeBuilder>());
  add_builder(parser, kFormatKeyword, std::make_unique<FormatBuilder>());
  add_builder(parser, kPatternKeyword, std::make_unique<PatternBuilder>());
}

bool matches_format(std::string_view format, std::string_view text) {
  if (format == "date") return is_date(text);
  if (format == "time") return is_time(text);
  if (format == "date-time") {
    const std::size_t t = text.find_first_of("Tt");
    return t == 10 && is_date(text.substr(0, t)) && is_time(text.substr(t + 1));
  }
  return true;
}

}  // namespace hearth::schema::detail
