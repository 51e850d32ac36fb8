#include "common/installed.hpp"

#include <string>
#include <system_error>

// Set by the build from GNUInstallDirs (CMakeLists.txt); the defaults are the GNU layout.
#ifndef HEARTH_LIBEXEC_FROM_BIN
#define HEARTH_LIBEXEC_FROM_BIN "../libexec/hearth"
#endif
#ifndef HEARTH_WEB_FROM_BIN
#define HEARTH_WEB_FROM_BIN "../share/hearth/web"
#endif

namespace hearth::installed {
namespace fs = std::filesystem;

std::string_view libexec_from_bin() {
  return HEARTH_LIBEXEC_FROM_BIN;
}
std::string_view web_from_bin() {
  return HEARTH_WEB_FROM_BIN;
}

fs::path self_exe() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path helper(std::string_view name, const fs::path& exe) {
  if (exe.empty()) return fs::path(name);
  const fs::path dir = exe.parent_path();
  fs::path installed = (dir / libexec_from_bin() / name).lexically_normal();
  std::error_code ec;
  if (fs::is_regular_file(installed, ec)) return installed;
  return dir / name;
}

fs::path web_dir(const fs::path& exe, const fs::path& source_web_dir) {
  if (!exe.empty()) {
    fs::path installed = (exe.parent_path() / web_from_bin()).lexically_normal();
    std::error_code ec;
    if (fs::is_regular_file(installed / "index.html", ec)) return installed;
  }
  return source_web_dir;
}

}  // namespace hearth::installed
