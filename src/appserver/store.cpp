#include "appserver/store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <system_error>

namespace hearth::appserver {

namespace fs = std::filesystem;
using storage::Row;
using storage::Value;

namespace {

const std::vector<storage::Migration>& migrations() {
  static const std::vector<storage::Migration> kMigrations = {
      {1,
       "CREATE TABLE as_sessions (id TEXT PRIMARY KEY, app TEXT NOT NULL, workspace TEXT NOT "
       "NULL, entry TEXT NOT NULL, business_ref TEXT NOT NULL, mode TEXT NOT NULL, parent TEXT "
       "NOT NULL, idem_key TEXT NOT NULL, created_at TEXT NOT NULL, last_seq INTEGER NOT NULL "
       "DEFAULT 0);"
       "CREATE UNIQUE INDEX as_sessions_key ON as_sessions (app, workspace, idem_key) WHERE "
       "idem_key != '';"
       "CREATE TABLE as_turns (id TEXT PRIMARY KEY, session TEXT NOT NULL REFERENCES "
       "as_sessions(id), status TEXT NOT NULL, input TEXT NOT NULL, output_schema TEXT NOT NULL, "
       "capability TEXT NOT NULL, result TEXT NOT NULL, error TEXT NOT NULL, idem_key TEXT NOT "
       "NULL, created_at TEXT NOT NULL, ended_at TEXT NOT NULL);"
       "CREATE UNIQUE INDEX as_turns_key ON as_turns (session, idem_key) WHERE idem_key != '';"
       "CREATE INDEX as_turns_session ON as_turns (session, created_at);"
       "CREATE TABLE as_events (session TEXT NOT NULL REFERENCES as_sessions(id), seq INTEGER "
       "NOT NULL, turn TEXT NOT NULL, type TEXT NOT NULL, trace TEXT NOT NULL, at TEXT NOT NULL, "
       "payload TEXT NOT NULL, PRIMARY KEY (session, seq));"},
      // The daemon running a turn, so that one daemon's restart fails only its own turns when
      // several share the database.
      {2, "ALTER TABLE as_turns ADD COLUMN daemon TEXT NOT NULL DEFAULT ''"},
      // The order turns were added in, whichever daemon added them (SQLite's rowid was it).
      {3,
       "ALTER TABLE as_turns ADD COLUMN ord INTEGER NOT NULL DEFAULT 0;"
       "UPDATE as_turns SET ord = rowid;",
       "ALTER TABLE as_turns ADD COLUMN ord BIGINT NOT NULL DEFAULT 0;"},
  };
  return kMigrations;
}

std::string text(const Value& v) {
  const auto* s = std::get_if<std::string>(&v);
  return s != nullptr ? *s : std::string();
}

std::int64_t integer(const Value& v) {
  const auto* i = std::get_if<std::int64_t>(&v);
  return i != nullptr ? *i : 0;
}

json::value parsed(const Value& v) {
  boost::system::error_code ec;
  auto out = json::parse(text(v), ec);
  return ec ? json::value(nullptr) : out;
}

constexpr std::string_view kSessionColumns =
    "id, app, workspace, entry, business_ref, mode, parent, idem_key, created_at, last_seq";
constexpr std::string_view kTurnColumns =
    "id, session, status, input, output_schema, capability, result, error, idem_key, created_at, "
    "ended_at";

SessionRecord session_of(const Row& r) {
  SessionRecord s;
  s.id = text(r[0]);
  s.app = text(r[1]);
  s.workspace = text(r[2]);
  s.entry = text(r[3]);
  s.business_ref = parsed(r[4]);
  s.mode = text(r[5]);
  s.parent = text(r[6]);
  s.idempotency_key = text(r[7]);
  s.created_at = text(r[8]);
  s.last_seq = integer(r[9]);
  return s;
}

TurnRecord turn_of(const Row& r) {
  TurnRecord t;
  t.id = text(r[0]);
  t.session = text(r[1]);
  t.status = text(r[2]);
  t.input = parsed(r[3]);
  t.output_schema = parsed(r[4]);
  t.capability = text(r[5]);
  t.result = parsed(r[6]);
  t.error = parsed(r[7]);
  t.idempotency_key = text(r[8]);
  t.created_at = text(r[9]);
  t.ended_at = text(r[10]);
  return t;
}

storage::Params turn_params(const TurnRecord& t) {
  return {t.id,
          t.session,
          t.status,
          json::serialize(t.input),
          json::serialize(t.output_schema),
          t.capability,
          json::serialize(t.result),
          json::serialize(t.error),
          t.idempotency_key,
          t.created_at,
          t.ended_at};
}

std::vector<TurnRecord> turns_of(const std::vector<Row>& rows) {
  std::vector<TurnRecord> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(turn_of(r));
  return out;
}

template <class T, class F>
Result<std::optional<T>> first(Result<std::vector<Row>> rows, F convert) {
  if (!rows.ok()) return std::move(rows).error();
  if (rows.value().empty()) return std::optional<T>();
  return std::optional<T>(convert(rows.value().front()));
}

}  // namespace

json::object SessionRecord::to_json() const {
  json::object o{{"sessionId", id},
                 {"appId", app},
                 {"workspaceId", workspace},
                 {"entryKey", entry},
                 {"mode", mode},
                 {"createdAt", created_at},
                 {"lastSeq", last_seq},
                 {"businessObjectRef", business_ref}};
  o["parentSessionId"] = parent.empty() ? json::value(nullptr) : json::value(parent);
  return o;
}

json::object TurnRecord::to_json() const {
  json::object o{{"turnId", id},   {"sessionId", session},    {"status", status},
                 {"input", input}, {"createdAt", created_at}, {"capabilityId", capability}};
  if (!output_schema.is_null()) o["outputSchema"] = output_schema;
  if (!result.is_null()) o["result"] = result;
  if (!error.is_null()) o["error"] = error;
  if (!ended_at.empty()) o["endedAt"] = ended_at;
  return o;
}

json::object Event::to_json() const {
  return json::object{
      {"sessionId", session}, {"turnId", turn.empty() ? json::value(nullptr) : json::value(turn)},
      {"seq", seq},           {"traceId", trace},
      {"timestamp", at},      {"type", type},
      {"payload", payload}};
}

Result<std::unique_ptr<Store>> Store::open(storage::Engine& engine, const fs::path& file,
                                           std::string daemon) {
  if (!engine.shared()) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    ::chmod(file.parent_path().c_str(), 0700);
  }
  HEARTH_ASSIGN_OR_RETURN(auto db, engine.open("app_server", file));
  HEARTH_RETURN_IF_ERROR(db->migrate("app_server", migrations()));
  return std::unique_ptr<Store>(new Store(std::move(db), std::move(daemon)));
}

