#pragma once
/// Subscriptions of one service (lavs-spec-v1 5.4).
///
/// Subscribers with the same endpoint and the same input share one producer (for a script
/// handler: one running process). The producer starts with the first subscriber and stops with
/// the last one (unsubscribe or disconnect). Each item it produces is pushed to every subscriber as
/// `lavs/data`; when it ends by itself each subscriber gets `lavs/subscriptionEnded`.
/// Besides producers, any handler of the service can publish to a subscription endpoint
/// (Publisher): that is how a mutation notifies the subscribers.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "handlers/handler.hpp"
#include "json/json.hpp"
#include "rpc/session.hpp"

namespace hearth::host {

class SubscriptionHub final : public handlers::Publisher,
                              public std::enable_shared_from_this<SubscriptionHub> {
 public:
  explicit SubscriptionHub(std::string service) : service_(std::move(service)) {}
  ~SubscriptionHub() override;

  /// Adds a subscriber; starts the producer when it is the first for (endpoint, input).
  /// `open` starts the producer and is called at most once per producer.
  using OpenFn = std::function<Result<std::shared_ptr<handlers::Stream>>(handlers::StreamSink)>;
  Result<std::string> subscribe(const std::shared_ptr<rpc::Session>& session,
                                const std::string& endpoint, const json::value& input, OpenFn open);

  /// Removes a subscriber of `session`. False when no such subscription belongs to the session.
  bool unsubscribe(std::uint64_t session_id, const std::string& subscription_id);

  /// Removes every subscriber of a session (it disconnected).
  void drop_session(std::uint64_t session_id);

  /// Stops every producer and forgets every subscriber (daemon shutdown).
  void close_all();

  bool publish(std::string_view subscription, json::value data) override;

  /// Declares the service's subscription endpoints (publish refuses other names).
  void set_endpoints(std::set<std::string, std::less<>> endpoints) { endpoints_ = std::move(endpoints); }

  std::size_t subscriber_count() const;
  std::size_t producer_count() const;

 private:
  struct Subscriber {
    std::weak_ptr<rpc::Session> session;
    std::uint64_t session_id = 0;
    std::string endpoint;
    std::string key;
  };
  struct Producer {
    std::shared_ptr<handlers::Stream> stream;
    std::set<std::string> subscribers;
  };

  void on_data(const std::string& key, const json::value& data);
  void on_end(const std::string& key, const std::optional<Error>& error);
  /// The live sessions subscribed to producer `key` (lock held); with `remove`, the producer
  /// and its subscribers are forgotten too.
  std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> targets_locked(
      const std::string& key, bool remove);
  /// Removes a subscriber (lock held); returns the stream to close when it was the last one.
  std::shared_ptr<handlers::Stream> remove_locked(const std::string& subscription_id);

  std::string service_;
  std::set<std::string, std::less<>> endpoints_;
  mutable std::mutex mu_;
  std::map<std::string, Subscriber> subscribers_;  // by subscription id
  std::map<std::string, Producer> producers_;      // by endpoint + "\n" + canonical input
  std::set<std::uint64_t> hooked_sessions_;        // sessions whose close hook is registered
};

/// A fresh, unguessable subscription id ("sub-" + 16 hex digits).
std::string make_subscription_id();

}  // namespace hearth::host
