#pragma once
/// A virtual workspace being served (docs/workspace.md): its definition, its committed state and
/// version, the JS worker pool its scripts run in, and the changes made to it.
///
/// A change (a script, or a revert) goes, one at a time per workspace:
///   1. the script runs in a jailed JS worker (script.hpp) under the workspace's limits;
///   2. every changed state is checked against its schema (and the size limit; no member may
///      be named __proto__); any failure commits nothing;
///   3. side effects run in declaration order (state by state, call by call); a call's result may
///      replace an r or private state (`assign`, validated too). The first failure runs the
///      compensations of the calls that succeeded, in reverse order, and commits nothing;
///   4. the new values, the version and the history entry are committed in one transaction;
///   5. listeners are told (workspace/changed); sources that refresh after a commit run, each
///      a change of its own.
/// A dry run stops before 3 and reports what would run. Failures are recorded in the history
/// too. Reads (state, render) take the last committed snapshot and never wait for a change.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/async_mutex.hpp"
#include "common/blocking.hpp"
#include "common/result.hpp"
#include "json/json.hpp"
#include "jsworker/pool.hpp"
#include "workspace/definition.hpp"
#include "workspace/render.hpp"
#include "workspace/store.hpp"

namespace hearth::workspace {

/// What a workspace needs of LAVS: calling endpoints (side effects, compensations, sources) and
/// subscribing (live sources). The daemon implements it over its services.
class Services {
 public:
  virtual ~Services() = default;
  /// `confidential`: the input holds a value the model may not read (a private or write-only
  /// state), so whatever the call tells others (views' agent actions) must leave the input and
  /// the result out.
  virtual boost::asio::awaitable<Result<json::value>> call(std::string service,
                                                           std::string endpoint, json::value input,
                                                           std::string actor,
                                                           bool confidential) = 0;
  /// Items of the subscription go to `on_item` (any thread) until the returned handle is
  /// dropped.
  virtual boost::asio::awaitable<Result<std::shared_ptr<void>>> subscribe(
      std::string service, std::string endpoint, json::value input,
      std::function<void(json::value)> on_item) = 0;
};

struct ExecuteRequest {
  std::string script;
  std::optional<std::int64_t> expected_version;
  bool dry_run = false;
  std::string actor = "rpc";
};

/// What a change did, told to listeners.
struct ChangeEvent {
  std::string workspace;
  std::int64_t version = 0;
  std::vector<std::string> changed;
  std::string actor;
  std::string kind;  ///< "script", "revert", "source"
  /// Committed by another daemon sharing the database (refresh()): told to this daemon's
  /// listeners, never sent on to the others.
  bool remote = false;
};

class Workspace : public std::enable_shared_from_this<Workspace> {
 public:
  struct Options {
    std::shared_ptr<jsworker::Pool> pool;  ///< where scripts run (started by the caller)
    Store* store = nullptr;                ///< outlives the workspace
    BlockingExecutor* blocking = nullptr;  ///< for the store
    Services* services = nullptr;          ///< null: a workspace that calls LAVS cannot open
  };

  Workspace(const boost::asio::any_io_executor& executor, Definition definition, Options options);
  ~Workspace();

  /// Loads the stored state (resetting states the definition no longer accepts), checks the
  /// utilities compile, queries the sources and subscribes to the live ones.
  boost::asio::awaitable<Status> open();

  /// Runs a script. The result: {ok, version, changed, patch, effects, console, output,
  /// completion?, dryRun, elapsedMs}. Errors: -32602 (a state's schema: data {state, path,
  /// keyword, violations}), -32003 (the script threw: data {name, line, column, stack}; a side
  /// effect failed: data {effect, cause, compensated}; memory), -32002 (time), -32010 (version).
  boost::asio::awaitable<Result<json::object>> execute(ExecuteRequest request);

  /// Applies the inverse of the change that made `version` as a new change.
  boost::asio::awaitable<Result<json::object>> revert(std::int64_t version, std::string actor);

  /// Restores the model's states as they were at `version`: the inverses of every later change
  /// (newest first; source updates left alone) as one new change.
  boost::asio::awaitable<Result<json::object>> revert_to(std::int64_t version, std::string actor);

  /// A state's committed value as the model may see it: private states do not exist and
  /// write-only ones cannot be read (-32001) unless `operator_view`.
  Result<json::value> state(std::string_view name, bool operator_view) const;

  /// The view (render.hpp) of the committed state.
  std::string render(const RenderOptions& options) const;
  json::object render_object(const RenderOptions& options) const;

  boost::asio::awaitable<Result<std::vector<HistoryEntry>>> history(std::int64_t after_seq,
                                                                    std::size_t limit);

  /// Checks `result` against the completion schema (when there is one).
  Status check_completion(const json::value& result) const;

  const Definition& definition() const { return def_; }
  const std::string& name() const { return def_.name; }
  std::int64_t version() const;
  /// Problems met while opening or refreshing sources (shown to operators, not fatal).
  std::vector<std::string> notes() const;

