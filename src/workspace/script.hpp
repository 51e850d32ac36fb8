#pragma once
/// What a script sees and what it did, with no I/O: the evaluation a JS worker runs for a
/// script (jsworker::EvaluateSource: its globals and the prelude that sets them up), and the new
/// state values read back from the worker's answer.
///
/// In the script's global (a fresh realm in a jailed worker; docs/workspace.md, "Scripts"):
/// - `r` states: read-only proxies on non-writable globals (any write, at any depth, throws
///   "NAME is read-only");
/// - `rw` states: plain copies, read back after the script;
/// - `w` states: never sent to the worker. Each is a proxy that records assignments of its
///   top-level members (and `delete`s), and the global's setter records a whole replacement;
///   every read, test or listing of it throws "NAME is write-only";
/// - private states: absent;
/// - the utilities' functions, `attempt_completion(result)`, `console`, `setTimeout`;
/// - `Date.now()`/`new Date()` throw unless the workspace grants time, and then give the
///   change's recorded time; `Math.random()` throws unless it grants randomness, and then is a
///   PRNG seeded by the change's recorded seed: a recorded script replays to the same patch;
/// - `readFile` and `fetch` (and `ctx`) only when the workspace grants files or network; without
///   the grant they throw saying so.

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "json/json.hpp"
#include "jsworker/protocol.hpp"
#include "workspace/definition.hpp"

namespace hearth::workspace {

/// What decides a run besides the script and the state: recorded with every change.
struct RunInputs {
  std::int64_t clock_ms = 0;  ///< Date's time when time is granted (0 otherwise)
  std::uint32_t seed = 0;     ///< Math.random's seed when randomness is granted
};

/// The evaluation for `script` over `state` (every state's committed value by name).
jsworker::EvaluateSource build_evaluation(const Definition& def, const json::object& state,
                                          const std::string& script, const RunInputs& inputs);

/// The prelude alone (the utilities' compile check runs it with an empty script).
std::string build_prelude(const Definition& def);

struct ScriptResult {
  json::object state;  ///< every state's value after the script (unchanged ones included)
  json::value output;  ///< what the script returned
  std::optional<json::value> completion;  ///< attempt_completion's result, when called
};

/// Reads the worker's answer: rw states' final values, w states' recorded writes applied to
/// their committed values. An rw state the script left undefined (or made unserialisable) is an
/// error naming it.
Result<ScriptResult> read_result(const Definition& def, const json::object& state,
                                 const jsworker::Returned& returned);

}  // namespace hearth::workspace
