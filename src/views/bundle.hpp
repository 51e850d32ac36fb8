#pragma once
/// A view component's ES module graph as one script, for a document that must hold everything
/// itself (an MCP Apps view: the host loads one HTML document, with no URL of hearth's to import
/// from). Each module becomes an async function registered under its path; its static imports
/// and exports are rewritten into calls of a small loader, the rest of its text is kept as it is.
///
/// What is read is what the view host would serve for the same component: the entry and the
/// modules it imports with relative specifiers ('./styles.js', '../lib/x.js', resolved as a
/// browser resolves URLs: no extension is guessed), all below `base`, opened with no link
/// followed. Refused, with the module and line named: a package or URL specifier, dynamic
/// `import()`, `import.meta`, import attributes (JSON or CSS modules), an import cycle, an
/// exported destructuring declaration, a module the scan cannot read, too many modules or bytes.
/// Differences from native modules: imported bindings are copied when the importing module starts
/// (a later reassignment of an exported `let` is not seen), and an anonymous default export is
/// named "default" only when it is read through the namespace.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace hearth::views {

struct BundleLimits {
  std::size_t max_modules = 256;
  std::size_t max_bytes = std::size_t{4} << 20;  ///< all modules' sources together
};

struct Bundle {
  /// Module-script text defining the loader and every module (nothing runs yet). Not escaped
  /// for HTML: put it in a <script> with views::script_text().
  std::string script;
  /// An expression of that script: a promise of the entry module's namespace object (evaluating
  /// the modules in import order).
  std::string entry;
  std::vector<std::string> modules;  ///< the paths bundled, relative to `base`, entry first
};

/// Bundles `entry` (a path relative to `base`) and the modules it imports. `entry_text`: the
/// entry's source when it is not a file (an inline component); it may then import nothing.
/// `may_import`: false when `base` must not be read beyond the entry (a component at the root of
/// the service folder, whose other files are the service's data). Errors are -32602 naming the
/// module and what is not bundled.
Result<Bundle> bundle_modules(const std::filesystem::path& base, const std::string& entry,
                              const std::optional<std::string>& entry_text, bool may_import,
                              const BundleLimits& limits = {});

/// `code` made safe inside an HTML <script> element: no `</` (it could close the element) and no
/// `<!--` (it could make the parser skip the real end tag), each written with a backslash that
/// JavaScript strings, templates, regular expressions and comments read the same.
std::string script_text(std::string_view code);

}  // namespace hearth::views
