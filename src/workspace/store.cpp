#include "workspace/store.hpp"

namespace hearth::workspace {
namespace {

const std::vector<storage::Migration>& migrations() {
  static const std::vector<storage::Migration> kMigrations = {{1, R"SQL(
CREATE TABLE workspace (
  id TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);
CREATE TABLE workspace_state (
  workspace TEXT NOT NULL REFERENCES workspace(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (workspace, name)
);
CREATE TABLE workspace_history (
  workspace TEXT NOT NULL REFERENCES workspace(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  version INTEGER,
  at_ms INTEGER NOT NULL,
  actor TEXT NOT NULL,
  kind TEXT NOT NULL,
  script TEXT NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT,
  patch TEXT NOT NULL,
  inverse TEXT NOT NULL,
  effects TEXT NOT NULL,
  console TEXT NOT NULL,
  output TEXT,
  clock_ms INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  elapsed_ms INTEGER NOT NULL,
  reverts INTEGER,
  PRIMARY KEY (workspace, seq)
);
CREATE UNIQUE INDEX workspace_history_version ON workspace_history (workspace, version)
  WHERE version IS NOT NULL;
)SQL"}};
  return kMigrations;
}

std::string text(const json::value& v) {
  return json::serialize(v);
}

json::value parse_or_null(const storage::Value& v) {
  const auto* s = std::get_if<std::string>(&v);
  if (s == nullptr) return nullptr;
  auto parsed = json::parse_text(*s);
  return parsed.ok() ? std::move(parsed).value() : json::value(nullptr);
}

json::array parse_array(const storage::Value& v) {
  auto parsed = parse_or_null(v);
  return parsed.is_array() ? std::move(parsed.get_array()) : json::array();
}

std::int64_t int_of(const storage::Value& v) {
  const auto* n = std::get_if<std::int64_t>(&v);
  return n != nullptr ? *n : 0;
}

std::string string_of(const storage::Value& v) {
  const auto* s = std::get_if<std::string>(&v);
  return s != nullptr ? *s : std::string();
}

storage::Value optional_int(const std::optional<std::int64_t>& v) {
  return v ? storage::Value(*v) : storage::Value(nullptr);
}

constexpr std::string_view kColumns =
    "seq, version, at_ms, actor, kind, script, outcome, error, patch, inverse, effects, console, "
    "output, clock_ms, seed, elapsed_ms, reverts";

HistoryEntry entry_of(const storage::Row& row) {
  HistoryEntry e;
  e.seq = int_of(row[0]);
  if (std::holds_alternative<std::int64_t>(row[1])) e.version = int_of(row[1]);
  e.at_ms = int_of(row[2]);
  e.actor = string_of(row[3]);
  e.kind = string_of(row[4]);
  e.script = string_of(row[5]);
  e.outcome = string_of(row[6]);
  e.error = parse_or_null(row[7]);
  e.patch = parse_array(row[8]);
  e.inverse = parse_array(row[9]);
  e.effects = parse_array(row[10]);
  e.console = parse_array(row[11]);
  e.output = parse_or_null(row[12]);
  e.clock_ms = int_of(row[13]);
  e.seed = int_of(row[14]);
  e.elapsed_ms = int_of(row[15]);
  if (std::holds_alternative<std::int64_t>(row[16])) e.reverts = int_of(row[16]);
  return e;
}

}  // namespace

json::object HistoryEntry::to_json() const {
  json::object o;
  o["seq"] = seq;
  o["version"] = version ? json::value(*version) : json::value(nullptr);
  o["at"] = at_ms;
  o["actor"] = actor;
  o["kind"] = kind;
  if (!script.empty()) o["script"] = script;
  o["outcome"] = outcome;
  if (!error.is_null()) o["error"] = error;
  o["patch"] = patch;
  o["inverse"] = inverse;
  o["effects"] = effects;
  o["console"] = console;
  if (!output.is_null()) o["output"] = output;
  o["clockMs"] = clock_ms;
  o["seed"] = seed;
  o["elapsedMs"] = elapsed_ms;
  if (reverts) o["reverts"] = *reverts;
  return o;
}

Result<std::unique_ptr<Store>> Store::open(storage::Engine& engine,
                                           const std::filesystem::path& file) {
  HEARTH_ASSIGN_OR_RETURN(auto db, engine.open("workspaces", file));
  HEARTH_RETURN_IF_ERROR(db->migrate("workspace", migrations()));
  auto store = std::make_unique<Store>(std::move(db));
  // One SQLite connection serialises the daemon's writers: changes to several workspaces at
  // once share a transaction and its flush (storage/group_commit.hpp). A shared engine
  // (PostgreSQL) has a connection a writer, and the server groups its own commits.
  if (!engine.shared()) store->group_ = std::make_unique<storage::GroupCommit>(*store->db_);
  return store;
}

Result<std::unique_ptr<Store>> Store::open(const std::filesystem::path& file) {
  return open(*storage::sqlite_engine(), file);
}

Result<Snapshot> Store::load(const std::string& workspace) {
  Snapshot snap;
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_->query("SELECT version FROM workspace WHERE id = ?", {workspace}));
  if (rows.empty()) return snap;
  snap.exists = true;
  snap.version = int_of(rows[0][0]);
  HEARTH_ASSIGN_OR_RETURN(
      auto states,
      db_->query("SELECT name, value FROM workspace_state WHERE workspace = ?", {workspace}));
  for (const auto& row : states) {
    auto value = json::parse_text(string_of(row[1]));
    if (!value.ok()) {
      return Error::make(
          ErrorCode::kInternalError,
          "workspace " + workspace + ": the stored value of " + string_of(row[0]) + " is not JSON");
    }
    snap.state[string_of(row[0])] = std::move(value).value();
  }
  return snap;
}

Status Store::reset(const std::string& workspace, std::int64_t version,
                    const json::object& values) {
  HEARTH_ASSIGN_OR_RETURN(auto tx, db_->begin());
  HEARTH_RETURN_IF_ERROR(
      db_->execute("INSERT INTO workspace (id, version) VALUES (?, ?) "
                   "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                   {workspace, version}));
  HEARTH_RETURN_IF_ERROR(
      db_->execute("DELETE FROM workspace_state WHERE workspace = ?", {workspace}));
  for (const auto& kv : values) {
    HEARTH_RETURN_IF_ERROR(
        db_->execute("INSERT INTO workspace_state (workspace, name, value) VALUES (?, ?, ?)",
                     {workspace, std::string(kv.key()), text(kv.value())}));
  }
  return tx->commit();
}

Result<std::int64_t> Store::next_seq(const std::string& workspace) {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_->query("SELECT COALESCE(MAX(seq), 0) + 1 FROM workspace_history "
                                     "WHERE workspace = ?",
                                     {workspace}));
  return rows.empty() ? std::int64_t{1} : int_of(rows[0][0]);
}

Status Store::insert(const std::string& workspace, const HistoryEntry& e) {
  const std::string sql = "INSERT INTO workspace_history (workspace, " + std::string(kColumns) +
                          ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  HEARTH_RETURN_IF_ERROR(db_->execute(
      sql, {workspace, e.seq, optional_int(e.version), e.at_ms, e.actor, e.kind, e.script,
            e.outcome, e.error.is_null() ? storage::Value(nullptr) : storage::Value(text(e.error)),
            text(e.patch), text(e.inverse), text(e.effects), text(e.console),
            e.output.is_null() ? storage::Value(nullptr) : storage::Value(text(e.output)),
            e.clock_ms, e.seed, e.elapsed_ms, optional_int(e.reverts)}));
  return {};
}

Status Store::commit(const std::string& workspace, std::int64_t from_version,
                     const std::map<std::string, json::value>& changed, HistoryEntry& entry) {
  const std::function<Status()> write = [&] {
    return commit_write(workspace, from_version, changed, entry);
  };
  return in_transaction(write);
}

Status Store::record(const std::string& workspace, HistoryEntry& entry) {
  const std::function<Status()> write = [&] { return record_write(workspace, entry); };
  return in_transaction(write);
}

Status Store::in_transaction(const std::function<Status()>& write) {
  if (group_) return group_->run(write);
  HEARTH_ASSIGN_OR_RETURN(auto tx, db_->begin());
  HEARTH_RETURN_IF_ERROR(write());
  return tx->commit();
}

Status Store::commit_write(const std::string& workspace, std::int64_t from_version,
                           const std::map<std::string, json::value>& changed, HistoryEntry& entry) {
  // The version check and the new version in one statement, which holds the workspace's row
  // until the commit: of two daemons committing from the same version, the second finds the
  // row changed when the first commits and updates nothing.
  HEARTH_ASSIGN_OR_RETURN(
      auto updated, db_->execute("UPDATE workspace SET version = ? WHERE id = ? AND version = ?",
                                 {from_version + 1, workspace, from_version}));
  if (updated != 1) {
    HEARTH_ASSIGN_OR_RETURN(auto rows,
                            db_->query("SELECT version FROM workspace WHERE id = ?", {workspace}));
    const std::int64_t stored = rows.empty() ? -1 : int_of(rows[0][0]);
    return Error::make(ErrorCode::kConflict,
                       "workspace " + workspace + " is at version " + std::to_string(stored) +
                           ", not " + std::to_string(from_version),
                       json::object{{"expectedVersion", from_version}, {"version", stored}});
  }
  HEARTH_ASSIGN_OR_RETURN(entry.seq, next_seq(workspace));
  entry.version = from_version + 1;
  for (const auto& [name, value] : changed) {
    HEARTH_RETURN_IF_ERROR(
        db_->execute("INSERT INTO workspace_state (workspace, name, value) VALUES (?, ?, ?) "
                     "ON CONFLICT (workspace, name) DO UPDATE SET value = excluded.value",
                     {workspace, name, text(value)}));
  }
  return insert(workspace, entry);
}

Status Store::record_write(const std::string& workspace, HistoryEntry& entry) {
  // The workspace's row first (an update that changes nothing still locks it), so that two
  // daemons recording at once take their sequence numbers one after the other.
  HEARTH_RETURN_IF_ERROR(
      db_->execute("UPDATE workspace SET version = version WHERE id = ?", {workspace}));
  HEARTH_ASSIGN_OR_RETURN(entry.seq, next_seq(workspace));
  entry.version.reset();
  return insert(workspace, entry);
}

Result<std::vector<HistoryEntry>> Store::history(const std::string& workspace,
                                                 std::int64_t after_seq, std::size_t limit) {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_->query("SELECT " + std::string(kColumns) +
                                         " FROM workspace_history WHERE workspace = ? AND seq > ? "
                                         "ORDER BY seq LIMIT ?",
                                     {workspace, after_seq, static_cast<std::int64_t>(limit)}));
  std::vector<HistoryEntry> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(entry_of(row));
  return out;
}

Result<std::optional<HistoryEntry>> Store::change(const std::string& workspace,
                                                  std::int64_t version) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT " + std::string(kColumns) +
                                " FROM workspace_history WHERE workspace = ? AND version = ?",
                            {workspace, version}));
  if (rows.empty()) return std::optional<HistoryEntry>();
  return std::optional<HistoryEntry>(entry_of(rows[0]));
}

}  // namespace hearth::workspace
