#include "mcp/stdio_transport.hpp"

#include <spdlog/spdlog.h>

#include <cstring>

namespace hearth::mcp {

namespace {
constexpr std::size_t kStderrKeep = 4096;

std::string tail_lines(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.size() > 1024) text = text.substr(text.size() - 1024);
  return std::string(text);
}
}  // namespace

std::string describe_exit(const proc::RunResult& result) {
  std::string out;
  switch (result.status) {
    case proc::RunResult::Status::kExited:
      out = "exited with code " + std::to_string(result.exit_code);
      break;
    case proc::RunResult::Status::kSignaled:
      out = "was killed by signal " + std::to_string(result.signal) + " (" +
            strsignal(result.signal) + ")";
      break;
    case proc::RunResult::Status::kSpawnFailed:
      out = "could not start: " + result.spawn_error;
      break;
    default:
      out = "ended";
      break;
  }
  const std::string err = tail_lines(result.err_tail);
  if (!err.empty()) out += "; its stderr ends with: " + err;
  return out;
}

struct StdioTransport::State {
  std::string label;
  Verdict verdict;
  std::size_t max_line = 0;

  std::mutex mutex;
  std::shared_ptr<proc::Duplex> child;
  Handlers handlers;
  bool closed = false;  ///< close() called or the child ended: handlers are dropped

  std::string stderr_tail;  ///< under mutex

  // Callback state (the Duplex runs its callbacks one at a time).
  std::string line;
  std::string stderr_line;

  void deliver_closed(Error reason) {
    std::function<void(Error)> cb;
    {
      std::lock_guard lock(mutex);
      if (closed) return;
      closed = true;
      cb = std::move(handlers.on_closed);
      handlers = {};
    }
    if (cb) cb(std::move(reason));
  }

  void on_stdout(std::string_view data) {
    while (!data.empty()) {
      const auto nl = data.find('\n');
      const auto piece = data.substr(0, nl);
      if (line.size() + piece.size() > max_line) {
        line.clear();
        std::shared_ptr<proc::Duplex> c;
        {
          std::lock_guard lock(mutex);
          c = child;
        }
        deliver_closed(Error::make(
            ErrorCode::kHandlerError,
            label + " wrote a message longer than " + std::to_string(max_line) + " bytes"));
        if (c) c->stop();
        return;
      }
      line.append(piece);
      if (nl == std::string_view::npos) return;
      data.remove_prefix(nl + 1);
      std::string text = std::move(line);
      line.clear();
      if (!text.empty() && text.back() == '\r') text.pop_back();
      if (text.find_first_not_of(" \t") == std::string::npos) continue;
      auto message = json::parse_text(text);
      if (!message.ok()) {
        // Servers sometimes print banners on stdout; the spec forbids it, but one bad line
        // should not end the session.
        spdlog::warn("{} wrote a line that is not JSON: {}", label,
                     text.substr(0, std::min<std::size_t>(text.size(), 200)));
        continue;
      }
      std::function<void(json::value)> cb;
      {
        std::lock_guard lock(mutex);
        if (closed) return;
        cb = handlers.on_message;
      }
      if (cb) cb(std::move(message).value());
    }
  }

  void on_stderr(std::string_view data) {
    {
      std::lock_guard lock(mutex);  // read by stderr_tail() from any thread
      stderr_tail.append(data);
      if (stderr_tail.size() > 2 * kStderrKeep) {
        stderr_tail.erase(0, stderr_tail.size() - kStderrKeep);
      }
    }
    stderr_line.append(data);
    std::size_t nl;
    while ((nl = stderr_line.find('\n')) != std::string::npos) {
      spdlog::debug("{} stderr: {}", label, stderr_line.substr(0, nl));
      stderr_line.erase(0, nl + 1);
    }
    if (stderr_line.size() > kStderrKeep) stderr_line.clear();
  }

  void on_exit(const proc::RunResult& result) {
    std::optional<Error> error;
    if (verdict) error = verdict(result);
    proc::RunResult r = result;
    if (r.err_tail.empty()) {
      std::lock_guard lock(mutex);
      r.err_tail = stderr_tail;
    }
    if (!error) {
      json::object data;
      data["exitCode"] = r.exit_code;
      if (r.signal != 0) data["signal"] = r.signal;
      data["stderr"] = tail_lines(r.err_tail);
      error =
          Error::make(ErrorCode::kHandlerError, label + " " + describe_exit(r), std::move(data));
    }
    deliver_closed(std::move(*error));
  }
};

StdioTransport::StdioTransport(std::string label, Launch launch, Verdict verdict,
                               std::size_t max_line)
    : state_(std::make_shared<State>()), launch_(std::move(launch)) {
  state_->label = std::move(label);
  state_->verdict = std::move(verdict);
  state_->max_line = max_line;
}

StdioTransport::~StdioTransport() {
  close();
}

Status StdioTransport::open(Handlers handlers) {
  {
    std::lock_guard lock(state_->mutex);
    state_->handlers = std::move(handlers);
  }
  std::weak_ptr<State> weak = state_;
  proc::Duplex::Callbacks callbacks;
  callbacks.on_stdout = [weak](std::string_view data) {
    if (auto s = weak.lock()) s->on_stdout(data);
  };
  callbacks.on_stderr = [weak](std::string_view data) {
    if (auto s = weak.lock()) s->on_stderr(data);
  };
  callbacks.on_exit = [weak](const proc::RunResult& result) {
    if (auto s = weak.lock()) s->on_exit(result);
  };
  auto child = launch_(std::move(callbacks));
  if (!child.ok()) {
    std::lock_guard lock(state_->mutex);
    state_->closed = true;
    state_->handlers = {};
    return std::move(child).error();
  }
  std::shared_ptr<proc::Duplex> stop_now;
  {
    std::lock_guard lock(state_->mutex);
    state_->child = std::move(child).value();
    if (state_->closed) stop_now = state_->child;  // closed while starting
  }
  if (stop_now) stop_now->stop();
  return {};
}

void StdioTransport::send(json::value message) {
  std::shared_ptr<proc::Duplex> child;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
    child = state_->child;
  }
  if (!child) return;
  std::string text = json::serialize(message);
  text += '\n';
  child->write(std::move(text));  // false: the child is exiting; on_exit will say why
}

void StdioTransport::close() {
  std::shared_ptr<proc::Duplex> child;
  {
    std::lock_guard lock(state_->mutex);
    state_->closed = true;
    state_->handlers = {};
    child = state_->child;
  }
  if (child) child->stop();
}

std::string StdioTransport::stderr_tail() const {
  std::lock_guard lock(state_->mutex);
  return tail_lines(state_->stderr_tail);
}

int StdioTransport::pid() const {
  std::lock_guard lock(state_->mutex);
  return state_->child ? state_->child->pid() : -1;
}

}  // namespace hearth::mcp