  /// Told after every committed change (on the thread that committed it; must not block).
  /// Returns an id for remove_listener.
  std::uint64_t add_listener(std::function<void(const ChangeEvent&)> listener);
  void remove_listener(std::uint64_t id);

  /// Reads the committed state again (another daemon sharing the database committed a change,
  /// `actor`/`kind` as it said) and, when the stored version is newer than the one held, takes
  /// it and tells the listeners which states changed.
  boost::asio::awaitable<Status> refresh(std::string actor, std::string kind);
  /// Whether a refresh for `version` (0: unknown) is worth starting: false when the version
  /// held is already there, or when a refresh is waiting to start (it reads the newest state,
  /// so notices that come while it waits need no refresh of their own).
  bool wants_refresh(std::int64_t version);

  /// Ends live sources and refuses further changes.
  void close();

 private:
  struct Change;
  struct DoneEffect;
  struct StateDiff;
  /// A change's last stages: its states checked, its side effects run, committed (or, dry run
  /// or no difference, recorded), listeners told. The answer, or the error that ended it.
  boost::asio::awaitable<Result<json::object>> apply(Change change);
  /// The side effects of the `changed` states, in order, with results assigned into
  /// `change.after`. The first failure undoes the effects before it (compensate), is recorded
  /// as rolled back, and is the error. Otherwise the effects' reports.
  boost::asio::awaitable<Result<json::array>> run_effects(
      Change& change, const std::vector<const StateDef*>& changed);
  /// Compensates `done`, newest first, against `state`; a report of each.
  boost::asio::awaitable<json::array> compensate(const std::vector<DoneEffect>& done,
                                                 const json::object& state,
                                                 const std::string& actor);
  /// The states that differ between `change.before` and `change.after`, and the patch.
  StateDiff diff_states(const Change& change) const;
  /// The answer to a change that ran: everything but its version and whether it committed.
  json::object answer(const Change& change, const StateDiff& diff,
                      const json::array& effects) const;
  /// Commits `diff` with its history entry and makes it the committed state: the new version.
  /// On a conflict the committed state is reloaded, so that the next try starts there.
  boost::asio::awaitable<Result<std::int64_t>> commit_change(const Change& change,
                                                             const StateDiff& diff,
                                                             const json::array& effects);
  /// apply(), then (the mutex released) the sources that refresh after a commit.
  boost::asio::awaitable<Result<json::object>> finish(AsyncMutex::Guard guard, Change change);
  /// A revert of `version` starting from the committed state.
  Change revert_change(std::string actor, std::int64_t version, std::string_view what) const;
  /// Runs the sources that refresh after a commit when `result` committed (without the lock).
  boost::asio::awaitable<void> after_commit(const Result<json::object>& result);
  boost::asio::awaitable<Status> refresh_sources(bool opening);
  boost::asio::awaitable<Status> commit_source(const StateDef& state, json::value value);
  boost::asio::awaitable<Status> record_failure(Change& change, const Error& error);
  /// A history entry of `change` with what every outcome records.
  HistoryEntry entry_for(const Change& change, std::string outcome) const;
  /// Records an entry that commits nothing.
  boost::asio::awaitable<Status> record(HistoryEntry entry);
  /// An effect's input with its `$value` and `$state` references filled in. With `shown`, the
  /// same input as others may see it: a reference to a state the model may not read (`hidden`
  /// says which; `$value` is the value of `effect_state`) becomes kWithheld, and `touched` tells
  /// whether one was met.
  json::value resolve_input(const json::value& input, const json::value& changed_value,
                            const json::object& state) const;
  json::value shown_input(const json::value& input, const json::value& changed_value,
                          const json::object& state, const StateDef& effect_state,
                          bool& touched) const;
  void notify(const ChangeEvent& event);
  void add_note(std::string note);
  Result<json::value> from_source(const StateDef& s, const json::value& result) const;

  boost::asio::any_io_executor executor_;
  Definition def_;
  Options options_;
  AsyncMutex changes_;     ///< one change at a time
  mutable std::mutex mu_;  ///< guards the snapshot below, the listeners and notes
  std::int64_t version_ = 0;
  json::object state_;
  std::vector<std::pair<std::uint64_t, std::function<void(const ChangeEvent&)>>> listeners_;
  std::uint64_t next_listener_ = 1;
  std::vector<std::string> notes_;
  std::vector<std::shared_ptr<void>> subscriptions_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> refresh_waiting_{false};  ///< a refresh() that has not read yet
};

/// What answers, tool results, notifications and agent actions show in place of a value of a
/// state the model may not read (docs/workspace.md, "Visibility").
inline constexpr std::string_view kWithheld = "[withheld: not visible to the model]";

/// `patch` without the operations on states the model may not read (private and write-only
/// ones): what a patch looks like to anyone but the operator's own record.
json::array visible_patch(const Definition& def, const json::array& patch);

/// The -32602 error of the violations of one state's new value (and of values too large or
/// holding a __proto__ member): data {state, path, keyword, message, violations}.
std::optional<Error> check_state(const StateDef& state, const json::value& value,
                                 std::size_t max_bytes);

}  // namespace hearth::workspace
