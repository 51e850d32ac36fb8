#include "jail/launch_options.hpp"

#include <charconv>
#include <limits>

namespace hearth::jail {

namespace {

template <class T>
bool parse_number(std::string_view text, T& out, T min = 0, T max = std::numeric_limits<T>::max()) {
  if (text.empty()) return false;
  T value{};
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) return false;
  out = value;
  return true;
}

}  // namespace

std::string_view to_string(NetMode mode) {
  switch (mode) {
    case NetMode::kNone:
      return "none";
    case NetMode::kProxy:
      return "proxy";
    case NetMode::kHost:
      return "host";
  }
  return "none";
}

std::vector<std::string> LaunchOptions::to_args() const {
  std::vector<std::string> args;
  auto add = [&args](std::string_view name, const auto& value) {
    std::string arg = "--";
    arg += name;
    arg += '=';
    if constexpr (std::is_convertible_v<decltype(value), std::string_view>) {
      arg += value;
    } else {
      arg += std::to_string(value);
    }
    args.push_back(std::move(arg));
  };
  if (parent > 0) add("parent", parent);
  if (probe) args.emplace_back("--probe");
  if (!jail) return args;
  args.emplace_back("--jail");
  if (uid) add("uid", *uid);
  if (gid) add("gid", *gid);
  for (const auto& p : read_exec) add("rx", p);
  for (const auto& p : read_only) add("ro", p);
  for (const auto& p : read_write) add("rw", p);
  for (const auto& p : read_write_keep) add("rw-keep", p);
  for (const auto& p : hide) add("hide", p);
  add("net", to_string(net));
  if (net == NetMode::kProxy) add("proxy-port", proxy_port);
  if (control_fd >= 0) add("control-fd", control_fd);
  if (exec_on_request) args.emplace_back("--exec-on-request");
  if (address_space > 0) add("as", address_space);
  if (memory > 0) add("memory", memory);
  if (nproc > 0) add("nproc", nproc);
  if (nofile > 0) add("nofile", nofile);
  if (tmp_size > 0) add("tmp", tmp_size);
  if (!cgroup_memory.empty()) add("cgroup-memory", cgroup_memory);
  if (!cgroup_pids.empty()) add("cgroup-pids", cgroup_pids);
  if (!seccomp_bpf.empty()) add("seccomp-bpf", seccomp_bpf);
  return args;
}

std::optional<ParsedLaunch> parse_launch_args(int argc, const char* const* argv,
                                              std::string& error) {
  ParsedLaunch parsed;
  LaunchOptions& o = parsed.options;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.substr(0, 2) != "--") break;
    const auto eq = arg.find('=');
    const std::string_view name = arg.substr(2, eq == std::string_view::npos ? arg.npos : eq - 2);
    const bool has_value = eq != std::string_view::npos;
    const std::string_view value = has_value ? arg.substr(eq + 1) : std::string_view{};
    auto bad = [&] {
      error = "invalid option: ";
      error += arg;
      return std::nullopt;
    };
    auto path_list = [&](std::vector<std::string>& list) {
      if (!has_value || value.empty() || value.front() != '/') return false;
      list.emplace_back(value);
      return true;
    };
    bool ok = true;
    if (name == "parent") {
      ok = has_value && parse_number<pid_t>(value, o.parent, 1);
    } else if (name == "jail" && !has_value) {
      o.jail = true;
    } else if (name == "probe" && !has_value) {
      o.probe = true;
    } else if (name == "uid") {
      std::uint32_t v = 0;
      ok = has_value && parse_number(value, v, 0u, 0xfffffffeu);
      o.uid = v;
    } else if (name == "gid") {
      std::uint32_t v = 0;
      ok = has_value && parse_number(value, v, 0u, 0xfffffffeu);
      o.gid = v;
    } else if (name == "rx") {
      ok = path_list(o.read_exec);
    } else if (name == "ro") {
      ok = path_list(o.read_only);
    } else if (name == "rw") {
      ok = path_list(o.read_write);
    } else if (name == "rw-keep") {
      ok = path_list(o.read_write_keep);
    } else if (name == "hide") {
      ok = path_list(o.hide);
    } else if (name == "net") {
      if (value == "none") {
        o.net = NetMode::kNone;
      } else if (value == "proxy") {
        o.net = NetMode::kProxy;
      } else if (value == "host") {
        o.net = NetMode::kHost;
      } else {
        ok = false;
      }
    } else if (name == "proxy-port") {
      ok = has_value && parse_number<std::uint16_t>(value, o.proxy_port, 1);
    } else if (name == "control-fd") {
      ok = has_value && parse_number(value, o.control_fd, 3, 1 << 20);
    } else if (name == "exec-on-request" && !has_value) {
      o.exec_on_request = true;
    } else if (name == "as") {
      ok = has_value && parse_number<std::uint64_t>(value, o.address_space, 1);
    } else if (name == "memory") {
      ok = has_value && parse_number<std::uint64_t>(value, o.memory, 1);
    } else if (name == "nproc") {
      ok = has_value && parse_number<std::uint32_t>(value, o.nproc, 1);
    } else if (name == "nofile") {
      ok = has_value && parse_number<std::uint32_t>(value, o.nofile, 16);
    } else if (name == "tmp") {
      ok = has_value && parse_number<std::uint64_t>(value, o.tmp_size, 4096);
    } else if (name == "cgroup-memory") {
      ok = has_value && value.substr(0, 1) == "/";
      o.cgroup_memory = value;
    } else if (name == "cgroup-pids") {
      ok = has_value && value.substr(0, 1) == "/";
      o.cgroup_pids = value;
    } else if (name == "seccomp-bpf") {
      ok = has_value && !value.empty() && value.size() % 16 == 0 &&
           value.find_first_not_of("0123456789abcdef") == std::string_view::npos;
      o.seccomp_bpf = value;
    } else {
      error = "unknown option: ";
      error += arg;
      return std::nullopt;
    }
    if (!ok) return bad();
  }
  if (o.exec_on_request && (!o.jail || o.control_fd < 0)) {
    error = "--exec-on-request needs --jail and --control-fd";
    return std::nullopt;
  }
  parsed.program_index = i;
  return parsed;
}

}  // namespace hearth::jail
