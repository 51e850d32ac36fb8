#pragma once
/// Progressive disclosure (spec section 9): the request parameters `_fields`, `_expand`, `_mvi`
/// and `_budget`, projection of `result` to `_fields`, inline expansion, and the MVI projection of
/// a whole envelope.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "lafs/budget.hpp"
#include "lafs/registry.hpp"

namespace hearth::lafs {

/// How deep `_expand` paths may go ("owner.team.lead" is 3).
inline constexpr std::size_t kMaxExpandDepth = 3;
/// At most this many `_fields` / `_expand` entries.
inline constexpr std::size_t kMaxDisclosureEntries = 64;

/// The disclosure parameters of one request.
struct Disclosure {
  std::optional<std::vector<std::string>> fields;
  std::optional<std::vector<std::string>> expand;
  std::optional<Budget> budget;
  std::optional<Mvi> mvi;  ///< requested level; never kCustom (server-set only)
};

/// Reads `_fields`, `_expand`, `_mvi` and `_budget` from request parameters (other members are
/// ignored). Malformed values are E_VALIDATION_SCHEMA; more than kMaxExpandDepth segments in an
/// `_expand` path is E_MVI_BUDGET_EXCEEDED (spec 9.3).
Result<Disclosure> parse_disclosure(const json::object& params);

/// What apply_fields did.
struct FieldsOutcome {
  json::value result;
  std::vector<std::string> unknown;  ///< requested names found nowhere (omitted, spec 9.2)
};

/// Keeps only the named fields of `result` (spec 9.2): of each element when it is an array; of
/// the object itself when one of the names is among its keys; else of the entities one level
/// down (a wrapper such as {"task": {...}} or {"items": [...]}), keeping the wrapper's keys.
FieldsOutcome apply_fields(const json::value& result, const std::vector<std::string>& fields);

/// The expansions an operation offers: dotted paths ("owner", "owner.team") to resolvers that
/// return the value to inline at that path, given the object that will hold it.
class ExpansionCatalog {
 public:
  using Resolver = std::function<Result<json::value>(const json::value& parent)>;
  void add(std::string path, Resolver resolver);
  bool empty() const { return resolvers_.empty(); }
  std::vector<std::string> paths() const;
  const Resolver* find(std::string_view path) const;

 private:
  std::map<std::string, Resolver, std::less<>> resolvers_;
};

/// Inlines each requested expansion into `result` (an object, or an array of objects). An
/// unknown path is E_DISCLOSURE_UNKNOWN_FIELD with the available paths in its details; a path
/// deeper than `max_depth` is E_MVI_BUDGET_EXCEEDED. Parents are expanded before children.
Result<json::value> apply_expand(json::value result, const std::vector<std::string>& expand,
                                 const ExpansionCatalog& catalog,
                                 std::size_t max_depth = kMaxExpandDepth);

/// The server side of a request's disclosure parameters, on an envelope built by lafs::Builder:
/// `_expand` (resolved with `catalog`; any `_expand` on an operation without a catalog is
/// E_DISCLOSURE_UNKNOWN_FIELD), then `_fields` (result projected, `_meta.mvi` = custom, names found
/// nowhere listed in a `_meta.warnings` entry E_DISCLOSURE_UNKNOWN_FIELD), `_mvi` (the level in
/// `_meta.mvi` when there are no `_fields`), then `_budget` (enforce_budget). Only success
/// envelopes are projected and expanded; a failure envelope gets the level alone. Returns the LAFS
/// error of the first step that fails; the envelope is then unusable and the caller answers with
/// a failure envelope instead.
Status apply_disclosure(json::object& envelope, const Disclosure& disclosure,
                        const ExpansionCatalog& catalog = ExpansionCatalog{});

/// The MVI projection of a full envelope (spec 9.1.1-9.1.3): at `minimal`, `success`, `_meta`
/// with requestId, contextVersion (and sessionId, warnings when present), `result` on success,
/// the error's code, agentAction, retryAfterMs, details, escalationRequired; `standard` keeps
/// `$schema`, `result`, `page` and the whole error with timestamp, operation, requestId, mvi,
/// contextVersion in `_meta`; `full` and `custom` return the envelope unchanged. A projection
/// below `full` is a compact wire shape, not a schema-valid envelope: hearth's envelope mode sends
/// full envelopes (docs/lafs.md).
json::object project_mvi(const json::object& envelope, Mvi level);

}  // namespace hearth::lafs
