#pragma once
/// How a JS handler's modules are found: shared by the daemon (which checks manifests and works out
/// which folders a worker's jail must let it read) and the worker (which loads them).
///
/// - An entry module named in the manifest, and every import, must lie inside the service folder
///   (after following symbolic links).
/// - Imports are relative specifiers only ('./lib.js', '../shared/util.mjs'); a specifier without
///   an extension also finds `name.js` and then `name.mjs`. Packages ('lodash') and absolute paths
///   are refused: a service folder is self-contained.
/// - `.mjs` is an ES module, `.cjs` a plain script, `.js` an ES module when a line starts with
///   `import` or `export`, else a plain script. TypeScript (.ts, .mts, .cts, .tsx) is refused.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::js {

/// Resolves an import specifier of the module `referrer` (relative to `service_dir`) to a module
/// path relative to `service_dir`, or an error message.
struct Resolved {
  std::string path;   ///< relative, '/'-separated
  std::string error;  ///< non-empty on failure
};
Resolved resolve_import(const std::filesystem::path& service_dir, std::string_view referrer,
                        std::string_view specifier);

/// True when `source` looks like an ES module (a line starting with `import` or `export`);
/// `.mjs` is always a module and `.cjs` always a script.
bool is_es_module(std::string_view path, std::string_view source);

/// A message refusing TypeScript sources, or empty when `path` is not one.
std::string typescript_refusal(std::string_view path);

/// True when `p` is `dir` or lies below it (both absolute and normalised; compared by segment).
bool is_inside(const std::filesystem::path& dir, const std::filesystem::path& p);

/// The module files `entry` (relative to `service_dir`) imports, directly or not, found by a
/// lexical scan of `import ... from '...'`, `export ... from '...'`, `import '...'` and
/// `import('...')`: relative paths, `entry` first. An over-approximation (a commented-out import
/// counts), used only to decide which folders a worker may read. At most `limit` files.
std::vector<std::string> scan_imports(const std::filesystem::path& service_dir,
                                      const std::string& entry, std::size_t limit = 1000);

/// The static imports of `entry` and of the modules it imports (directly or not) that cannot be
/// loaded - outside the service folder, a package name, missing, TypeScript - each as
/// "<module>: <reason>", for refusing a manifest at load instead of failing every call. Read
/// outside comments and strings; dynamic `import()` is not a static import. Empty when all load.
std::vector<std::string> import_problems(const std::filesystem::path& service_dir,
                                         const std::string& entry, std::size_t limit = 1000);

}  // namespace hearth::js
