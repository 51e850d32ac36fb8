#pragma once
/// Where hearth finds what it ships besides its own binary, installed or in the build tree.
///
/// Installed (`make install`; cmake/InstallDirs.cmake):
///   PREFIX/bin/hearth
///   PREFIX/libexec/hearth/hearth-launch, PREFIX/libexec/hearth/hearth-js-worker
///   PREFIX/share/hearth/web/            (the view host's page)
/// Build tree: the helpers beside the binary (build/release/bin/), the page in the source's web/.
/// The functions take the executable's path so that a test can point them at a made-up tree.

#include <filesystem>
#include <string_view>

namespace hearth::installed {

/// The running executable (/proc/self/exe); empty when it cannot be read.
std::filesystem::path self_exe();

/// The helper executable `name` for the hearth binary at `exe`: the installed one
/// (EXE_DIR/../libexec/hearth/NAME) when it exists, else the one beside `exe` (the build tree),
/// which is also the answer when neither exists (a start then fails naming that path). `exe`
/// empty: `name` alone.
std::filesystem::path helper(std::string_view name, const std::filesystem::path& exe);

/// The view host's page for the hearth binary at `exe`: the installed copy
/// (EXE_DIR/../share/hearth/web, when it holds index.html), else `source_web_dir` (the web/
/// folder of the source tree hearth was built from).
std::filesystem::path web_dir(const std::filesystem::path& exe,
                              const std::filesystem::path& source_web_dir);

/// The installed helper folder and page folder relative to the binary's folder, as configured
/// (GNUInstallDirs): "../libexec/hearth" and "../share/hearth/web" by default.
std::string_view libexec_from_bin();
std::string_view web_from_bin();

}  // namespace hearth::installed
