#include "host/subscriptions.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <vector>

#include "common/fan_out.hpp"
#include "common/random.hpp"

namespace hearth::host {

std::string make_subscription_id() {
  return "sub-" + random_hex(8);
}

SubscriptionHub::~SubscriptionHub() {
  close_all();
}

namespace {
Error limit_error(const std::string& what, std::size_t max) {
  json::object data;
  data["constraint"] = "limit";
  data["limit"] = what;
  data["max"] = max;
  return Error::make(
      ErrorCode::kPermissionDenied,
      "Permission denied: a connection may hold at most " + std::to_string(max) + " " + what,
      std::move(data));
}
/// An item with its text, made once for every subscriber it goes to.
std::shared_ptr<const SubscriptionItem> make_item(json::value data) {
  std::string text = json::dump(data);
  return std::make_shared<const SubscriptionItem>(
      SubscriptionItem{std::move(data), std::move(text)});
}
}  // namespace

void SubscriptionHub::send_all(Pushes& pushes) {
  const FanOut fan_out(pushes.size());
  for (auto& push : pushes) {
    if (push.event.item) {
      push.subscriber->item(push.subscription_id, *push.event.item);
    } else {
      push.subscriber->ended(push.subscription_id, push.event.reason, push.event.error);
    }
  }
}

Result<std::string> SubscriptionHub::subscribe(const std::shared_ptr<Subscriber>& subscriber,
                                               const std::string& endpoint,
                                               const json::value& input, const OpenFn& open,
                                               bool shared) {
  std::string id = make_subscription_id();
  std::string key = endpoint + "\n" + json::canonical(input);
  if (!shared) key += "\n" + id;  // a producer of its own
  const std::uint64_t sid = subscriber->id();
  bool hook_needed = false;
  {
    std::lock_guard lock(mu_);
    if (ended_) {
      json::object data;
      data["field"] = "service";
      data["constraint"] = "reloaded";
      data["service"] = service_;
      return Error::make(ErrorCode::kInvalidParams,
                         "Invalid params: service '" + service_ +
                             "' was reloaded while subscribing: subscribe again",
                         std::move(data));
    }
    if (auto own = ids_by_subscriber_.find(sid);
        own != ids_by_subscriber_.end() &&
        own->second.size() >= limits_.subscriptions_per_session) {
      return limit_error("subscriptions", limits_.subscriptions_per_session);
    }
    Subscription sub;
    sub.subscriber = subscriber;
    sub.subscriber_id = sid;
    sub.endpoint = endpoint;
    sub.key = key;
    auto it = producers_.find(key);
    if (it == producers_.end()) {
      if (producers_by_subscriber_[sid] >= limits_.producers_per_session) {
        return limit_error("running subscription producers", limits_.producers_per_session);
      }
      // Callbacks hold a weak reference: a producer outliving the hub must not touch it.
      std::weak_ptr<SubscriptionHub> weak = weak_from_this();
      handlers::StreamSink sink;
      sink.on_data = [weak, key](const json::value& data) {
        if (auto self = weak.lock()) self->on_data(key, data);
      };
      sink.on_end = [weak, key](const std::optional<Error>& error) {
        if (auto self = weak.lock()) self->on_end(key, error);
      };
      // Started under the lock so that two first subscribers cannot start two producers. The
      // stream's callbacks run asynchronously, never from within open().
      auto stream = open(std::move(sink));
      if (!stream.ok()) return std::move(stream).error();
      it = producers_.emplace(key, Producer{std::move(stream).value(), {}, sid, nullptr}).first;
      ++producers_by_subscriber_[sid];
    } else if (it->second.latest) {
      // Joining a running producer: its current state first.
      sub.held.push_back(Event{it->second.latest, {}, std::nullopt});
    }
    it->second.subscriptions.insert(id);
    subscriptions_.emplace(id, std::move(sub));
    ids_by_subscriber_[sid].insert(id);
    hook_needed = hooked_subscribers_.insert(sid).second;
  }
  if (hook_needed) {
    // Dropped with the connection; the hook holds a weak reference so the hub may go first.
    std::weak_ptr<SubscriptionHub> weak = weak_from_this();
    subscriber->on_close([weak, sid] {
      if (auto self = weak.lock()) self->drop_subscriber(sid);
    });
  }
  return id;
}

void SubscriptionHub::activate(const std::string& subscription_id) {
  Pushes held;
  {
    std::lock_guard lock(mu_);
    auto it = subscriptions_.find(subscription_id);
    if (it == subscriptions_.end() || it->second.active) return;
    it->second.active = true;
    for (auto& event : it->second.held) {
      held.push_back(Push{it->second.subscriber, subscription_id, std::move(event)});
    }
    it->second.held.clear();
    if (it->second.ended) {
      forget_id_locked(it->second.subscriber_id, it->first);
      subscriptions_.erase(it);
    }
  }
  // On the connection's strand what is told is written at once, before any item another thread
  // tells after the flag was set: the order holds.
  send_all(held);
}

void SubscriptionHub::deliver_locked(const std::string& id, Subscription& sub, Event event,
                                     Pushes& out) {
  if (!sub.active) {
    sub.held.push_back(std::move(event));
    return;
  }
  out.push_back(Push{sub.subscriber, id, std::move(event)});
}

void SubscriptionHub::forget_id_locked(std::uint64_t subscriber_id, const std::string& id) {
  auto own = ids_by_subscriber_.find(subscriber_id);
  if (own == ids_by_subscriber_.end()) return;
  own->second.erase(id);
  if (own->second.empty()) ids_by_subscriber_.erase(own);
}

void SubscriptionHub::forget_producer_locked(std::map<std::string, Producer>::iterator it) {
  auto owner = producers_by_subscriber_.find(it->second.owner);
  if (owner != producers_by_subscriber_.end() && owner->second > 0) {
    if (--owner->second == 0) producers_by_subscriber_.erase(owner);
  }
  producers_.erase(it);
}

std::shared_ptr<handlers::Stream> SubscriptionHub::remove_locked(
    const std::string& subscription_id) {
  auto it = subscriptions_.find(subscription_id);
  if (it == subscriptions_.end()) return nullptr;
  std::string key = it->second.key;
  forget_id_locked(it->second.subscriber_id, subscription_id);
  subscriptions_.erase(it);
  auto p = producers_.find(key);
  if (p == producers_.end()) return nullptr;
  p->second.subscriptions.erase(subscription_id);
  if (!p->second.subscriptions.empty()) return nullptr;
  auto stream = std::move(p->second.stream);
  forget_producer_locked(p);
  return stream;
}

bool SubscriptionHub::unsubscribe(std::uint64_t subscriber_id, const std::string& subscription_id) {
  std::shared_ptr<handlers::Stream> to_close;
  {
    std::lock_guard lock(mu_);
    auto it = subscriptions_.find(subscription_id);
    if (it == subscriptions_.end() || it->second.subscriber_id != subscriber_id) return false;
    to_close = remove_locked(subscription_id);
  }
  if (to_close) to_close->close();
  return true;
}

void SubscriptionHub::drop_subscriber(std::uint64_t subscriber_id) {
  std::vector<std::shared_ptr<handlers::Stream>> to_close;
  {
    std::lock_guard lock(mu_);
    hooked_subscribers_.erase(subscriber_id);
    // The subscriber's own ids, not a walk over every subscription: 10,000 subscribers leaving
    // at once would otherwise cost 10,000 walks of 10,000.
    std::vector<std::string> ids;
    if (auto own = ids_by_subscriber_.find(subscriber_id); own != ids_by_subscriber_.end()) {
      ids.assign(own->second.begin(), own->second.end());
    }
    for (const auto& id : ids) {
      if (auto s = remove_locked(id)) to_close.push_back(std::move(s));
    }
    ids_by_subscriber_.erase(subscriber_id);
  }
  for (auto& s : to_close) s->close();
}

void SubscriptionHub::close_all() {
  std::vector<std::shared_ptr<handlers::Stream>> to_close;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, producer] : producers_) to_close.push_back(std::move(producer.stream));
    producers_.clear();
    subscriptions_.clear();
    producers_by_subscriber_.clear();
    ids_by_subscriber_.clear();
  }
  for (auto& s : to_close) {
    if (s) s->close();
  }
}

