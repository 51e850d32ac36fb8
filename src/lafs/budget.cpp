#include "lafs/budget.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lafs/envelope.hpp"
#include "lafs/grapheme.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {

namespace {

// Characters of the number as JavaScript's String(n) writes it (the spec's stringify).
std::size_t number_length(const json::value& v) {
  char buf[64];
  if (v.is_int64()) {
    return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v.get_int64()).ptr - buf);
  }
  if (v.is_uint64()) {
    return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v.get_uint64()).ptr - buf);
  }
  const double d = v.get_double();
  if (std::trunc(d) == d && std::fabs(d) < 1e21) {
    // Integral values print without a fraction or exponent, as in JavaScript.
    return static_cast<std::size_t>(
        std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed).ptr - buf);
  }
  return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, d).ptr - buf);
}

double estimate(const json::value& v, int depth) {
  if (depth > kMaxEstimateDepth) return std::numeric_limits<double>::infinity();
  switch (v.kind()) {
    case json::kind::null:
    case json::kind::bool_:
      return 1;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return std::max(1.0, static_cast<double>(number_length(v)) / 4.0);
    case json::kind::string:
      return std::max(1.0, static_cast<double>(count_graphemes(v.get_string())) / 4.0);
    case json::kind::array: {
      double tokens = 2;
      for (const auto& item : v.get_array()) tokens += estimate(item, depth + 1) + 1;
      return tokens;
    }
    case json::kind::object: {
      double tokens = 2;
      for (const auto& kv : v.get_object()) {
        tokens += std::max(1.0, static_cast<double>(count_graphemes(kv.key())) / 4.0);
        tokens += 2;
        tokens += estimate(kv.value(), depth + 1);
      }
      return tokens;
    }
  }
  return 1;
}

std::uint64_t rounded(double tokens) {
  if (!std::isfinite(tokens)) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::ceil(tokens));
}

// Largest list in `result`: the result itself, or a list one level below a wrapper object.
std::uint64_t largest_list(const json::value& result) {
  if (result.is_array()) return result.get_array().size();
  std::uint64_t best = 0;
  if (result.is_object()) {
    for (const auto& kv : result.get_object()) {
      if (kv.value().is_array()) {
        best = std::max<std::uint64_t>(best, kv.value().get_array().size());
      }
    }
  }
  return best;
}

// The lists truncation may shorten, longest first.
std::vector<json::array*> lists_of(json::value& result) {
  std::vector<json::array*> lists;
  if (result.is_array()) {
    lists.push_back(&result.get_array());
  } else if (result.is_object()) {
    for (auto& kv : result.get_object()) {
      if (kv.value().is_array()) lists.push_back(&kv.value().get_array());
    }
  }
  std::stable_sort(lists.begin(), lists.end(),
                   [](auto* a, auto* b) { return a->size() > b->size(); });
  return lists;
}

struct Measure {
  const Budget& budget;
  json::object& envelope;

  std::uint64_t tokens() const { return rounded(estimate(envelope.at("result"), 0)); }
  std::uint64_t bytes() const { return json::dump(envelope).size(); }
  bool fits() const {
    if (budget.max_items && largest_list(envelope.at("result")) > *budget.max_items) return false;
    if (budget.max_tokens && tokens() > *budget.max_tokens) return false;
    if (budget.max_bytes && bytes() > *budget.max_bytes) return false;
    return true;
  }
  // The first constraint that fails, for the error's details.
  std::string_view failing() const {
    if (budget.max_items && largest_list(envelope.at("result")) > *budget.max_items) {
      return "maxItems";
    }
    if (budget.max_tokens && tokens() > *budget.max_tokens) return "maxTokens";
    return "maxBytes";
  }
};

// Keeps the longest prefix of `list` with which the envelope fits (binary search: fitting is
// monotonic in the prefix length).
void shrink(json::array& list, const Measure& m) {
  json::array full = list;
  std::size_t lo = 0, hi = full.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    list = json::array(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(mid));
    if (m.fits()) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  list = json::array(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(lo));
}

}  // namespace

