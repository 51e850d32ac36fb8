// `hearth status`, `hearth stop` and `hearth logs`: the daemon of a state folder, seen and
// stopped from another process. Whether it runs is whether it holds the folder's lock
// (daemon/instance.hpp); what it serves is its daemon.json.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/common.hpp"
#include "common/clock.hpp"
#include "daemon/instance.hpp"

namespace hearth::cli {
namespace fs = std::filesystem;

namespace {

/// LSB's "program is not running" status, as `systemctl status` uses it.
constexpr int kNotRunning = 3;

struct ControlArgs {
  fs::path state_dir;
  bool json = false;
  int timeout_s = 15;
  std::size_t lines = 50;
  bool follow = false;
  std::string only;  ///< "", "daemon" or "audit"
};

fs::path state_dir_of(const ControlArgs& args) {
  return args.state_dir.empty() ? default_state_dir() : args.state_dir;
}

std::string string_member(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// "5 s", "3 min", "2 h 5 min", "4 d 2 h".
std::string human_duration(std::chrono::seconds elapsed) {
  const auto s = elapsed.count();
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min";
  if (s < 86400) return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
  return std::to_string(s / 86400) + " d " + std::to_string(s % 86400 / 3600) + " h";
}

int status(const ControlArgs& args) {
  const fs::path dir = state_dir_of(args);
  const auto instance = daemon::find_instance(dir);
  // The daemon writes daemon.json once ready: its time is when the daemon began serving.
  std::error_code ec;
  const auto ready_at = fs::last_write_time(dir / "daemon.json", ec);
  const bool ready = instance.running && instance.document.has_value();
  if (args.json) {
    json::object out;
    out["running"] = instance.running;
    out["ready"] = ready;
    out["stateDir"] = fs::absolute(dir).string();
    if (instance.running) out["pid"] = instance.pid;
    if (ready) out["daemon"] = *instance.document;
    std::cout << json::dump(out) << std::endl;
    return instance.running ? 0 : kNotRunning;
  }
  if (!instance.running) {
    std::cout << "hearth: not running (state folder " << dir.string() << ")\n"
              << "  start it with `hearth serve PATH...`, or `systemctl --user start hearth`"
              << std::endl;
    return kNotRunning;
  }
  if (!ready) {
    std::cout << "hearth: starting (pid " << instance.pid << ", state folder " << dir.string()
              << ")" << std::endl;
    return 0;
  }
  const auto& doc = *instance.document;
  std::cout << "hearth: running (pid " << instance.pid << ")";
  if (!ec) {
    const auto since = std::chrono::duration_cast<std::chrono::seconds>(
        fs::file_time_type::clock::now() - ready_at);
    std::cout << ", up " << human_duration(std::max(since, std::chrono::seconds(0)));
  }
  std::cout << "\n  url:          " << string_member(doc, "url")
            << "\n  page:         `hearth open` prints its link (with the token)"
            << "\n  MCP:          " << string_member(doc, "mcpUrl")
            << "\n  state folder: " << dir.string();
  const auto list = [&doc](std::string_view key, const char* label) {
    const auto* v = doc.if_contains(key);
    if (v == nullptr || !v->is_array()) return;
    std::cout << "\n  " << label << v->get_array().size();
    std::size_t shown = 0;
    for (const auto& item : v->get_array()) {
      if (!item.is_string()) continue;
      std::cout << (shown == 0 ? ": " : ", ") << item.get_string().c_str();
      if (++shown == 8 && v->get_array().size() > 8) {
        std::cout << ", ...";
        break;
      }
    }
  };
  list("services", "services:     ");
  list("workspaces", "workspaces:   ");
  list("apps", "apps:         ");
  std::cout << "\n  log:          " << string_member(doc, "logFile")
            << "\n  audit log:    " << string_member(doc, "auditLog")
            << "\n  (`hearth logs -f` follows both)" << std::endl;
  return 0;
}

/// Whether `pid` runs a hearth executable (its comm), so that a stale pid is never signalled.
bool is_hearth_process(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm.starts_with("hearth");
}

int stop(const ControlArgs& args) {
  const fs::path dir = state_dir_of(args);
  const auto instance = daemon::find_instance(dir);
  if (!instance.running) {
    std::cerr << "hearth stop: no daemon is running for the state folder " << dir.string()
              << std::endl;
    return 0;
  }
  if (instance.pid <= 0 || !is_hearth_process(instance.pid)) {
    std::cerr << "hearth stop: the lock of " << dir.string()
              << " is held, but not by a hearth process this user can see (pid " << instance.pid
              << "); nothing signalled" << std::endl;
    return 1;
  }
  if (::kill(instance.pid, SIGTERM) != 0) {
    std::cerr << "hearth stop: cannot signal pid " << instance.pid << ": " << std::strerror(errno)
              << std::endl;
    return 1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.timeout_s);
  while (daemon::find_instance(dir).running) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::cerr << "hearth stop: pid " << instance.pid << " still runs after " << args.timeout_s
                << " s (it finishes calls in flight; `kill -KILL " << instance.pid
                << "` ends it at once)" << std::endl;
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cout << "hearth: stopped (pid " << instance.pid << ")" << std::endl;
  return 0;
}

// -- logs -------------------------------------------------------------------------------------

/// One audit line (JSON) as a log line: "TIME audit METHOD SERVICE/ENDPOINT OUTCOME MS".
std::string audit_as_log_line(const std::string& line) {
  auto parsed = json::parse_text(line);
  if (!parsed.ok() || !parsed.value().is_object()) return line;
  const auto& obj = parsed.value().get_object();
  std::string out = string_member(obj, "time") + " audit " + string_member(obj, "method");
  const std::string service = string_member(obj, "service");
  const std::string endpoint = string_member(obj, "endpoint");
  if (!service.empty() || !endpoint.empty()) {
    out += " " + service + (service.empty() || endpoint.empty() ? "" : "/") + endpoint;
  }
  out += " " + string_member(obj, "outcome");
  if (const auto* code = obj.if_contains("code"); code != nullptr && code->is_int64()) {
    out += " " + std::to_string(code->get_int64());
  }
  if (const auto* ms = obj.if_contains("durationMs"); ms != nullptr && ms->is_number()) {
    char text[32];
    std::snprintf(text, sizeof text, " %.1f ms", ms->to_number<double>());
    out += text;
  }
  const std::string transport = string_member(obj, "transport");
  if (!transport.empty()) out += " " + transport;
  const std::string client = string_member(obj, "client");
  if (!client.empty()) out += " (" + client + ")";
  const std::string detail = string_member(obj, "detail");
  if (!detail.empty()) out += ": " + detail;
  return out;
}

/// A log file read from where it was last left, noticing rotation (a new file or a shorter one).
struct Tail {
  Tail(fs::path file, bool is_audit) : path(std::move(file)), audit(is_audit) {}
  fs::path path;
  bool audit = false;
  std::uintmax_t offset = 0;
  ino_t inode = 0;
  std::string partial;  ///< a line not yet ended
  bool skip_partial = false;

  /// Starts `lines` lines or so before the end (at most 1 KiB a line): `hearth logs` of a long
  /// audit log reads its tail, not the whole file. The first, likely partial, line is dropped.
  void start_near_end(std::size_t lines) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;
    const auto size = static_cast<std::uintmax_t>(st.st_size);
    const std::uintmax_t window = static_cast<std::uintmax_t>(lines + 1) * 1024;
    if (size <= window) return;
    inode = st.st_ino;
    offset = size - window;
    skip_partial = true;
  }

  /// The complete lines added since the last call.
  std::vector<std::string> read_new() {
    std::vector<std::string> lines;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return lines;
    if (st.st_ino != inode || static_cast<std::uintmax_t>(st.st_size) < offset) {
      inode = st.st_ino;
      offset = 0;
      skip_partial = false;
      partial.clear();
    }
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset += chunk.size();
    partial += chunk;
    std::size_t start = 0;
    for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (skip_partial) {  // the rest of a line begun before the window
        skip_partial = false;
        continue;
      }
      std::string line = partial.substr(start, nl - start);
      lines.push_back(audit ? audit_as_log_line(line) : std::move(line));
    }
    partial.erase(0, start);
    return lines;
  }
};

int logs(const ControlArgs& args) {
  const fs::path dir = state_dir_of(args);
  std::vector<Tail> tails;
  if (args.only != "audit") tails.emplace_back(daemon::log_file(dir), false);
  if (args.only != "daemon") tails.emplace_back(dir / "audit.log", true);
  std::vector<std::string> recent;
  bool any = false;
  for (auto& tail : tails) {
    std::error_code ec;
    if (fs::exists(tail.path, ec)) any = true;
    tail.start_near_end(args.lines);
    auto lines = tail.read_new();
    recent.insert(recent.end(), std::make_move_iterator(lines.begin()),
                  std::make_move_iterator(lines.end()));
  }
  if (!any && !args.follow) {
    std::cerr << "hearth logs: no log in " << dir.string()
              << " yet (the daemon writes hearth.log and audit.log there)" << std::endl;
    return 1;
  }
  // Both files' lines begin with an RFC 3339 UTC time: in time order, the newest last.
  std::stable_sort(recent.begin(), recent.end(), [](const std::string& a, const std::string& b) {
    return a.substr(0, 23) < b.substr(0, 23);
  });
  const std::size_t from = recent.size() > args.lines ? recent.size() - args.lines : 0;
  for (std::size_t i = from; i < recent.size(); ++i) std::cout << recent[i] << "\n";
  std::cout.flush();
  if (!args.follow) return 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (auto& tail : tails) {
      for (const auto& line : tail.read_new()) std::cout << line << "\n";
    }
    std::cout.flush();
    if (!std::cout) return 0;  // the reader went away (`hearth logs -f | head`)
  }
}

}  // namespace

