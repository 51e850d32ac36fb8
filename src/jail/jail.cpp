#include "jail/jail.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/pipes.hpp"
#include "jail/glob.hpp"
#include "jail/sandbox.hpp"
#include "json/json.hpp"

extern char** environ;

namespace hearth::jail {

namespace fs = std::filesystem;

namespace {

bool has_wildcard(std::string_view segment) {
  return segment.find_first_of("*?[") != std::string_view::npos;
}

/// The pattern without "./", "." segments and duplicate slashes ("" is the service folder itself);
/// nullopt when it cannot name anything in the service folder (absolute, or with a ".." segment).
std::optional<std::string> normalise(std::string_view pattern) {
  if (!pattern.empty() && pattern.front() == '/') return std::nullopt;
  std::string out;
  std::size_t start = 0;
  while (start <= pattern.size()) {
    auto end = pattern.find('/', start);
    if (end == std::string_view::npos) end = pattern.size();
    const auto segment = pattern.substr(start, end - start);
    if (segment == "..") return std::nullopt;
    if (!segment.empty() && segment != ".") {
      if (!out.empty()) out += '/';
      out += segment;
    }
    start = end + 1;
  }
  return out;
}

/// A fully literal pattern is its own path; otherwise the folder named by the segments before the
/// first one with a wildcard ("" = the service folder).
std::string literal_prefix(const std::string& pattern) {
  if (!has_wildcard(pattern)) return pattern;
  std::string prefix;
  std::size_t start = 0;
  for (;;) {
    const auto end = pattern.find('/', start);
    if (end == std::string::npos) return prefix;  // the last segment has the wildcard
    const auto segment = std::string_view(pattern).substr(start, end - start);
    if (has_wildcard(segment)) return prefix;
    if (!prefix.empty()) prefix += '/';
    prefix += segment;
    start = end + 1;
  }
}

bool is_inside(const fs::path& path, const fs::path& base) {
  const auto rel = path.lexically_relative(base);
  return !rel.empty() && *rel.begin() != "..";
}

bool under_system_root(const fs::path& path) {
  for (const char* root : {"/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"}) {
    if (path.string().rfind(root, 0) == 0) return true;
  }
  return false;
}

void add_unique(std::vector<std::string>& list, std::string value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

/// Reads "<hierarchy>" cgroup v1 folder of this process: the mount point of the controller plus
/// our path in it. Empty when there is none.
std::string own_cgroup_v1(std::string_view controller) {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(cgroups, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::stringstream controllers(line.substr(first + 1, second - first - 1));
    std::string c;
    while (std::getline(controllers, c, ',')) {
      if (c == controller) path = line.substr(second + 1);
    }
  }
  if (path.empty()) return {};
  std::ifstream mountinfo("/proc/self/mountinfo");
  while (std::getline(mountinfo, line)) {
    // id parent major:minor root mountpoint options ... - fstype source superoptions
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint, token;
    in >> id >> parent >> dev >> root >> mountpoint;
    while (in >> token && token != "-") {
    }
    std::string fstype, source, super;
    in >> fstype >> source >> super;
    if (fstype != "cgroup") continue;
    std::stringstream options(super);
    bool match = false;
    while (std::getline(options, token, ',')) match = match || token == controller;
    if (!match) continue;
    // Our path relative to the mount's root.
    if (path.rfind(root, 0) != 0) continue;
    std::string rest = path.substr(root == "/" ? 0 : root.size());
    if (rest == "/") rest.clear();
    return mountpoint + rest;
  }
  return {};
}

/// Creates <folder>/hearth-<pid> when the hierarchy is writable; empty otherwise.
std::string make_daemon_cgroup(std::string_view controller) {
  const std::string base = own_cgroup_v1(controller);
  if (base.empty()) return {};
  std::string dir = base + "/hearth-" + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return {};
  if (::access((dir + "/cgroup.procs").c_str(), W_OK) != 0) {
    ::rmdir(dir.c_str());
    return {};
  }
  return dir;
}

void remove_daemon_cgroup(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) ::rmdir(entry.path().c_str());
  }
  ::rmdir(dir.c_str());
}

/// Runs the launcher's --probe and parses its lines.
Result<Capabilities> run_probe(const JailOptions& options, const std::string& memory,
                               const std::string& pids) {
  HEARTH_ASSIGN_OR_RETURN(FdPair out, make_pipe());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1].get(), 1);
  std::vector<std::string> args = {options.launcher.string(), "--probe"};
  if (!memory.empty()) args.push_back("--cgroup-memory=" + memory);
  if (!pids.empty()) args.push_back("--cgroup-pids=" + pids);
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  out[1].reset();
  if (rc != 0) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot run " + args[0] + " --probe: " + std::strerror(rc));
  }
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(out[0].get(), buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
  }
  out[0].reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Error::make(ErrorCode::kInternalError, args[0] + " --probe failed");
  }

  Capabilities caps;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    auto parsed = json::parse_text(line);
    if (!parsed.ok() || !parsed.value().is_object()) continue;
    const auto& object = parsed.value().get_object();
    Mechanism m;
    if (const auto* v = object.if_contains("mechanism"); v && v->is_string()) {
      m.name = std::string(v->get_string());
    }
    if (const auto* v = object.if_contains("ok"); v && v->is_bool()) m.ok = v->get_bool();
    if (const auto* v = object.if_contains("detail"); v && v->is_string()) {
      m.detail = std::string(v->get_string());
    }
    if (!m.name.empty()) caps.mechanisms.push_back(std::move(m));
  }
  return caps;
}

}  // namespace

