#include "rpc/session.hpp"

#include "common/connection_id.hpp"

namespace hearth::rpc {

Session::Session(std::string transport, PushFn push)
    : id_(next_connection_id()), transport_(std::move(transport)), push_(std::move(push)) {}

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
