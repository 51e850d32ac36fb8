#pragma once
/// The `function` handler kind (lavs-spec-v1 section 4.3): calls an exported JavaScript function
/// in a pool of warm `hearth-js-worker` processes (SpiderMonkey 102), started through the jail.
///
/// Handler object:
///   module    string, required  the module file, relative to the service folder (.mjs, .js, .cjs;
///                                TypeScript is refused with a message saying to compile it)
///   function  string, required  the exported function's name (`default` for a default export)
///   timeout   number >= 0 (ms)  as for scripts: capped by maxExecutionTime
///   isolation "call" | "worker"  "call" (the default): every call gets a fresh realm and its own
///                                instance of the module, so no call sees what another left.
///                                "worker": each worker instantiates the module once and keeps
///                                it for the calls it runs later (module-level variables, caches
///                                and globals survive between calls on that worker, and callers
///                                may see each other's leftovers); several times faster per call.
///                                A call that times out drops the kept instance.
///
/// The function is called as `f(input, ctx)`; its return value (or what its promise resolves to)
/// is the result, as JSON (`undefined` is null). The whole contract - ctx, modules, errors,
/// limits, pools - is in docs/protocol.md ("function handlers").
///
/// Pools: one per service and effective permission set (endpoints with the same permissions
/// share workers, since a worker's jail is made from them), of KindOptions::js_workers processes,
/// started when the manifest is loaded. A call waits for a free worker (within its time limit).
/// A worker that crashes, exceeds its memory or ignores its time limit is replaced; only its call
/// fails.

#include <memory>

#include "handlers/handler.hpp"

namespace hearth::handlers::function {

/// The function kind, to register under "function".
std::unique_ptr<Kind> make_kind(const KindOptions& options);

}  // namespace hearth::handlers::function