const Mechanism* Capabilities::find(std::string_view name) const {
  for (const auto& m : mechanisms) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool Capabilities::has(std::string_view name) const {
  const auto* m = find(name);
  return m != nullptr && m->ok;
}

namespace {

/// The too-many-entries marker of FileRules (see plan()).
FileRules too_many_entries() {
  FileRules rules;
  rules.hide.emplace_back();
  return rules;
}

bool is_at_or_inside(const fs::path& path, const fs::path& base) {
  return path == base || is_inside(path, base);
}

}  // namespace

FileRules file_rules(const fs::path& service_dir, const std::vector<std::string>& patterns) {
  FileRules rules;
  std::error_code ec;
  // Plain patterns: the folders and files to open read-write (before the exclusions are known).
  std::vector<std::string> granted;
  for (const auto& raw : patterns) {
    if (!raw.empty() && raw.front() == '!') continue;
    const auto normalised = normalise(raw);
    if (!normalised) continue;  // names nothing inside the service folder
    const std::string& pattern = *normalised;
    const std::string prefix = literal_prefix(pattern);
    const fs::path target = prefix.empty() ? service_dir : service_dir / prefix;
    const bool literal = !has_wildcard(pattern);
    if (fs::exists(fs::symlink_status(target, ec))) {
      // A symbolic link is not followed out of the service folder.
      const fs::path real = fs::weakly_canonical(target, ec);
      if (!ec && (real == service_dir || is_inside(real, service_dir))) {
        add_unique(granted, real.string());
      }
    } else if (literal) {
      const fs::path parent = target.parent_path();
      if (fs::is_directory(parent, ec)) add_unique(granted, parent.string());
    }
  }
  // Negations: cover what they match today. A matched folder is covered whole, which is the
  // "or any folder above it" of GlobSet::excluded(), so the search does not go into it.
  std::size_t visited = 0;
  auto hide = [&](const fs::path& path) {
    // The folder it is in, without links, so that the folders above it can be kept (below).
    const fs::path parent = fs::weakly_canonical(path.parent_path(), ec);
    add_unique(rules.hide, (ec ? path : parent / path.filename()).string());
  };
  for (const auto& raw : patterns) {
    if (raw.empty() || raw.front() != '!') continue;
    const auto normalised = normalise(std::string_view(raw).substr(1));
    if (!normalised || normalised->empty()) continue;
    const std::string& pattern = *normalised;
    const bool literal = !has_wildcard(pattern);
    if (literal) {
      const fs::path target = service_dir / pattern;
      if (fs::exists(fs::symlink_status(target, ec))) hide(target);
      continue;
    }
    const std::string prefix = literal_prefix(pattern);
    const fs::path base = prefix.empty() ? service_dir : service_dir / prefix;
    if (!fs::is_directory(base, ec)) continue;
    // The folder the search starts from may match itself (`data/secret/**` matches
    // `data/secret`: `**` is zero or more segments); then it is covered, not only its content.
    if (!prefix.empty() && glob_match(pattern, prefix)) {
      hide(base);
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(base, fs::directory_options::none, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (++visited > kMaxHideScan) return too_many_entries();
      const std::string rel = it->path().lexically_relative(service_dir).generic_string();
      if (glob_match(pattern, rel)) {
        hide(it->path());
        if (it->is_directory(ec)) it.disable_recursion_pending();
      }
    }
  }

  // The folders above a covered entry, from the service folder down: renaming or removing one
  // of them (or the entry itself) would take the excluded content to a name no negation matches,
  // readable at the next launch. Landlock rights are additive down a tree, so such a folder
  // cannot be granted whole: it gets a rule without remove and refer rights (`keep`), and each
  // of its sub-folders that holds nothing excluded gets a full rule of its own. Files directly
  // in it need no rule: reading and writing them is the folder rule's; removing or renaming
  // them is what the folder rule does not give.
  std::vector<fs::path> above;  // strict ancestors of covered entries, inside the service folder
  for (const auto& h : rules.hide) {
    const fs::path covered(h);
    if (!is_inside(covered, service_dir)) continue;
    for (fs::path p = covered.parent_path(); is_at_or_inside(p, service_dir); p = p.parent_path()) {
      if (std::find(above.begin(), above.end(), p) == above.end()) above.push_back(p);
      if (p == service_dir) break;
    }
  }
  auto is_above = [&](const fs::path& p) {
    return std::find(above.begin(), above.end(), p) != above.end();
  };
  auto is_covered = [&](const fs::path& p) {
    for (const auto& h : rules.hide) {
      if (is_at_or_inside(p, fs::path(h))) return true;
    }
    return false;
  };
  bool too_many = false;
  // Keeps `folder` and grants its other sub-folders whole.
  auto keep = [&](auto&& self, const fs::path& folder) -> void {
    if (std::find(rules.keep.begin(), rules.keep.end(), folder.string()) != rules.keep.end()) {
      return;
    }
    rules.keep.push_back(folder.string());
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (++visited > kMaxHideScan) {
        too_many = true;
        return;
      }
      const fs::path child = it->path();
      const auto status = it->symlink_status(ec);
      // A link is not a folder of its own: what it leads to has its own rules.
      if (ec || !fs::is_directory(status) || is_covered(child)) continue;
      if (is_above(child)) {
        self(self, child);
        if (too_many) return;
      } else {
        add_unique(rules.read_write, child.string());
      }
    }
  };
  for (const auto& g : granted) {
    const fs::path path(g);
    if (is_above(path)) {
      keep(keep, path);
      if (too_many) return too_many_entries();
    } else if (!is_covered(path)) {
      add_unique(rules.read_write, g);
    }
  }
  // A full rule may have been added for a folder that a later rule keeps.
  std::erase_if(rules.read_write, [&](const std::string& p) {
    return std::find(rules.keep.begin(), rules.keep.end(), p) != rules.keep.end();
  });
  return rules;
}

std::vector<std::string> Jail::required_mechanisms(const Request& request) {
  std::vector<std::string> needed = {"user namespace", "pid namespace", "mount namespace",
                                     "ipc namespace",  "uts namespace", "landlock",
                                     "seccomp"};
  bool host = false;
  if (request.network_access) {
    host = request.network_access->mode() == egress::NetworkPolicy::Mode::kAny;
  }
  if (!host) needed.emplace_back("network namespace");
  return needed;
}

Result<Jail> Jail::create(JailOptions options) {
  if (options.insecure_no_sandbox) return Jail(std::move(options), Capabilities{});
  const std::string memory = make_daemon_cgroup("memory");
  const std::string pids = make_daemon_cgroup("pids");
  auto caps = run_probe(options, memory, pids);
  if (!caps.ok()) {
    remove_daemon_cgroup(memory);
    remove_daemon_cgroup(pids);
    return std::move(caps).error();
  }
  Jail jail(std::move(options), std::move(caps).value());
  if (jail.capabilities_.has("seccomp")) {
    for (NetMode mode : {NetMode::kNone, NetMode::kProxy, NetMode::kHost}) {
      jail.seccomp_[static_cast<int>(mode)] = sandbox::export_seccomp(mode);
    }
  }
  if (jail.capabilities_.has("memory cgroup")) {
    jail.cgroup_memory_ = memory;
  } else {
    remove_daemon_cgroup(memory);
  }
  if (jail.capabilities_.has("pids cgroup")) {
    jail.cgroup_pids_ = pids;
  } else {
    remove_daemon_cgroup(pids);
  }
  return jail;
}

Jail::Jail(JailOptions options, Capabilities capabilities)
    : options_(std::move(options)), capabilities_(std::move(capabilities)) {}

Jail::Jail(Jail&& other) noexcept
    : options_(std::move(other.options_)),
      capabilities_(std::move(other.capabilities_)),
      cgroup_memory_(std::exchange(other.cgroup_memory_, {})),
      cgroup_pids_(std::exchange(other.cgroup_pids_, {})) {
  for (int i = 0; i < 3; ++i) seccomp_[i] = std::move(other.seccomp_[i]);
}

Jail& Jail::operator=(Jail&& other) noexcept {
  if (this != &other) {
    remove_daemon_cgroup(cgroup_memory_);
    remove_daemon_cgroup(cgroup_pids_);
    options_ = std::move(other.options_);
    capabilities_ = std::move(other.capabilities_);
    cgroup_memory_ = std::exchange(other.cgroup_memory_, {});
    cgroup_pids_ = std::exchange(other.cgroup_pids_, {});
    for (int i = 0; i < 3; ++i) seccomp_[i] = std::move(other.seccomp_[i]);
  }
  return *this;
}

Jail::~Jail() {
  remove_daemon_cgroup(cgroup_memory_);
  remove_daemon_cgroup(cgroup_pids_);
}

void Jail::cleanup(int launcher_pid) const {
  if (launcher_pid <= 0) return;
  const std::string name = "/j" + std::to_string(launcher_pid);
  if (!cgroup_memory_.empty()) ::rmdir((cgroup_memory_ + name).c_str());
  if (!cgroup_pids_.empty()) ::rmdir((cgroup_pids_ + name).c_str());
}

Result<Plan> Jail::plan(const Request& request) const {
  Plan plan;
  if (options_.insecure_no_sandbox) return plan;

  for (const auto& name : required_mechanisms(request)) {
    if (capabilities_.has(name)) continue;
    const auto* m = capabilities_.find(name);
    json::object data;
    data["mechanism"] = name;
    if (m != nullptr) data["detail"] = m->detail;
    return Error::make(ErrorCode::kPermissionDenied,
                       "the jail cannot enforce this endpoint's permissions: " + name +
                           " is not available on this machine" +
                           (m != nullptr && !m->detail.empty() ? " (" + m->detail + ")" : ""),
                       std::move(data));
  }

  plan.confined = true;
  LaunchOptions& o = plan.options;
  o.jail = true;
  o.tmp_size = options_.tmp_size;
  o.nproc = options_.max_tasks;
  o.cgroup_pids = cgroup_pids_;
  if (request.max_memory && *request.max_memory > 0) {
    o.address_space = *request.max_memory + request.address_space_extra;
    if (!cgroup_memory_.empty()) {
      o.memory = *request.max_memory + request.memory_extra;
      o.cgroup_memory = cgroup_memory_;
    }
  }

  // Network.
  o.net = NetMode::kNone;
  if (request.network_access) {
    const auto& network = *request.network_access;
    if (network.mode() == egress::NetworkPolicy::Mode::kAny) {
      o.net = NetMode::kHost;
    } else if (network.mode() == egress::NetworkPolicy::Mode::kList) {
      if (!network.list().empty()) {
        o.net = NetMode::kProxy;
        o.proxy_port = options_.proxy_port;
        plan.proxy_allow = network.list();
        const std::string url = "http://127.0.0.1:" + std::to_string(options_.proxy_port);
        for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
          plan.env.push_back(std::string(name) + "=" + url);
        }
      }
    }
  }

  o.seccomp_bpf = seccomp_[static_cast<int>(o.net)];

  // Files.
  const fs::path& dir = request.service_dir;
  if (request.file_access) {
    FileRules rules = file_rules(dir, *request.file_access);
    if (rules.hide.size() == 1 && rules.hide.front().empty()) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "the jail cannot enforce this endpoint's negated fileAccess patterns: "
                         "more than " +
                             std::to_string(kMaxHideScan) + " files to examine");
    }
    o.read_write = std::move(rules.read_write);
    o.read_write_keep = std::move(rules.keep);
    o.hide = std::move(rules.hide);
  }
  // The handler's own code.
  std::error_code ec;
  auto add_code = [&](const fs::path& path) {
    const fs::path real = fs::weakly_canonical(path, ec);
    if (ec || !fs::exists(real, ec)) return;
    if (real == dir) {
      add_unique(o.read_exec, real.string());
    } else if (is_inside(real, dir)) {
      // A file inside a node_modules tree (a package run with node, such as an MCP server
      // installed in the service folder): that whole tree, where its dependencies resolve.
      const fs::path relative = real.lexically_relative(dir);
      fs::path modules = dir;
      for (const auto& part : relative) {
        modules /= part;
        if (part == "node_modules") {
          if (modules != real) {
            add_unique(o.read_exec, modules.string());
            return;
          }
          break;
        }
      }
      // A folder as is; a file with its folder (its sibling modules, its configuration).
      add_unique(o.read_exec, (fs::is_directory(real, ec) ? real : real.parent_path()).string());
    }
  };
  const fs::path program = fs::weakly_canonical(request.program, ec);
  if (!ec) {
    if (is_inside(program, dir)) {
      add_code(program);
    } else if (!under_system_root(program)) {
      // An interpreter installed elsewhere (/opt/node/bin/node): its installation folder.
      fs::path prefix = program.parent_path();
      if (prefix.filename() == "bin") prefix = prefix.parent_path();
      add_unique(o.read_exec, prefix.string());
    }
  }
  for (const auto& arg : request.args) {
    if (arg.empty() || arg.find("{{") != std::string::npos || arg.find('\0') != std::string::npos) {
      continue;
    }
    if (arg.front() == '-') continue;
    const fs::path candidate = fs::path(arg).is_absolute() ? fs::path(arg) : dir / arg;
    if (fs::exists(candidate, ec)) add_code(candidate);
  }
  return plan;
}

}  // namespace hearth::jail