Result<std::unique_ptr<Store>> Store::open(const fs::path& file) {
  return open(*storage::sqlite_engine(), file, "");
}

Result<bool> Store::add_session(const SessionRecord& s) {
  // A key another call (or another daemon) used first adds nothing: the database decides.
  HEARTH_ASSIGN_OR_RETURN(
      auto n, db_->execute("INSERT INTO as_sessions (" + std::string(kSessionColumns) +
                               ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                           {s.id, s.app, s.workspace, s.entry, json::serialize(s.business_ref),
                            s.mode, s.parent, s.idempotency_key, s.created_at, s.last_seq}));
  return n == 1;
}

Result<std::optional<SessionRecord>> Store::session(const std::string& id) {
  return first<SessionRecord>(
      db_->query("SELECT " + std::string(kSessionColumns) + " FROM as_sessions WHERE id = ?", {id}),
      session_of);
}

Result<std::optional<SessionRecord>> Store::session_by_key(const std::string& app,
                                                           const std::string& workspace,
                                                           const std::string& key) {
  return first<SessionRecord>(
      db_->query("SELECT " + std::string(kSessionColumns) +
                     " FROM as_sessions WHERE app = ? AND workspace = ? AND idem_key = ?",
                 {app, workspace, key}),
      session_of);
}

Result<bool> Store::add_turn(const TurnRecord& t) {
  auto params = turn_params(t);
  params.emplace_back(daemon_);
  // Microseconds of the wall clock: turns of one session are added one after the other.
  params.emplace_back(
      static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count()));
  HEARTH_ASSIGN_OR_RETURN(
      auto n, db_->execute("INSERT INTO as_turns (" + std::string(kTurnColumns) +
                               ", daemon, ord) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                               "ON CONFLICT DO NOTHING",
                           params));
  return n == 1;
}

