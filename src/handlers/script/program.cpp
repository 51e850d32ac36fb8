#include "handlers/script/program.hpp"

#include "proc/process.hpp"

namespace hearth::handlers {

namespace fs = std::filesystem;

namespace {

bool inside_or_equal(const fs::path& path, const fs::path& base) {
  if (path == base) return true;
  const auto relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != ".." && relative.is_relative();
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : real;
}

bool in_system_path_folder(const fs::path& program) {
  const fs::path folder = program.lexically_normal().parent_path();
  std::string_view rest = kSystemPath;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    if (fs::path(rest.substr(0, colon)) == folder) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

constexpr std::string_view kSystemFolders = "(/usr, /bin, /sbin, /lib*, the system PATH)";

}  // namespace

bool under_system_folder(const fs::path& path) {
  const std::string text = path.lexically_normal().string();
  for (const char* root : {"/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"}) {
    if (text.rfind(root, 0) == 0) return true;
  }
  return false;
}

std::optional<std::string> program_refusal(const fs::path& program, const fs::path& service_dir) {
  // A program installed on the system PATH is the system's, wherever its link leads (/opt).
  if (in_system_path_folder(program)) return std::nullopt;
  const fs::path real = resolved(program);
  if (inside_or_equal(real, service_dir) || under_system_folder(real)) return std::nullopt;
  return "is outside the service folder (it is '" + real.string() + "') and not a system program " +
         std::string(kSystemFolders) + ": the jail would let the handler read that folder";
}

std::optional<std::string> command_refusal(std::string_view command, std::string_view path_env,
                                           const fs::path& cwd, const fs::path& service_dir) {
  const std::string written(command);
  if (written.find('/') != std::string::npos) {
    const fs::path p(written);
    const fs::path full = p.is_absolute() ? p : cwd / p;
    if (auto refused = program_refusal(full.lexically_normal(), service_dir)) {
      return "command '" + written + "' " + *refused;
    }
    return std::nullopt;
  }
  if (path_env != kSystemPath) {
    // Every folder the name may be found in later, not only where it is found today.
    std::string_view rest = path_env;
    while (true) {
      const auto colon = rest.find(':');
      const std::string entry(rest.substr(0, colon));
      const fs::path folder = entry.empty()                   ? cwd
                              : fs::path(entry).is_absolute() ? fs::path(entry)
                                                              : cwd / entry;
      const fs::path real = resolved(folder);
      if (!inside_or_equal(real, service_dir) && !under_system_folder(real / "x") &&
          !in_system_path_folder(folder.lexically_normal() / "x")) {
        std::string why = "command '";
        why += written;
        why += "' is looked up in env.PATH, whose entry '";
        why += entry;
        why += "' is outside the service folder and the system folders ";
        why += kSystemFolders;
        return why;
      }
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (auto program = proc::find_program(written, path_env, cwd)) {
    if (auto refused = program_refusal(*program, service_dir)) {
      return "command '" + written + "' " + *refused;
    }
  }
  return std::nullopt;
}

}  // namespace hearth::handlers
