#pragma once
/// Where workspaces keep their state and history: the storage layer's database (one file under
/// the state dir). Blocking: call it from a blocking thread.
///
/// - `workspace_state`: each state's committed value, with the workspace's version.
/// - `workspace_history`: every script run with its outcome (committed, failed, rolled back),
///   the JSON Patch a committed change made and its inverse, the side effects it ran, its
///   console, the time and seed it ran with; source updates and reverts too.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"
#include "storage/group_commit.hpp"
#include "storage/storage.hpp"

namespace hearth::workspace {

struct HistoryEntry {
  std::int64_t seq = 0;                 ///< order of the entry in its workspace (from 1)
  std::optional<std::int64_t> version;  ///< the version a committed change made
  std::int64_t at_ms = 0;               ///< wall clock, ms since the epoch
  std::string actor;    ///< "agent:<run>", "rpc", "cli", "source:<service>/<endpoint>"
  std::string kind;     ///< "script", "revert", "source"
  std::string script;   ///< the script (empty for a source update)
  std::string outcome;  ///< "committed", "failed", "rolled_back"
  json::value error;    ///< the error object of a failed run, else null
  json::array patch;    ///< RFC 6902 over {state: value}; empty unless committed
  json::array inverse;
  json::array effects;  ///< [{service, endpoint, ok, compensated?, error?}]
  json::array console;  ///< [{level, message}]
  json::value output;   ///< what the script returned
  std::int64_t clock_ms = 0;
  std::int64_t seed = 0;
  std::int64_t elapsed_ms = 0;
  std::optional<std::int64_t> reverts;  ///< the version a revert undid

  json::object to_json() const;
};

struct Snapshot {
  bool exists = false;  ///< false: the workspace was never opened here
  std::int64_t version = 0;
  json::object state;
};

class Store {
 public:
  /// Opens (creating) the database and applies the workspace migrations: the file on SQLite,
  /// the `hearth_workspaces` schema on PostgreSQL (several daemons' workspaces of one name
  /// then share their state; a commit's version check is the database's, so exactly one of
  /// two daemons committing from the same version wins).
  static Result<std::unique_ptr<Store>> open(storage::Engine& engine,
                                             const std::filesystem::path& file);
  /// The file on SQLite (tests, the CLI without a daemon).
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& file);
  explicit Store(std::unique_ptr<storage::Database> db) : db_(std::move(db)) {}

  Result<Snapshot> load(const std::string& workspace);

  /// Makes `values` (every state's value; states no longer defined are dropped) the state of a
  /// workspace at `version`, with no history: the first open, or a definition that changed.
  Status reset(const std::string& workspace, std::int64_t version, const json::object& values);

  /// Commits a change in one transaction: the changed states' new values, version + 1, and the
  /// history entry (its seq and version are filled in). kConflict when the stored version is not
  /// `from_version` (another change came first).
  Status commit(const std::string& workspace, std::int64_t from_version,
                const std::map<std::string, json::value>& changed, HistoryEntry& entry);

  /// Records a run that committed nothing (its seq is filled in).
  Status record(const std::string& workspace, HistoryEntry& entry);

  /// Entries after `after_seq`, oldest first, at most `limit`.
  Result<std::vector<HistoryEntry>> history(const std::string& workspace, std::int64_t after_seq,
                                            std::size_t limit);

  /// The committed entry that made `version`; nullopt when there is none.
  Result<std::optional<HistoryEntry>> change(const std::string& workspace, std::int64_t version);

 private:
  Result<std::int64_t> next_seq(const std::string& workspace);
  Status insert(const std::string& workspace, const HistoryEntry& entry);
  /// `write` in a transaction: a group's, when several threads write at once (group_), else its
  /// own.
  Status in_transaction(const std::function<Status()>& write);
  Status commit_write(const std::string& workspace, std::int64_t from_version,
                      const std::map<std::string, json::value>& changed, HistoryEntry& entry);
  Status record_write(const std::string& workspace, HistoryEntry& entry);

  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<storage::GroupCommit> group_;  ///< null: each write its own transaction
};

}  // namespace hearth::workspace
