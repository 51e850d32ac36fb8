#pragma once
/// Which programs a handler process may be started from: its own code (inside the service
/// folder, after symbolic links) or a system program. The jail makes a program's folder readable
/// (its installation prefix for one outside the system folders), so a command pointing into
/// another service (`../other-service/run.sh`, `/srv/other/run.sh`) would lend that service's
/// files to this handler: such commands are refused when the manifest loads, and again before
/// each start (the files may have changed since). Shared by the `script` kind and stdio MCP
/// servers (mcp-config.json `command`).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::handlers {

/// The PATH every handler process gets unless its `env` sets one.
inline constexpr std::string_view kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// True when `path` is under /usr, /bin, /sbin or /lib* (lexically; pass a resolved path).
bool under_system_folder(const std::filesystem::path& path);

/// Why `program` (an absolute path, as found by proc::find_program) may not be started for a
/// service in `service_dir` (canonical), as the end of a sentence ("is outside the service
/// folder ..."), or nullopt when it may: inside the service folder after
/// symbolic links, under a system folder, or found in a folder of kSystemPath.
std::optional<std::string> program_refusal(const std::filesystem::path& program,
                                           const std::filesystem::path& service_dir);

/// The load-time check of a handler's `command`: `path_env` is the PATH its environment gets,
/// `cwd` its working folder. A command with '/' must resolve inside the service folder or to a
/// system program; a bare name is looked up in `path_env`, whose entries must be system folders
/// or inside the service folder. Returns the problem, or nullopt.
std::optional<std::string> command_refusal(std::string_view command, std::string_view path_env,
                                           const std::filesystem::path& cwd,
                                           const std::filesystem::path& service_dir);

}  // namespace hearth::handlers
