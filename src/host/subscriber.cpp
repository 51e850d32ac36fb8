#include "host/subscriber.hpp"

#include "common/connection_id.hpp"

namespace hearth::host {

LocalSubscriber::LocalSubscriber(ItemFn on_item, EndFn on_end)
    : id_(next_connection_id()), on_item_(std::move(on_item)), on_end_(std::move(on_end)) {}

LocalSubscriber::~LocalSubscriber() {
  close();
}

void LocalSubscriber::item(const std::string& subscription_id, const SubscriptionItem& item) {
  if (on_item_ && !closed_.load()) on_item_(subscription_id, item);
}

void LocalSubscriber::ended(const std::string& subscription_id, std::string_view reason,
                            const std::optional<Error>& error) {
  if (on_end_ && !closed_.load()) on_end_(subscription_id, reason, error);
}

void LocalSubscriber::on_close(std::function<void()> hook) {
  {
    std::lock_guard lock(mu_);
    if (!closed_.load()) {
      hooks_.push_back(std::move(hook));
      return;
    }
  }
  hook();
}

void LocalSubscriber::close() {
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(mu_);
    if (closed_.exchange(true)) return;
    hooks.swap(hooks_);
  }
  // Outside the lock: a hook takes the subscription hub's.
  for (auto& hook : hooks) hook();
}

}  // namespace hearth::host
