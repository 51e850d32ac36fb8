#include "rpc/session.hpp"

namespace hearth::rpc {
namespace {
std::atomic<std::uint64_t> g_next_session_id{1};
}

Session::Session(std::string transport, PushFn push)
    : id_(g_next_session_id.fetch_add(1)),
      transport_(std::move(transport)),
      push_(std::move(push)) {}

Session::~Session() {
  close();
}

void Session::push(std::string message) const {
  if (push_ && !closed_.load()) push_(std::move(message));
}

void Session::on_close(std::function<void()> hook) {
  {
    std::lock_guard lock(mu_);
    if (!closed_.load()) {
      hooks_.push_back(std::move(hook));
      return;
    }
  }
  hook();
}

void Session::close() {
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(mu_);
    if (closed_.exchange(true)) return;
    hooks.swap(hooks_);
  }
  // Hooks run outside the lock: they may take other locks (the subscription hub's).
  for (auto& hook : hooks) hook();
}

}  // namespace hearth::rpc