CLI::App* add_control_commands(CLI::App& app, std::function<int()>& run) {
  static ControlArgs args;
  const auto state_dir = [](CLI::App* cmd) {
    cmd->add_option("--state-dir", args.state_dir,
                    "The daemon's state folder [default: $XDG_STATE_HOME/hearth or "
                    "~/.local/state/hearth]");
  };
  auto* status_cmd =
      app.add_subcommand("status", "Whether a daemon serves the state folder, and what it serves");
  state_dir(status_cmd);
  status_cmd->add_flag("--json", args.json, "Print the status as JSON");
  status_cmd->footer("Exit status: 0 when a daemon runs (or is starting), 3 when none does.");
  status_cmd->callback([&run] { run = [] { return status(args); }; });

  auto* stop_cmd = app.add_subcommand(
      "stop", "Stop the daemon of the state folder (SIGTERM: calls in flight finish) and wait");
  state_dir(stop_cmd);
  stop_cmd->add_option("--timeout", args.timeout_s, "Seconds to wait for it to end")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  stop_cmd->footer(
      "Exit status: 0 when the daemon stopped or none ran, 1 when it still runs after --timeout.");
  stop_cmd->callback([&run] { run = [] { return stop(args); }; });

  auto* logs_cmd = app.add_subcommand(
      "logs",
      "Print the daemon's recent log and audit lines (hearth.log, audit.log), in time order");
  state_dir(logs_cmd);
  logs_cmd->add_option("-n,--lines", args.lines, "How many recent lines")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  logs_cmd->add_flag("-f,--follow", args.follow, "Keep printing lines as they are written");
  logs_cmd->add_option("--only", args.only, "Only the daemon's log, or only the audit log")
      ->check(CLI::IsMember({"daemon", "audit"}));
  logs_cmd->footer("Exit status: 0, or 1 when the state folder holds no log yet.");
  logs_cmd->callback([&run] { run = [] { return logs(args); }; });
  return status_cmd;
}

}  // namespace hearth::cli
