#include "daemon/state_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "common/atomic_file.hpp"

namespace hearth::daemon {
namespace fs = std::filesystem;

fs::path default_state_dir() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
    return fs::path(xdg) / "hearth";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".local" / "state" / "hearth";
  }
  return fs::temp_directory_path() / ("hearth-" + std::to_string(::getuid()));
}

bool ensure_private_dir(const fs::path& dir, std::string& error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = dir.string() + ": " + ec.message();
    return false;
  }
  ::chmod(dir.c_str(), 0700);
  return true;
}

bool write_private_file(const fs::path& file, const std::string& content, std::string& error) {
  auto written = write_file_atomic(file, content, {.mode = 0600});
  if (!written.ok()) {
    error = written.error().message;
    return false;
  }
  return true;
}

}  // namespace hearth::daemon