void SubscriptionHub::end_all(const std::function<std::string(std::string_view endpoint)>& reason) {
  Pushes pushes;
  std::vector<std::shared_ptr<handlers::Stream>> to_close;
  {
    std::lock_guard lock(mu_);
    ended_ = true;
    for (auto& [id, sub] : subscriptions_) {
      if (sub.ended) continue;  // already told (held until activate)
      deliver_locked(id, sub, Event{nullptr, reason(sub.endpoint), std::nullopt}, pushes);
      sub.ended = true;
    }
    // Held subscriptions stay until activate() hands them what they were told.
    std::erase_if(subscriptions_, [](const auto& entry) { return entry.second.active; });
    for (auto& [key, producer] : producers_) to_close.push_back(std::move(producer.stream));
    producers_.clear();
    producers_by_subscriber_.clear();
    ids_by_subscriber_.clear();
  }
  send_all(pushes);
  for (auto& s : to_close) {
    if (s) s->close();
  }
}

void SubscriptionHub::on_data(const std::string& key, const json::value& data) {
  Pushes pushes;
  {
    std::lock_guard lock(mu_);
    auto p = producers_.find(key);
    if (p == producers_.end()) return;
    p->second.latest = make_item(data);
    for (const auto& id : p->second.subscriptions) {
      auto s = subscriptions_.find(id);
      if (s != subscriptions_.end()) {
        deliver_locked(id, s->second, Event{p->second.latest, {}, std::nullopt}, pushes);
      }
    }
  }
  send_all(pushes);
}

