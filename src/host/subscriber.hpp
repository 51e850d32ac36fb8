#pragma once
/// Who a subscription's items go to, as the host sees it. The host tells a subscriber each item
/// and the end of its subscriptions; how that reaches a client is the subscriber's business (a
/// WebSocket connection gets lavs/data and lavs/subscriptionEnded notifications:
/// methods/lavs/subscriber.hpp; an MCP session, resource updates; a workspace, its source's
/// values).

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::host {

/// An item as the host hands it out: the value, and its JSON text, made once for every
/// subscriber it goes to.
struct SubscriptionItem {
  json::value data;
  std::string text;  ///< json::dump(data)
};

/// A client connection, or a consumer inside the daemon, that holds subscriptions.
/// item() and ended() are called outside the host's locks, in order for each subscription, from
/// any thread: they must be thread-safe and must not block (queue and return).
class Subscriber {
 public:
  virtual ~Subscriber() = default;
  /// The same for every subscription of one connection (common/connection_id.hpp): limits are
  /// counted, and subscriptions ended (Host::unsubscribe, a disconnect), by it.
  virtual std::uint64_t id() const = 0;
  /// An item of the subscription `subscription_id`.
  virtual void item(const std::string& subscription_id, const SubscriptionItem& item) = 0;
  /// The subscription `subscription_id` ended: `reason` is "completed", "error" (with `error`),
  /// or what a reload said ("reloaded", "removed"). Nothing of it follows.
  virtual void ended(const std::string& subscription_id, std::string_view reason,
                     const std::optional<Error>& error) = 0;
  /// Runs `hook` when the subscriber goes away (its connection closed), at once if it already
  /// has: its subscriptions end then.
  virtual void on_close(std::function<void()> hook) = 0;
};

/// A subscriber inside the daemon (a workspace's source, an MCP session's resource): items and
/// ends go to the functions given. close() (or the destructor) ends its subscriptions; the host
/// holds it until then.
class LocalSubscriber final : public Subscriber {
 public:
  using ItemFn =
      std::function<void(const std::string& subscription_id, const SubscriptionItem& item)>;
  using EndFn = std::function<void(const std::string& subscription_id, std::string_view reason,
                                   const std::optional<Error>& error)>;

  explicit LocalSubscriber(ItemFn on_item, EndFn on_end = nullptr);
  ~LocalSubscriber() override;
  LocalSubscriber(const LocalSubscriber&) = delete;
  LocalSubscriber& operator=(const LocalSubscriber&) = delete;

  std::uint64_t id() const override { return id_; }
  void item(const std::string& subscription_id, const SubscriptionItem& item) override;
  void ended(const std::string& subscription_id, std::string_view reason,
             const std::optional<Error>& error) override;
  void on_close(std::function<void()> hook) override;
  /// Runs the close hooks once; nothing is told after it.
  void close();

 private:
  std::uint64_t id_;
  ItemFn on_item_;
  EndFn on_end_;
  std::mutex mu_;
  std::atomic<bool> closed_{false};
  std::vector<std::function<void()>> hooks_;
};

}  // namespace hearth::host
