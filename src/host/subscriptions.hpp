#pragma once
/// Subscriptions of one service (lavs-spec-v1 5.4).
///
/// Subscribers with the same endpoint and the same input share one producer (for a script
/// handler: one running process). The producer starts with the first subscriber and stops with
/// the last one (unsubscribe or disconnect). Each item it produces is told to every subscriber
/// (host::Subscriber::item); when it ends by itself each subscriber is told so (ended()).
/// Besides producers, any handler of the service can publish to a subscription endpoint
/// (Publisher): that is how a mutation notifies the subscribers.
///
/// Every subscriber gets the current state first: one that joins a shared producer that already
/// produced gets its latest item, and a handler kind whose producer computes a snapshot once
/// (function, mcp) gets a producer per subscriber. A new subscriber is held until activate():
/// items for it wait, so that nothing reaches the client before the subscription id does.
/// Subscribers are connections (host/subscriber.hpp): what a client receives, and in which wire
/// format, is theirs to decide.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "handlers/handler.hpp"
#include "host/subscriber.hpp"
#include "json/json.hpp"

namespace hearth::host {

class SubscriptionHub final : public handlers::Publisher,
                              public std::enable_shared_from_this<SubscriptionHub> {
 public:
  /// What one connection may hold.
  struct Limits {
    std::size_t producers_per_session = 32;  ///< producers a connection started and that run
    std::size_t subscriptions_per_session = 1024;
  };

  explicit SubscriptionHub(std::string service) : service_(std::move(service)) {}
  SubscriptionHub(std::string service, Limits limits)
      : service_(std::move(service)), limits_(limits) {}
  ~SubscriptionHub() override;

  /// Adds a subscriber, held until activate(); starts the producer when it is the first for
  /// (endpoint, input), or always when `shared` is false. `open` starts the producer and is
  /// called at most once per producer.
  using OpenFn = std::function<Result<std::shared_ptr<handlers::Stream>>(handlers::StreamSink)>;
  Result<std::string> subscribe(const std::shared_ptr<Subscriber>& subscriber,
                                const std::string& endpoint, const json::value& input,
                                const OpenFn& open, bool shared = true);

  /// Lets a subscriber's items flow: what was held for it (the latest item of a shared producer,
  /// items produced or published since it joined, the end) is told in order, then it gets
  /// items as they come. Call it right after the subscription id was sent, on the connection's
  /// strand. Unknown ids (already unsubscribed) are ignored.
  void activate(const std::string& subscription_id);

  /// Removes a subscription of the subscriber `subscriber_id`. False when it holds none with
  /// that id.
  bool unsubscribe(std::uint64_t subscriber_id, const std::string& subscription_id);

  /// Removes every subscription of a subscriber (it disconnected).
  void drop_subscriber(std::uint64_t subscriber_id);

  /// Stops every producer and forgets every subscriber (daemon shutdown).
  void close_all();

  /// The service is being replaced or removed: every subscription ends with `reason(endpoint)`
  /// as its reason, every producer stops, and later subscribe() calls are refused (the client
  /// subscribes again, to the new definition).
  void end_all(const std::function<std::string(std::string_view endpoint)>& reason);

  /// Tells the endpoint's subscribers here and, with a relay, the daemons sharing the
  /// database (whose hubs of the same service publish_here()).
  bool publish(std::string_view subscription, json::value data) override;
  /// Tells the endpoint's subscribers here only: an item another daemon published.
  bool publish_here(std::string_view subscription, json::value data);

  /// What publish() also gives every item to (endpoint, data): set before the service is
  /// served; none by default.
  using Relay = std::function<void(std::string_view endpoint, const json::value& data)>;
  void set_relay(Relay relay) { relay_ = std::move(relay); }

  /// Declares the service's subscription endpoints (publish refuses other names).
  void set_endpoints(std::set<std::string, std::less<>> endpoints) {
    endpoints_ = std::move(endpoints);
  }

  std::size_t subscriber_count() const;
  std::size_t producer_count() const;

 private:
  /// What a subscriber is told: an item, or (item null) the end with its reason.
  struct Event {
    std::shared_ptr<const SubscriptionItem> item;
    std::string reason;
    std::optional<Error> error;
  };
  struct Subscription {
    std::shared_ptr<Subscriber> subscriber;
    std::uint64_t subscriber_id = 0;
    std::string endpoint;
    std::string key;
    bool active = false;
    bool ended = false;       ///< its producer ended while it was held
    std::vector<Event> held;  ///< what waits for activate()
  };
  struct Producer {
    std::shared_ptr<handlers::Stream> stream;
    std::set<std::string> subscriptions;
    std::uint64_t owner = 0;  ///< the subscriber that started it (counted against its limit)
    std::shared_ptr<const SubscriptionItem> latest;
  };
  /// Events to tell once the lock is released: subscriber, subscription id, event.
  struct Push {
    std::shared_ptr<Subscriber> subscriber;
    std::string subscription_id;
    Event event;
  };
  using Pushes = std::vector<Push>;

  /// Tells `event` to the subscription `id` now (into `out`) or holds it (lock held).
  static void deliver_locked(const std::string& id, Subscription& sub, Event event, Pushes& out);
  static void send_all(Pushes& pushes);
  void forget_producer_locked(std::map<std::string, Producer>::iterator it);
  /// Takes `id` out of its subscriber's ids (lock held).
  void forget_id_locked(std::uint64_t subscriber_id, const std::string& id);

  void on_data(const std::string& key, const json::value& data);
  void on_end(const std::string& key, const std::optional<Error>& error);
  /// Removes a subscription (lock held); returns the stream to close when it was the last one.
  std::shared_ptr<handlers::Stream> remove_locked(const std::string& subscription_id);

  std::string service_;
  Relay relay_;
  std::set<std::string, std::less<>> endpoints_;
  mutable std::mutex mu_;
  bool ended_ = false;                                 ///< end_all() was called
  std::map<std::string, Subscription> subscriptions_;  // by subscription id
  std::map<std::string, Producer> producers_;          // by endpoint + "\n" + canonical input
  std::set<std::uint64_t> hooked_subscribers_;         // subscribers whose close hook is registered
  Limits limits_;
  std::map<std::uint64_t, std::size_t> producers_by_subscriber_;
  std::map<std::uint64_t, std::set<std::string>> ids_by_subscriber_;  ///< subscription ids
};

/// A fresh, unguessable subscription id ("sub-" + 16 hex digits).
std::string make_subscription_id();

}  // namespace hearth::host