void SubscriptionHub::on_end(const std::string& key, const std::optional<Error>& error) {
  Pushes pushes;
  std::shared_ptr<handlers::Stream> ended;  // released after the lock: it may hold the service
  {
    std::lock_guard lock(mu_);
    auto p = producers_.find(key);
    if (p == producers_.end()) return;
    ended = std::move(p->second.stream);
    for (const auto& id : p->second.subscriptions) {
      auto s = subscriptions_.find(id);
      if (s == subscriptions_.end()) continue;
      deliver_locked(id, s->second, Event{nullptr, error ? "error" : "completed", error}, pushes);
      if (s->second.active) {
        forget_id_locked(s->second.subscriber_id, id);
        subscriptions_.erase(s);
      } else {
        s->second.ended = true;  // told at activate(), then forgotten
      }
    }
    forget_producer_locked(p);
  }
  if (error) {
    spdlog::warn("{}: subscription producer ended: {}", service_, error->message);
  }
  send_all(pushes);
}

bool SubscriptionHub::publish(std::string_view subscription, json::value data) {
  if (endpoints_.find(subscription) == endpoints_.end()) return false;
  if (relay_) relay_(subscription, data);
  return publish_here(subscription, std::move(data));
}

bool SubscriptionHub::publish_here(std::string_view subscription, json::value data) {
  if (endpoints_.find(subscription) == endpoints_.end()) return false;
  const auto item = make_item(std::move(data));
  Pushes pushes;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, sub] : subscriptions_) {
      if (sub.endpoint != subscription || sub.ended) continue;
      deliver_locked(id, sub, Event{item, {}, std::nullopt}, pushes);
    }
  }
  send_all(pushes);
  return true;
}

std::size_t SubscriptionHub::subscriber_count() const {
  std::lock_guard lock(mu_);
  return subscriptions_.size();
}

std::size_t SubscriptionHub::producer_count() const {
  std::lock_guard lock(mu_);
  return producers_.size();
}

}  // namespace hearth::host
