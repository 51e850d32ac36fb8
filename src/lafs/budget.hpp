#pragma once
/// Token budgets (spec section 9.5): the `_budget` request parameter, the normative token
/// estimate, and enforcement on a built envelope: truncation with a warning, or
/// E_MVI_BUDGET_EXCEEDED when the response cannot be brought within the budget.

#include <cstdint>
#include <optional>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::lafs {

/// `_budget`: at least one member, each a positive integer.
struct Budget {
  std::optional<std::uint64_t> max_tokens;
  std::optional<std::uint64_t> max_bytes;
  std::optional<std::uint64_t> max_items;
};

/// Largest budget value hearth accepts (spec: "servers MAY reject budgets exceeding limits").
inline constexpr std::uint64_t kMaxBudgetValue = std::uint64_t{1} << 40;

/// Depth past which the estimate is infinite (spec 9.5.4).
inline constexpr int kMaxEstimateDepth = 20;

/// Reads `_budget`; E_VALIDATION_SCHEMA (as -32602) naming the member when it is malformed.
Result<Budget> parse_budget(const json::value& budget);

/// The spec's estimate: null and booleans 1, numbers max(1, digits / 4), strings
/// max(1, graphemes / 4), arrays 2 + sum(item + 1), objects 2 + sum(key + 2 + value); infinite
/// below depth 20. Fractional: callers round up.
double estimate_tokens(const json::value& value);

/// What enforce_budget did.
struct BudgetOutcome {
  bool truncated = false;
  std::uint64_t estimated_tokens = 0;  ///< of `result`, after truncation
  std::uint64_t original_tokens = 0;   ///< of `result`, before
  std::uint64_t bytes = 0;             ///< of the whole serialised envelope, after
  std::uint64_t items = 0;             ///< largest list in `result`, after
};

struct BudgetOptions {
  /// When false, a response over budget fails instead of being truncated.
  bool allow_truncation = true;
};

/// Brings the envelope (an object built by lafs::Builder, success or not) within `budget`.
/// Tokens and items are measured on `result` (what the server controls); bytes on the whole
/// serialised envelope. Truncation drops trailing list items (from the longest list first) and
/// then trailing members of `result`, adds the warning E_MVI_BUDGET_TRUNCATED to `_meta.warnings`
/// and the estimate to `_extensions["x-lafs-token-estimate"]`. When that cannot satisfy the
/// budget: E_MVI_BUDGET_EXCEEDED with details {estimatedTokens, budget, excessTokens, constraint}
/// and the envelope is left as it was.
Result<BudgetOutcome> enforce_budget(json::object& envelope, const Budget& budget,
                                     BudgetOptions options = {});

}  // namespace hearth::lafs