Status Store::update_turn(const TurnRecord& t) {
  HEARTH_ASSIGN_OR_RETURN(
      auto n, db_->execute("UPDATE as_turns SET status = ?, result = ?, error = ?, ended_at = ? "
                           "WHERE id = ?",
                           {t.status, json::serialize(t.result), json::serialize(t.error),
                            t.ended_at, t.id}));
  (void)n;
  return {};
}

Result<std::optional<TurnRecord>> Store::turn(const std::string& id) {
  return first<TurnRecord>(
      db_->query("SELECT " + std::string(kTurnColumns) + " FROM as_turns WHERE id = ?", {id}),
      turn_of);
}

Result<std::optional<TurnRecord>> Store::turn_by_key(const std::string& session,
                                                     const std::string& key) {
  return first<TurnRecord>(db_->query("SELECT " + std::string(kTurnColumns) +
                                          " FROM as_turns WHERE session = ? AND idem_key = ?",
                                      {session, key}),
                           turn_of);
}

Result<std::vector<TurnRecord>> Store::turns(const std::string& session) {
  HEARTH_ASSIGN_OR_RETURN(auto rows, db_->query("SELECT " + std::string(kTurnColumns) +
                                                    " FROM as_turns WHERE session = ? ORDER BY "
                                                    "created_at, ord, id",
                                                {session}));
  return turns_of(rows);
}

Result<std::vector<TurnRecord>> Store::interrupted() {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_->query("SELECT " + std::string(kTurnColumns) +
                                         " FROM as_turns WHERE status IN ('queued', 'running', "
                                         "'waiting') AND daemon = ?",
                                     {daemon_}));
  return turns_of(rows);
}

Status Store::append(Event& e) {
  std::vector<Event> one;
  one.push_back(std::move(e));
  HEARTH_RETURN_IF_ERROR(append(one));
  e = std::move(one.front());
  if (e.seq == 0) return Error::make(ErrorCode::kInternalError, "no session " + e.session);
  return {};
}

Status Store::append(std::vector<Event>& events) {
  // Sessions in one order whoever appends (their ids sorted, each session's events in the
  // order given): two daemons appending for the same sessions at once then take the sessions'
  // rows in the same order, and neither waits for a row the other holds.
  std::vector<std::size_t> order(events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&events](std::size_t a, std::size_t b) {
    return events[a].session < events[b].session;
  });
  HEARTH_ASSIGN_OR_RETURN(auto tx, db_->begin());
  for (const std::size_t i : order) {
    Event& e = events[i];
    // The increment first: it holds the session's row until the commit, so events appended by
    // two daemons at once take consecutive numbers.
    HEARTH_ASSIGN_OR_RETURN(
        auto n,
        db_->execute("UPDATE as_sessions SET last_seq = last_seq + 1 WHERE id = ?", {e.session}));
    if (n != 1) {
      e.seq = 0;  // no such session: this one is not stored, the others are
      continue;
    }
    HEARTH_ASSIGN_OR_RETURN(
        auto rows, db_->query("SELECT last_seq FROM as_sessions WHERE id = ?", {e.session}));
    e.seq = integer(rows.at(0)[0]);
    HEARTH_ASSIGN_OR_RETURN(
        auto m, db_->execute(
                    "INSERT INTO as_events (session, seq, turn, type, trace, at, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    {e.session, e.seq, e.turn, e.type, e.trace, e.at, json::serialize(e.payload)}));
    (void)m;
  }
  return tx->commit();
}

Result<std::vector<Event>> Store::events(const std::string& session, std::int64_t after,
                                         std::int64_t limit) {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_->query("SELECT session, seq, turn, type, trace, at, payload FROM "
                                     "as_events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?",
                                     {session, after, limit}));
  std::vector<Event> out;
  for (const auto& r : rows) {
    Event e;
    e.session = text(r[0]);
    e.seq = integer(r[1]);
    e.turn = text(r[2]);
    e.type = text(r[3]);
    e.trace = text(r[4]);
    e.at = text(r[5]);
    auto payload = parsed(r[6]);
    if (payload.is_object()) e.payload = std::move(payload.as_object());
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace hearth::appserver
