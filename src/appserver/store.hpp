#pragma once
/// What the App Server keeps (docs/app-server.md): its sessions, their turns and every event, in
/// `<state>/apps/app-server.db`, so that a client that comes back reads the state and the events
/// it missed, and a retried start or turn (same idempotency key) finds the first one. Not
/// thread-safe: the App Server calls it from its one thread.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"
#include "storage/storage.hpp"

namespace hearth::appserver {

struct SessionRecord {
  std::string id;
  std::string app;
  std::string workspace;
  std::string entry;
  json::value business_ref;  ///< null when none
  std::string mode;          ///< new | resume | continue | fork
  std::string parent;        ///< the session continued or forked, empty for new
  std::string idempotency_key;
  std::string created_at;
  std::int64_t last_seq = 0;
  json::object to_json() const;
};

struct TurnRecord {
  std::string id;
  std::string session;
  std::string status;  ///< queued | running | waiting | completed | failed | cancelled
  json::value input;
  json::value output_schema;  ///< null: any result
  std::string capability;
  json::value result;  ///< the validated result, when completed
  json::value error;   ///< {code, message, data}, when failed
  std::string idempotency_key;
  std::string created_at;
  std::string ended_at;
  json::object to_json() const;
};

struct Event {
  std::string session;
  std::int64_t seq = 0;
  std::string turn;
  std::string type;
  std::string trace;
  std::string at;
  json::object payload;
  /// The agentSession/event params: {sessionId, turnId, seq, traceId, timestamp, type, payload}.
  json::object to_json() const;
};

class Store {
 public:
  /// On `engine`: the file on SQLite, the `hearth_app_server` schema on PostgreSQL, shared by
  /// every daemon of the database. `daemon` names this daemon (instance.hpp's daemon_id): the
  /// turns it starts are its own, and only those are failed when it starts again.
  static Result<std::unique_ptr<Store>> open(storage::Engine& engine,
                                             const std::filesystem::path& file, std::string daemon);
  /// The SQLite file (tests).
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& file);

  /// False when a session with the same idempotency key (app, workspace) was added first, by
  /// this daemon or another: the caller reads that one.
  Result<bool> add_session(const SessionRecord& session);
  Result<std::optional<SessionRecord>> session(const std::string& id);
  /// The session started with this key for the app and workspace, if any.
  Result<std::optional<SessionRecord>> session_by_key(const std::string& app,
                                                      const std::string& workspace,
                                                      const std::string& key);

  /// False when a turn of the session with the same idempotency key was added first.
  Result<bool> add_turn(const TurnRecord& turn);
  Status update_turn(const TurnRecord& turn);
  Result<std::optional<TurnRecord>> turn(const std::string& id);
  Result<std::optional<TurnRecord>> turn_by_key(const std::string& session, const std::string& key);
  Result<std::vector<TurnRecord>> turns(const std::string& session);
  /// Turns this daemon left running or waiting when it stopped: marked failed at start.
  Result<std::vector<TurnRecord>> interrupted();

  /// Appends an event with the session's next sequence number (set in `event`).
  Status append(Event& event);
  /// Appends events in one transaction (one flush to disk), each with its session's next
  /// sequence number, in order; an event whose session does not exist is left out (its seq 0).
  /// An error stores none.
  Status append(std::vector<Event>& events);
  /// The session's events after `after`, in order, at most `limit`.
  Result<std::vector<Event>> events(const std::string& session, std::int64_t after,
                                    std::int64_t limit = 10'000);

 private:
  Store(std::unique_ptr<storage::Database> db, std::string daemon)
      : db_(std::move(db)), daemon_(std::move(daemon)) {}
  std::unique_ptr<storage::Database> db_;
  std::string daemon_;
};

}  // namespace hearth::appserver
