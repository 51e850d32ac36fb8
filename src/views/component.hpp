#pragma once
/// A service's view component (lavs-spec-v1 4.5) resolved to what the view host serves: which
/// folder a mount's files come from, which module the frame imports, and what the frame's CSP
/// must allow. Resolution reads the service folder (package.json of an npm component, the local
/// file): it blocks, so the view host runs it off the I/O threads.

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::views {

struct Component {
  enum class Type { kLocal, kInline, kNpm, kCdn };
  Type type = Type::kLocal;
  /// The folder files are served from (local: the one holding the file; npm: the package's).
  std::filesystem::path base;
  /// local: the component file, relative to `base`.
  std::string entry;
  /// local: an .html document (served with the bootstrap put first in its <head>).
  bool html = false;
  /// local: the component sits at the root of the service folder, so only `entry` is served
  /// (the service's data must not become readable by its view).
  bool entry_only = false;
  /// npm: the package name, served below "node_modules/<package>/".
  std::string package;
  /// inline: the code.
  std::string code;
  /// The URL the frame's bootstrap imports, relative to the mount ("./todo-view.js") or absolute
  /// (cdn). Empty for an html document.
  std::string module;
  /// cdn: the export that is the element class (spec 4.5 exportName).
  std::string export_name;
  /// cdn: the origin added to the frame's script-src ("https://cdn.example.com").
  std::string script_origin;
};

std::string_view to_string(Component::Type type);

/// Resolves the `view.component` of the manifest of the service in `dir`. Errors:
/// - no component: -32602 with data.reason "no view component";
/// - a cdn origin not in `cdn_origins`: -32001, naming the --allow-view-origin flag;
/// - a local file or npm package that is missing or unusable: -32602 saying what was looked at.
Result<Component> resolve(const std::filesystem::path& dir, const json::value& view,
                          const std::vector<std::string>& cdn_origins);

/// The file a request below "node_modules/<package>/" names inside an npm package's folder:
/// "<package>/<rest>" with `rest` returned, or empty when the path is not below the package.
std::string npm_rest(const Component& component, std::string_view rel);

/// Whether `name` is an npm package name ("pkg" or "@scope/pkg", lower case, no "..").
bool valid_package_name(std::string_view name);

/// Whether version `have` (from package.json) satisfies `want` (from the manifest): an exact
/// version, "^x.y.z" (same major; same minor when the major is 0), "~x.y.z" (same minor), "x"
/// or "x.y" (prefix), "*", "latest" or empty (any).
bool version_satisfies(std::string_view have, std::string_view want);

}  // namespace hearth::views
