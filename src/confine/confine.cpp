#include "confine/confine.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/ascii.hpp"
#include "common/pipes.hpp"
#include "common/utf8.hpp"
#include "egress/proxy.hpp"
#include "jail/control.hpp"

namespace hearth::confine {

namespace asio = boost::asio;

struct Confinement::State : std::enable_shared_from_this<Confinement::State> {
  State(const asio::any_io_executor& executor, Fd fd)
      : strand(asio::make_strand(executor)), descriptor(strand, fd.get()) {
    fd.release();  // the descriptor owns it now
  }

  asio::strand<asio::any_io_executor> strand;
  asio::posix::stream_descriptor descriptor;  ///< our end of the control socket
  Fd child_end;                               ///< the launcher's end (fd 4 in the child)
  std::string who;
  std::optional<egress::AllowList> allow;

  std::mutex mutex;  ///< guards everything below
  bool closed = false;
  bool oom = false;
  std::optional<std::pair<std::string, std::string>> failed;  ///< mechanism, detail
  std::shared_ptr<egress::Proxy> proxy;

  void arm() {
    descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const boost::system::error_code& ec) {
                            if (ec) return;
                            self->drain();
                            std::lock_guard lock(self->mutex);
                            if (!self->closed) self->arm();
                          });
  }

  /// Reads every message waiting on the control socket. Any thread.
  void drain() {
    std::lock_guard lock(mutex);
    if (closed) return;
    while (auto received = jail::receive_message(descriptor.native_handle(), /*wait=*/false)) {
      Fd& fd = received->fd;  // closed with the message unless the proxy takes it
      const std::string_view message(received->text);
      if (message == "listen" && fd) {
        if (allow && !proxy) {
          egress::ProxyOptions options;
          options.allow = *allow;
          options.on_event = [who = who](const egress::ProxyEvent& e) {
            if (e.allowed && (e.status == 0 || e.status == 200)) {
              spdlog::info("{}: egress to {}:{} ({})", who, e.host, e.port, e.detail);
            } else {
              spdlog::warn("{}: egress refused{}{}:{} - {}", who, e.host.empty() ? "" : " to ",
                           e.host, e.port, e.detail);
            }
          };
          auto started = egress::Proxy::start(strand, std::move(fd), std::move(options));
          if (started.ok()) {
            proxy = std::move(started).value();
          } else {
            spdlog::error("{}: cannot serve the egress proxy: {}", who, started.error().message);
          }
        }
      } else if (message == "oom") {
        oom = true;
      } else if (message.substr(0, 6) == "error\t") {
        const auto rest = message.substr(6);
        const auto tab = rest.find('\t');
        failed.emplace(std::string(rest.substr(0, tab)), tab == std::string_view::npos
                                                             ? std::string()
                                                             : std::string(rest.substr(tab + 1)));
      }
    }
  }

  /// Stops the proxy and closes the control socket. Any thread; idempotent.
  void close() {
    std::shared_ptr<egress::Proxy> stopping;
    {
      std::lock_guard lock(mutex);
      if (closed) return;
      closed = true;
      stopping = std::move(proxy);
      child_end.reset();
    }
    if (stopping) stopping->stop();
    asio::post(strand, [self = shared_from_this()] {
      boost::system::error_code ignored;
      self->descriptor.close(ignored);
    });
  }
};

std::string ended_how(const proc::RunResult& result, json::object& data) {
  switch (result.status) {
    case proc::RunResult::Status::kSignaled:
      data["signal"] = result.signal;
      return "was killed by signal " + std::to_string(result.signal);
    case proc::RunResult::Status::kExited:
      data["exitCode"] = result.exit_code;
      return "exited with code " + std::to_string(result.exit_code);
    default:
      return "ended (" +
             (result.spawn_error.empty() ? std::string("it could not run") : result.spawn_error) +
             ")";
  }
}

std::string stderr_excerpt(std::string_view stderr_tail) {
  constexpr std::size_t kKeep = 4096;
  if (stderr_tail.size() > kKeep) stderr_tail.remove_prefix(stderr_tail.size() - kKeep);
  return valid_utf8(std::string(stderr_tail));
}

bool looks_out_of_memory(std::string_view tail) {
  const std::string lower = ascii::lower(tail);
  for (const char* needle :
       {"memoryerror", "cannot allocate memory", "out of memory", "bad_alloc",
        "failed to reserve virtual memory", "memory exhausted", "allocation failed"}) {
    if (lower.find(needle) != std::string::npos) return true;
  }
  return false;
}

