#pragma once
/// The context ledger (spec section 8, schemas/v1/context-ledger.schema.json): the state an agent
/// carries across the steps of a task. Versions go up by exactly one per accepted mutation;
/// accepted constraints are never silently dropped; a mutation that lacks required context fails
/// with E_CONTEXT_MISSING, one made against an old version with E_CONTEXT_STALE.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::lafs {

/// One accepted mutation (a ledger entry).
struct LedgerEntry {
  std::string entry_id;
  std::uint64_t version = 0;
  std::string timestamp;
  std::string operation;
  std::string request_id;
  json::object context_delta;
};

/// A mutation an operation asks the ledger to accept.
struct Mutation {
  std::string operation;  ///< required
  std::string request_id;
  /// The version the caller's context was read at; required (E_CONTEXT_MISSING when absent),
  /// must equal the ledger's (E_CONTEXT_STALE when older or newer).
  std::optional<std::uint64_t> expected_version;
  /// Members of the change: objective, constraints (the full list of active constraints after
  /// this step), removedConstraints (those the step drops on purpose), references, decisions,
  /// openIssues, state, and anything else the operation records.
  json::object delta;
  std::string timestamp;  ///< empty: now
};

/// The current state folded from the entries.
struct ContextState {
  json::value objective = nullptr;
  json::array constraints;
  json::array references;
  json::array decisions;
  json::array open_issues;
  json::object state;
};

/// Projection modes of GET /_lafs/context/{ledgerId} (spec 8.1.1).
enum class LedgerProjection { kFull, kDelta, kSummary };

class ContextLedger {
 public:
  /// `required_fields` lists delta members every mutation must carry (e.g. "objective" for the
  /// first step of a task); the spec's minimum context is always kept in the state.
  explicit ContextLedger(std::string ledger_id, std::size_t max_entries = 100,
                         std::vector<std::string> required_fields = {});

  const std::string& id() const { return ledger_id_; }
  std::uint64_t version() const { return version_; }
  const ContextState& state() const { return state_; }
  const std::vector<LedgerEntry>& entries() const { return entries_; }

  /// Accepts a mutation and returns the new version (old + 1). Errors (the ledger unchanged):
  /// E_CONTEXT_MISSING when operation, expected_version or a required field is missing, or when
  /// `constraints` leaves out an active constraint that `removedConstraints` does not name;
  /// E_CONTEXT_STALE when expected_version is not the current version.
  Result<std::uint64_t> apply(const Mutation& mutation);

  /// Checks a read-only step's view of the context: E_CONTEXT_MISSING without a version,
  /// E_CONTEXT_STALE when it is not the current one.
  Status check_current(std::optional<std::uint64_t> version) const;

  /// The ledger as context-ledger.schema.json describes it.
  json::object to_json() const;

  /// `full`: the ledger; `delta`: entries after `since_version` (at most `limit`), with the
  /// constraints removed since then; `summary`: ledgerId, version, checksum, entryCount.
  json::object project(LedgerProjection mode, std::uint64_t since_version = 0,
                       std::size_t limit = 100) const;

  /// `_extensions.contextLedger` for an envelope about this ledger: {required, version,
  /// previousVersion, removedConstraints} (what the conformance runner checks); `stale` is set
  /// when the step failed with E_CONTEXT_STALE.
  json::object envelope_extension(std::uint64_t previous_version, const json::array& removed,
                                  bool stale = false) const;

  /// "fnv1a64:<hex>" over the canonical form of the entries: the same entries give the same sum.
  std::string checksum() const;

 private:
  std::string ledger_id_;
  std::size_t max_entries_;
  std::vector<std::string> required_fields_;
  std::uint64_t version_ = 0;
  std::string created_at_;
  std::string updated_at_;
  ContextState state_;
  std::vector<LedgerEntry> entries_;
  std::uint64_t compacted_ =
      0;  ///< entries dropped past max_entries (their effect stays in state_)
  /// (version, constraint) for every constraint removed on purpose, for delta projections.
  std::vector<std::pair<std::uint64_t, json::value>> removed_;
};

}  // namespace hearth::lafs