Result<Budget> parse_budget(const json::value& v) {
  auto bad = [](const std::string& field, const std::string& why) {
    json::object details;
    details["field"] = field;
    std::string message = field + ": " + why;
    return make_error(kValidationSchema, std::move(message), std::move(details));
  };
  if (!v.is_object()) return bad("_budget", "must be an object");
  Budget b;
  for (const auto& kv : v.get_object()) {
    std::optional<std::uint64_t>* slot = nullptr;
    if (kv.key() == "maxTokens") {
      slot = &b.max_tokens;
    } else if (kv.key() == "maxBytes") {
      slot = &b.max_bytes;
    } else if (kv.key() == "maxItems") {
      slot = &b.max_items;
    } else {
      return bad("_budget." + std::string(kv.key()),
                 "is not a budget member (maxTokens, maxBytes, maxItems)");
    }
    const json::value& n = kv.value();
    if (!is_integer(n) || (n.is_int64() && n.get_int64() < 1) ||
        (n.is_double() && n.get_double() < 1)) {
      return bad("_budget." + std::string(kv.key()), "must be a positive integer");
    }
    const double d = n.is_double()  ? n.get_double()
                     : n.is_int64() ? static_cast<double>(n.get_int64())
                                    : static_cast<double>(n.get_uint64());
    if (d > static_cast<double>(kMaxBudgetValue)) {
      return bad("_budget." + std::string(kv.key()),
                 "exceeds hearth's limit of " + std::to_string(kMaxBudgetValue));
    }
    *slot = static_cast<std::uint64_t>(d);
  }
  if (!b.max_tokens && !b.max_bytes && !b.max_items) {
    return bad("_budget", "must hold at least one of maxTokens, maxBytes, maxItems");
  }
  return b;
}

double estimate_tokens(const json::value& value) {
  return estimate(value, 0);
}

Result<BudgetOutcome> enforce_budget(json::object& envelope, const Budget& budget,
                                     BudgetOptions options) {
  if (!envelope.contains("result")) envelope["result"] = nullptr;
  Measure m{budget, envelope};
  BudgetOutcome out;
  out.original_tokens = m.tokens();
  if (m.fits()) {
    out.estimated_tokens = out.original_tokens;
    out.bytes = m.bytes();
    out.items = largest_list(envelope.at("result"));
    return out;
  }
  const std::string_view constraint = m.failing();
  const std::uint64_t over_bytes = m.bytes();
  auto exceeded = [&]() -> Error {
    json::object details;
    details["estimatedTokens"] = out.original_tokens;
    std::uint64_t limit = 0, measured = 0;
    if (constraint == "maxTokens") {
      limit = *budget.max_tokens;
      measured = out.original_tokens;
    } else if (constraint == "maxItems") {
      limit = *budget.max_items;
      measured = largest_list(envelope.at("result"));
    } else {
      limit = *budget.max_bytes;
      measured = over_bytes;
    }
    details["budget"] = limit;
    details["excessTokens"] =
        constraint == "maxTokens" ? out.original_tokens - *budget.max_tokens : 0;
    details["constraint"] = constraint;
    details["measured"] = measured;
    return make_error(kMviBudgetExceeded,
                      "Response exceeds declared budget (" + std::string(constraint) + " " +
                          std::to_string(limit) + ", measured " + std::to_string(measured) + ")",
                      std::move(details));
  };
  if (!options.allow_truncation || !std::isfinite(estimate_tokens(envelope.at("result")))) {
    return exceeded();
  }

  // Work on a copy: a budget that cannot be met leaves the envelope as it was.
  json::object saved = envelope;
  // The warning and the estimate take bytes too: put them in first, so that the byte budget is
  // measured on the final shape (the numbers in the estimate are fixed below).
  json::object& meta = envelope["_meta"].as_object();
  json::array warnings = meta.contains("warnings") ? meta["warnings"].as_array() : json::array();
  warnings.push_back(json::object{{"code", "E_MVI_BUDGET_TRUNCATED"},
                                  {"message", "Response truncated to fit the declared budget"}});
  meta["warnings"] = std::move(warnings);
  json::object& ext = envelope.contains("_extensions") ? envelope["_extensions"].as_object()
                                                       : envelope["_extensions"].emplace_object();
  json::object estimate_ext{
      {"estimated", out.original_tokens},
      {"budget", budget.max_tokens ? json::value(*budget.max_tokens) : json::value(nullptr)},
      {"method", "character_based"},
      {"truncated", true},
      {"originalEstimate", out.original_tokens}};
  ext["x-lafs-token-estimate"] = estimate_ext;

  json::value& result = envelope["result"];
  for (json::array* list : lists_of(result)) {
    if (m.fits()) break;
    shrink(*list, m);
  }
  if (!m.fits() && result.is_object()) {
    // Then whole members, from the last one.
    auto& obj = result.get_object();
    while (!obj.empty() && !m.fits()) obj.erase(std::prev(obj.end()));
  }
  if (!m.fits()) {
    envelope = std::move(saved);
    return exceeded();
  }
  out.truncated = true;
  out.estimated_tokens = m.tokens();
  envelope["_extensions"].as_object()["x-lafs-token-estimate"].as_object()["estimated"] =
      out.estimated_tokens;
  if (budget.max_bytes && m.bytes() > *budget.max_bytes) {
    // Writing the final estimate can add digits; drop one more item if it tipped over.
    envelope = std::move(saved);
    return exceeded();
  }
  out.bytes = m.bytes();
  out.items = largest_list(envelope.at("result"));
  return out;
}

}  // namespace hearth::lafs
