#pragma once
/// The worker process's side (hearth-js-worker): one JavaScript engine (js/engine.hpp) serving the
/// daemon's requests one at a time over stdin/stdout frames (jsworker/protocol.hpp). The daemon
/// starts it through the jail with a pool's permissions and replaces it when it crashes, runs out
/// of memory or ignores a time limit. Linked only into the worker executable, never sanitized
/// (see src/jsworker/CMakeLists.txt).

#include <filesystem>
#include <string>

namespace hearth::jsworker {

/// Serves frames on stdin/stdout until stdin ends: Init first (answered by Ready), then
/// CallFunction and EvaluateSource. Returns the process's exit code: 0 at the end of input, 2 for
/// a malformed frame, 3 when the engine cannot start. Anything else written to fd 1 goes to
/// stderr (frames keep the original stdout).
int serve();

/// Prints the microseconds one fresh global costs, as calls get it (with `eager_classes`, every
/// standard class initialised up front: what hearth avoids). Returns the exit code.
int bench_fresh_global(int iterations, bool eager_classes);

/// How bench_call makes each call's world: a fresh realm and module instance (the default
/// isolation), the module instance kept between calls (`isolation: "worker"`), or a fresh realm
/// prepared before the call, as a worker does while idle (Engine::prepare; only the call is
/// timed).
enum class BenchMode { kFresh, kKept, kPrepared };

/// Runs `iterations` calls of `function` of `module` (relative to `service_dir`) with
/// `input_json` in this process, without the daemon or pipes, and prints the microseconds per
/// call. Returns the exit code.
int bench_call(const std::filesystem::path& service_dir, const std::string& module,
               const std::string& function, int iterations, const std::string& input_json,
               BenchMode mode = BenchMode::kFresh);

}  // namespace hearth::jsworker
