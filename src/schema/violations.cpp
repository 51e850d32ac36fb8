#include "schema/violations.hpp"

#include <array>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/problem.hpp"

namespace hearth::schema::detail {
namespace {

constexpr std::string_view kOwnPrefix = "hearth:";
constexpr std::string_view kOwnSeparator = ": ";
constexpr std::string_view kRootContext = "<root>";

/// One step of an instance path. valijson writes both "[name]" and "[2]", so which one a token
/// is can only be told by looking at the instance.
struct Segment {
  bool is_index = false;
  std::string key;
  std::size_t index = 0;
  bool operator==(const Segment&) const = default;
};
using Path = std::vector<Segment>;

/// Where a report points, relative to the context it was reported at.
enum class Anchor {
  kContext,       ///< the value at the context
  kNamedChild,    ///< the context's member named by the report
  kIndexedChild,  ///< the context's item numbered by the report
};

/// A parent report that only says "something below failed": dropped when a report below it
/// exists, kept (it is then the only explanation) otherwise.
enum class Kind { kLeaf, kStructural };

/// How to read one valijson description: it starts with `prefix`, ends with `suffix`, and the
/// text between them (a name, a number) is the "middle". In `message`, "{}" stands for the
/// middle and "{n}" for the middle as a number (see trim_number).
struct Rule {
  std::string_view prefix;
  std::string_view suffix;
  std::string_view keyword;
  Anchor anchor;
  Kind kind;
  std::string_view message;
};

// The exact texts come from valijson 1.0's validation_visitor.hpp. Longer prefixes sharing a
// start with shorter ones ("less than or equal to" / "less than") come first.
constexpr std::array kRules = {
    Rule{"Missing required property '", "'.", "required", Anchor::kNamedChild, Kind::kLeaf,
         "'{}' is required"},
    Rule{"Missing dependency '", "'.", "dependencies", Anchor::kNamedChild, Kind::kLeaf,
         "'{}' is required by a property dependency"},
    Rule{"Failed to validate against dependent schema.", "", "dependencies", Anchor::kContext,
         Kind::kStructural, "does not match a schema required by 'dependencies'"},
    Rule{"Value type not permitted by 'type' constraint.", "", "type", Anchor::kContext,
         Kind::kLeaf, "has a type that is not allowed"},
    Rule{"Failed to match against any enum values.", "", "enum", Anchor::kContext, Kind::kLeaf,
         "must be one of the allowed values"},
    Rule{"Target value and comparison value are not equal", "", "enum", Anchor::kContext,
         Kind::kLeaf, "must be one of the allowed values"},
    Rule{"Failed to match expected value set by 'const' constraint.", "", "const", Anchor::kContext,
         Kind::kLeaf, "must be equal to the constant value"},
    Rule{"Failed to any values against subschema in 'contains' constraint.", "", "contains",
         Anchor::kContext, Kind::kLeaf, "must contain an item that matches the 'contains' schema"},
    Rule{"String should be a valid ", "", "format", Anchor::kContext, Kind::kLeaf,
         "must be a valid {}"},
    Rule{"Expected number less than or equal to ", "", "maximum", Anchor::kContext, Kind::kLeaf,
         "must be less than or equal to {n}"},
    Rule{"Expected number less than ", "", "exclusiveMaximum", Anchor::kContext, Kind::kLeaf,
         "must be less than {n}"},
    Rule{"Expected number greater than or equal to ", "", "minimum", Anchor::kContext, Kind::kLeaf,
         "must be greater than or equal to {n}"},
    Rule{"Expected number greater than ", "", "exclusiveMinimum", Anchor::kContext, Kind::kLeaf,
         "must be greater than {n}"},
    Rule{"Array should contain no more than ", " elements.", "maxItems", Anchor::kContext,
         Kind::kLeaf, "must have at most {} items"},
    Rule{"Array should contain no fewer than ", " elements.", "minItems", Anchor::kContext,
         Kind::kLeaf, "must have at least {} items"},
    Rule{"String should be no more than ", " characters in length.", "maxLength", Anchor::kContext,
         Kind::kLeaf, "must be at most {} characters long"},
    Rule{"String should be no fewer than ", " characters in length.", "minLength", Anchor::kContext,
         Kind::kLeaf, "must be at least {} characters long"},
    Rule{"Object should have no more than ", " properties.", "maxProperties", Anchor::kContext,
         Kind::kLeaf, "must have at most {} properties"},
    Rule{"Object should have no fewer than ", " properties.", "minProperties", Anchor::kContext,
         Kind::kLeaf, "must have at least {} properties"},
    Rule{"Value should be a multiple of ", "", "multipleOf", Anchor::kContext, Kind::kLeaf,
         "must be a multiple of {n}"},
    Rule{"Value could not be converted", "", "multipleOf", Anchor::kContext, Kind::kLeaf,
         "could not be checked against 'multipleOf'"},
    Rule{"Target should not validate against schema specified in 'not' constraint.", "", "not",
         Anchor::kContext, Kind::kLeaf, "must not match the schema in 'not'"},
    Rule{"Failed to validate against any child schemas allowed by oneOf constraint.", "", "oneOf",
         Anchor::kContext, Kind::kLeaf,
         "must match exactly one of the schemas in 'oneOf' (it matches none)"},
    Rule{"Failed to validate against exactly one child schema.", "", "oneOf", Anchor::kContext,
         Kind::kLeaf, "must match exactly one of the schemas in 'oneOf' (it matches several)"},
    Rule{"Failed to validate against any schemas allowed by anyOf constraint.", "", "anyOf",
         Anchor::kContext, Kind::kLeaf, "must match at least one of the schemas in 'anyOf'"},
    // Reported per failing branch by allOf, anyOf and oneOf alike. anyOf and oneOf always add
    // their own summary at the same place, which makes this one redundant; so it only survives
    // for an allOf whose branch failed without saying why (a `false` branch).
    Rule{"Failed to validate against child schema #", ".", "allOf", Anchor::kContext,
         Kind::kStructural, "must match all of the schemas in 'allOf'"},
    // The then/else reports are all real requirements (unlike anyOf branches, which are only
    // alternatives), so the summary adds nothing when they are there.
    Rule{"Failed to validate against a conditional schema set by if-then-else constraints.", "",
         "if", Anchor::kContext, Kind::kStructural,
         "must match the 'then' or 'else' schema that 'if' selects"},
    Rule{"Failed to validate item #", " in array.", "items", Anchor::kIndexedChild,
         Kind::kStructural, "does not match the 'items' schema"},
    // This one is reported at the item's own context already.
    Rule{"Failed to validate item #", " against corresponding item schema.", "items",
         Anchor::kContext, Kind::kStructural, "does not match its schema in 'items'"},
    Rule{"Failed to validate item #", " against additional items schema.", "additionalItems",
         Anchor::kIndexedChild, Kind::kStructural, "is not allowed by 'additionalItems'"},
    Rule{"Array contains more items than allowed by items constraint.", "", "additionalItems",
         Anchor::kContext, Kind::kLeaf,
         "must not have more items than 'items' lists ('additionalItems' is false)"},
    // valijson adds this one next to the report above, and also when an item failed its own
    // schema in 'items' (its count then includes the failed items): never the only explanation.
    Rule{"Cannot validate item #",
         " or greater using 'items' constraint or 'additionalItems' constraint.", "additionalItems",
         Anchor::kContext, Kind::kStructural,
         "has items that neither 'items' nor 'additionalItems' allows"},
    Rule{"Object contains a property that could not be validated using 'properties' or "
         "'additionalProperties' constraints: '",
         "'.", "additionalProperties", Anchor::kNamedChild, Kind::kLeaf,
         "'{}' is not an allowed property"},
    Rule{"Failed to validate against additional properties schema", "", "additionalProperties",
         Anchor::kContext, Kind::kStructural,
         "has a property that does not match 'additionalProperties'"},
    Rule{"Failed to validate against schema associated with property name '", "'.", "properties",
         Anchor::kNamedChild, Kind::kStructural, "is not allowed by its schema in 'properties'"},
    Rule{"Failed to validate against schema associated with pattern '", "'.", "patternProperties",
         Anchor::kContext, Kind::kStructural,
         "has a property that does not match its schema in 'patternProperties' ('{}')"},
    Rule{"Elements at indexes #", " violate uniqueness constraint.", "uniqueItems",
         Anchor::kContext, Kind::kLeaf, "must not contain duplicates (items #{} are equal)"},
};

/// `rule.message` with its placeholders filled in.
std::string render(const Rule& rule, const std::string& middle) {
  std::string out(rule.message);
  if (const std::size_t at = out.find("{n}"); at != std::string::npos) {
    out.replace(at, 3, trim_number(middle));
  } else if (const std::size_t at2 = out.find("{}"); at2 != std::string::npos) {
    out.replace(at2, 2, middle);
  }
  return out;
}

/// A report after mapping: `path` is where it points (the child for kNamedChild/kIndexedChild).
struct Mapped {
  Path path;
  std::string constraint;
  std::string message;
  Kind kind = Kind::kLeaf;
};

std::optional<std::size_t> parse_index(std::string_view text) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// Resolves valijson's context tokens against the instance, so "[0]" becomes an index under an
/// array and a member name under an object.
Path context_path(const std::vector<std::string>& context, const json::value& instance) {
  Path path;
  const json::value* node = &instance;
  for (const std::string& token : context) {
    if (token == kRootContext) continue;
    std::string name = token;
    if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
      name = name.substr(1, name.size() - 2);
    }
    Segment segment;
    const json::array* arr = node != nullptr ? node->if_array() : nullptr;
    const std::optional<std::size_t> index = arr != nullptr ? parse_index(name) : std::nullopt;
    if (index) {
      segment.is_index = true;
      segment.index = *index;
      node = *index < arr->size() ? &(*arr)[*index] : nullptr;
    } else {
      segment.key = name;
      node = node != nullptr ? json::member(*node, name) : nullptr;
    }
    path.push_back(std::move(segment));
  }
  return path;
}

std::string format_path(const Path& path) {
  std::string out;
  for (const Segment& segment : path) {
    out = segment.is_index ? index_path(out, segment.index) : join_path(out, segment.key);
  }
  return out;
}

Mapped map_one(const EngineError& error, const json::value& instance) {
  Mapped mapped;
  mapped.path = context_path(error.context, instance);
  const std::string& text = error.description;

  if (text.starts_with(kOwnPrefix)) {
    const std::size_t separator = text.find(kOwnSeparator, kOwnPrefix.size());
    if (separator != std::string::npos) {
      mapped.constraint = text.substr(kOwnPrefix.size(), separator - kOwnPrefix.size());
      mapped.message = text.substr(separator + kOwnSeparator.size());
      return mapped;
    }
  }

  for (const Rule& rule : kRules) {
    if (!text.starts_with(rule.prefix) || !text.ends_with(rule.suffix) ||
        text.size() < rule.prefix.size() + rule.suffix.size()) {
      continue;
    }
    const std::string middle =
        text.substr(rule.prefix.size(), text.size() - rule.prefix.size() - rule.suffix.size());
    if (rule.anchor == Anchor::kIndexedChild) {
      const std::optional<std::size_t> index = parse_index(middle);
      if (!index) continue;
      mapped.path.push_back(Segment{.is_index = true, .key = {}, .index = *index});
    } else if (rule.anchor == Anchor::kNamedChild) {
      mapped.path.push_back(Segment{.is_index = false, .key = middle, .index = 0});
    }
    mapped.constraint = rule.keyword;
    mapped.message = render(rule, middle);
    mapped.kind = rule.kind;
    return mapped;
  }

  mapped.constraint = "schema";
  mapped.message = text;
  return mapped;
}

}  // namespace