namespace {

jail::Request jail_request(const permissions::Permissions& permissions,
                           const std::filesystem::path& service_dir,
                           const std::vector<std::string>& raw_args, const proc::Command& cmd,
                           const ConfineExtras& extras) {
  jail::Request request;
  request.service_dir = service_dir;
  request.file_access = permissions.file_access;
  request.network_access = permissions.network_access;
  request.max_memory = permissions.max_memory;
  request.address_space_extra = extras.address_space;
  request.memory_extra = extras.memory;
  request.program = cmd.program;
  for (const auto& arg : raw_args) {
    if (arg.find("{{") != std::string::npos) continue;  // filled from input: never widens the jail
    const std::filesystem::path p(arg);
    request.args.push_back(p.is_absolute() || cmd.cwd.empty() ? arg : (cmd.cwd / p).string());
  }
  return request;
}

/// The launcher's options, then each path they name with its device and inode (lstat: a link
/// swapped in counts as a change), "-" when absent.
std::string fingerprint_of(const jail::LaunchOptions& options) {
  std::string out;
  for (const auto& arg : options.to_args()) {
    out += arg;
    out += '\n';
  }
  for (const auto* list : {&options.read_exec, &options.read_only, &options.read_write,
                           &options.read_write_keep, &options.hide}) {
    for (const auto& path : *list) {
      struct stat st {};
      out += path;
      if (::lstat(path.c_str(), &st) == 0) {
        out += '\t' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + '\n';
      } else {
        out += "\t-\n";
      }
    }
  }
  return out;
}

}  // namespace

Result<std::string> Confinement::plan_fingerprint(const jail::Jail& jail,
                                                  const permissions::Permissions& permissions,
                                                  const std::filesystem::path& service_dir,
                                                  const std::vector<std::string>& raw_args,
                                                  const proc::Command& cmd, ConfineExtras extras) {
  auto plan = jail.plan(jail_request(permissions, service_dir, raw_args, cmd, extras));
  if (!plan.ok()) return std::move(plan).error();
  return fingerprint_of(plan.value().options);
}

Result<std::shared_ptr<Confinement>> Confinement::start(const jail::Jail& jail,
                                                        const permissions::Permissions& permissions,
                                                        const std::filesystem::path& service_dir,
                                                        const std::vector<std::string>& raw_args,
                                                        proc::Command& cmd,
                                                        const asio::any_io_executor& executor,
                                                        std::string who, ConfineExtras extras) {
  auto plan = jail.plan(jail_request(permissions, service_dir, raw_args, cmd, extras));
  if (!plan.ok()) return std::move(plan).error();

  std::shared_ptr<Confinement> c(new Confinement());
  c->jail_ = &jail;
  c->max_memory_ = permissions.max_memory;
  if (!plan.value().confined) {
    spdlog::warn(
        "{}: running WITHOUT the jail (--insecure-no-sandbox): its permissions are not "
        "enforced",
        who);
    return c;
  }
  c->confined_ = true;
  if (extras.exec_on_request) c->fingerprint_ = fingerprint_of(plan.value().options);

  std::optional<egress::AllowList> allow;
  if (plan.value().options.net == jail::NetMode::kProxy) {
    allow = std::move(plan.value().proxy_allow);
  }

  auto fds = make_socket_pair(SOCK_SEQPACKET | SOCK_CLOEXEC);
  if (!fds.ok()) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot create the jail's control socket: " + fds.error().message);
  }
  ::fcntl(fds->at(0).get(), F_SETFL, ::fcntl(fds->at(0).get(), F_GETFL) | O_NONBLOCK);
  const int child_end = fds->at(1).get();
  auto state = std::make_shared<State>(executor, std::move(fds->at(0)));
  state->child_end = std::move(fds->at(1));
  state->who = std::move(who);
  state->allow = std::move(allow);
  c->state_ = state;

  plan.value().options.control_fd = 4;
  plan.value().options.exec_on_request = extras.exec_on_request;
  if (extras.exec_on_request) c->jail_env_ = plan.value().env;
  cmd.control_fd = child_end;
  cmd.launcher_options = plan.value().options.to_args();
  for (auto& entry : plan.value().env) cmd.env.push_back(std::move(entry));
  asio::post(state->strand, [state] { state->arm(); });
  return c;
}

Confinement::~Confinement() {
  if (state_) state_->close();
}

