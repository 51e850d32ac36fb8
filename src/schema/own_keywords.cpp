#include "schema/own_keywords.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <valijson/constraint_builder.hpp>
#include <valijson/constraints/concrete_constraints.hpp>
#include <valijson/internal/adapter.hpp>
#include <valijson/validation_results.hpp>
#include <vector>

#include "schema/ecma_regex.hpp"
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

/// RE2 behind ECMA-262 syntax (ecma_regex.hpp): linear time and no recursion whatever the pattern
/// and the input, so any string length is checked, on the calling thread.
class PatternConstraint final : public valijson::constraints::PolyConstraint {
 public:
  explicit PatternConstraint(std::shared_ptr<const Regex> regex) : regex_(std::move(regex)) {}

  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
    std::string text;
    if (!target.isString() || !target.getString(text)) return true;
    if (regex_->search(text)) return true;
    if (results != nullptr) {
      results->pushError(
          context, own_description("pattern", "must match the pattern '" + regex_->source() + "'"));
    }
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternConstraint(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternConstraint); }

  std::shared_ptr<const Regex> regex_;  ///< immutable, shared by the clones valijson makes
};

class PatternBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& value) const override {
    std::string error;
    std::shared_ptr<const Regex> regex = Regex::compile(string_of(value, "pattern"), error);
    // The compiler reports a bad pattern with its path before valijson gets here.
    if (regex == nullptr) throw std::runtime_error(error);
    return new PatternConstraint(std::move(regex));
  }
};

// --- uniqueItems ------------------------------------------------------------------------------

/// Appends a form of `value` that is equal for two values exactly when JSON Schema calls them
/// equal: object members sorted by name, numbers by value (1 and 1.0 are equal).
void canonical_into(const Adapter& value, std::string& out) {
  if (value.isNull()) {
    out += 'n';
  } else if (value.isBool()) {
    bool b = false;
    value.getBool(b);
    out += b ? 't' : 'f';
  } else if (value.isString()) {
    std::string text;
    value.getString(text);
    out += 's';
    out += std::to_string(text.size());
    out += ':';
    out += text;
  } else if (value.isArray()) {
    out += '[';
    value.applyToArray([&out](const Adapter& item) {
      canonical_into(item, out);
      out += ',';
      return true;
    });
    out += ']';
  } else if (value.isObject()) {
    std::vector<std::pair<std::string, std::string>> members;
    value.applyToObject([&members](const std::string& name, const Adapter& member) {
      std::string form;
      canonical_into(member, form);
      members.emplace_back(name, std::move(form));
      return true;
    });
    std::sort(members.begin(), members.end());
    out += '{';
    for (const auto& [name, form] : members) {
      out += std::to_string(name.size());
      out += ':';
      out += name;
      out += form;
      out += ',';
    }
    out += '}';
  } else {
    double d = 0;
    int64_t i = 0;
    out += '#';
    if (value.isInteger() && value.getInteger(i)) {
      out += std::to_string(i);
    } else if (value.getDouble(d)) {
      // An integral double within int64 range prints like the integer it equals.
      if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.2e18) {
        out += std::to_string(static_cast<int64_t>(d));
      } else {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.17g", d);
        out += buffer;
      }
    }
  }
}

/// uniqueItems in O(n log n): the items' canonical forms are sorted, not compared pairwise (a
/// 60,000-item array took valijson 20 s). One violation, naming the first equal pair.
class UniqueItemsConstraint final : public valijson::constraints::PolyConstraint {
 public:
  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
    if (!target.isArray()) return true;
    std::vector<std::pair<std::string, std::size_t>> forms;
    std::size_t index = 0;
    target.applyToArray([&](const Adapter& item) {
      std::string form;
      canonical_into(item, form);
      forms.emplace_back(std::move(form), index++);
      return true;
    });
    std::sort(forms.begin(), forms.end());
    std::optional<std::pair<std::size_t, std::size_t>> duplicate;
    for (std::size_t k = 1; k < forms.size(); ++k) {
      if (forms[k].first != forms[k - 1].first) continue;
      // Equal forms are sorted by index: forms[k-1] is the earlier one.
      const std::pair<std::size_t, std::size_t> pair{forms[k - 1].second, forms[k].second};
      if (!duplicate || pair < *duplicate) duplicate = pair;
    }
    if (!duplicate) return true;
    if (results != nullptr) {
      results->pushError(context, "Elements at indexes #" + std::to_string(duplicate->first) +
                                      " and #" + std::to_string(duplicate->second) +
                                      " violate uniqueness constraint.");
    }
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) UniqueItemsConstraint(*this);
  }
  size_t sizeOf() const override { return sizeof(UniqueItemsConstraint); }
};

/// `uniqueItems: false` asks nothing.
class AlwaysValid final : public valijson::constraints::PolyConstraint {
 public:
  bool validate(const Adapter&, const Context&, ValidationResults*) const override { return true; }

 private:
  Constraint* cloneInto(void* memory) const override { return new (memory) AlwaysValid(*this); }
  size_t sizeOf() const override { return sizeof(AlwaysValid); }
};

class UniqueItemsBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& value) const override {
    bool unique = false;
    if (!value.isBool() || !value.getBool(unique)) {
      throw std::runtime_error("'uniqueItems' must be a boolean");
    }
    if (unique) return new UniqueItemsConstraint();
    return new AlwaysValid();
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
  add_builder(parser, kUniqueItemsKeyword, std::make_unique<UniqueItemsBuilder>());
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