std::string own_description(std::string_view keyword, std::string_view message) {
  std::string out(kOwnPrefix);
  out += keyword;
  out += kOwnSeparator;
  out += message;
  return out;
}

std::string trim_number(std::string_view printed) {
  std::string out(printed);
  if (out.find('.') == std::string::npos || out.find_first_of("eE") != std::string::npos) {
    return out;
  }
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::vector<Violation> to_violations(const std::vector<EngineError>& errors,
                                     const json::value& instance) {
  std::vector<Mapped> mapped;
  mapped.reserve(errors.size());
  for (const EngineError& error : errors) mapped.push_back(map_one(error, instance));

  // Linear in the size of the reports (a 100,000-item array can fail 200,000 times): every path
  // is interned as a node of a tree of places, each place noting whether a leaf report points at
  // it and whether any report points below it.
  struct Place {
    bool leaf = false;
    bool deeper = false;
  };
  std::vector<Place> places(1);  // 0: the root
  std::unordered_map<std::string, std::size_t> children;
  std::vector<std::size_t> place_of(mapped.size());
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    std::size_t node = 0;
    for (const Segment& segment : mapped[i].path) {
      places[node].deeper = true;
      std::string key = std::to_string(node);
      key += segment.is_index ? '#' : '.';
      key += segment.is_index ? std::to_string(segment.index) : segment.key;
      const auto [it, added] = children.try_emplace(std::move(key), places.size());
      if (added) places.emplace_back();
      node = it->second;
    }
    place_of[i] = node;
    if (mapped[i].kind == Kind::kLeaf) places[node].leaf = true;
  }

  std::vector<Violation> out;
  std::unordered_set<std::string> seen;
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    const Mapped& candidate = mapped[i];
    // A structural report is explained by a leaf report at its place or any report below it.
    // (Another structural report at the very same place does not explain it - two failing
    // `false` branches of one allOf; the duplicate check below merges them.)
    if (candidate.kind == Kind::kStructural &&
        (places[place_of[i]].leaf || places[place_of[i]].deeper)) {
      continue;
    }
    Violation violation{format_path(candidate.path), candidate.constraint, candidate.message};
    std::string identity = violation.field;
    identity += '\0';
    identity += violation.constraint;
    identity += '\0';
    identity += violation.message;
    if (seen.insert(std::move(identity)).second) out.push_back(std::move(violation));
  }
  return out;
}

}  // namespace hearth::schema::detail