Status Confinement::release(const std::vector<std::string>& argv, std::vector<std::string> env) {
  auto failed = [](const std::string& why) {
    return Error::make(ErrorCode::kInternalError, "cannot start the program in its jail: " + why);
  };
  if (!state_) return failed("the process is not jailed");
  for (const auto& entry : jail_env_) env.push_back(entry);
  const std::string spec = jail::encode_exec(argv, env);
  if (spec.size() > jail::kMaxExecSpec) {
    return failed("its arguments and environment are too large");
  }
  Fd memfd(::memfd_create("hearth-exec", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd) return failed(std::string("memfd_create: ") + std::strerror(errno));
  for (std::size_t written = 0; written < spec.size();) {
    const ssize_t n = ::write(memfd.get(), spec.data() + written, spec.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failed(std::string("writing the exec message: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  // Sealed: what the launcher reads is what was written, whoever else holds the memfd.
  ::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
  std::lock_guard lock(state_->mutex);
  if (state_->closed) return failed("the jail was closed");
  if (!jail::send_message(state_->descriptor.native_handle(), "exec", memfd.get())) {
    return failed(std::string("sending the exec message: ") + std::strerror(errno));
  }
  return {};
}

std::optional<Error> Confinement::finish(const proc::RunResult& result) {
  if (!state_) return std::nullopt;
  state_->drain();
  bool oom = false;
  std::optional<std::pair<std::string, std::string>> failed;
  {
    std::lock_guard lock(state_->mutex);
    oom = state_->oom;
    failed = state_->failed;
  }
  state_->close();
  using Status = proc::RunResult::Status;
  // The launcher removes its cgroups itself; only one killed by the daemon (time or output limit)
  // or by a signal cannot.
  if (jail_ != nullptr && result.status != Status::kExited) jail_->cleanup(result.pid);

  if (failed && result.status == Status::kExited && result.exit_code == 127) {
    json::object data;
    data["mechanism"] = failed->first;
    data["detail"] = failed->second;
    return Error::make(ErrorCode::kPermissionDenied,
                       "the jail could not apply " + failed->first + ": " + failed->second,
                       std::move(data));
  }
  const bool failed_run = (result.status == Status::kExited && result.exit_code != 0) ||
                          result.status == Status::kSignaled;
  if (max_memory_ && failed_run && (oom || looks_out_of_memory(result.err_tail))) {
    json::object data;
    data["reason"] = "memory-limit";
    data["maxMemory"] = *max_memory_;
    return Error::make(ErrorCode::kHandlerError, "memory limit exceeded", std::move(data));
  }
  return std::nullopt;
}

void Confinement::close() {
  if (state_) state_->close();
}

void Confinement::abandon(int launcher_pid) {
  if (!state_) return;
  state_->close();
  if (jail_ == nullptr || launcher_pid <= 0) return;
  // The launcher was killed with its group: its cgroups empty once the kernel has reaped the jail.
  auto timer = std::make_shared<asio::steady_timer>(state_->strand, std::chrono::milliseconds(500));
  timer->async_wait([timer, jail = jail_, launcher_pid](const boost::system::error_code&) {
    jail->cleanup(launcher_pid);
  });
}

Environment base_environment(const std::string& service, const std::filesystem::path& dir) {
  Environment vars;
  vars["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  vars["LANG"] = "C.UTF-8";
  vars["HOME"] = dir.string();
  vars["LAVS_SERVICE"] = service;
  vars["LAVS_SERVICE_DIR"] = dir.string();
  return vars;
}

std::vector<std::string> environment_entries(const Environment& vars) {
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) {
    std::string entry = name;
    entry += '=';
    entry += value;
    out.push_back(std::move(entry));
  }
  return out;
}

namespace {

/// A child whose jail is released when it is stopped (the run's result is not known then).
struct ConfinedChild final : proc::Duplex {
  struct Shared {
    std::shared_ptr<Confinement> confinement;
    std::atomic<bool> finished{false};
    std::mutex mutex;
    std::optional<Error> verdict;
  };
  std::shared_ptr<proc::Duplex> inner;
  std::shared_ptr<Shared> shared;

  bool write(std::string data) override { return inner->write(std::move(data)); }
  int pid() const override { return inner->pid(); }
  void stop() override {
    const int launcher = inner->pid();
    inner->stop();
    if (!shared->finished.exchange(true)) shared->confinement->abandon(launcher);
  }
};

}  // namespace

Result<ConfinedStdio> confined_stdio(const jail::Jail* jail,
                                     const permissions::Permissions& permissions,
                                     const std::filesystem::path& service_dir,
                                     const std::vector<std::string>& raw_args, proc::Command cmd,
                                     const asio::any_io_executor& executor, std::string who) {
  auto shared = std::make_shared<ConfinedChild::Shared>();
  if (jail != nullptr) {
    auto confinement = Confinement::start(*jail, permissions, service_dir, raw_args, cmd, executor,
                                          std::move(who));
    if (!confinement.ok()) return std::move(confinement).error();
    shared->confinement = std::move(confinement).value();
  }
  ConfinedStdio out;
  out.launch = [executor, cmd = std::move(cmd), shared](
                   proc::Duplex::Callbacks callbacks) -> Result<std::shared_ptr<proc::Duplex>> {
    if (shared->confinement) {
      auto on_exit = std::move(callbacks.on_exit);
      callbacks.on_exit = [shared, on_exit = std::move(on_exit)](const proc::RunResult& result) {
        if (!shared->finished.exchange(true)) {
          auto verdict = shared->confinement->finish(result);
          std::lock_guard lock(shared->mutex);
          shared->verdict = std::move(verdict);
        }
        if (on_exit) on_exit(result);
      };
    }
    auto child = proc::start_duplex(executor, cmd, std::move(callbacks));
    if (!child.ok()) {
      if (shared->confinement && !shared->finished.exchange(true)) shared->confinement->abandon(-1);
      return std::move(child).error();
    }
    if (!shared->confinement) return std::move(child).value();
    auto wrapped = std::make_shared<ConfinedChild>();
    wrapped->inner = std::move(child).value();
    wrapped->shared = shared;
    return std::shared_ptr<proc::Duplex>(std::move(wrapped));
  };
  out.verdict = [shared](const proc::RunResult&) -> std::optional<Error> {
    std::lock_guard lock(shared->mutex);
    return shared->verdict;
  };
  return out;
}

}  // namespace hearth::confine
