#include "host/subscriptions.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <vector>

#include "common/random.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::host {

std::string make_subscription_id() { return "sub-" + random_hex(8); }

namespace {

std::string data_message(const std::string& subscription_id, const json::value& data) {
  json::object params;
  params["subscriptionId"] = subscription_id;
  params["data"] = data;
  return json::dump(rpc::make_notification("lavs/data", std::move(params)));
}

std::string ended_message(const std::string& subscription_id, const std::optional<Error>& error) {
  json::object params;
  params["subscriptionId"] = subscription_id;
  params["reason"] = error ? "error" : "completed";
  if (error) params["error"] = to_json(*error);
  return json::dump(rpc::make_notification("lavs/subscriptionEnded", std::move(params)));
}

}  // namespace

SubscriptionHub::~SubscriptionHub() { close_all(); }

Result<std::string> SubscriptionHub::subscribe(const std::shared_ptr<rpc::Session>& session,
                                               const std::string& endpoint,
                                               const json::value& input, OpenFn open) {
  std::string key = endpoint + "\n" + json::canonical(input);
  std::string id = make_subscription_id();
  bool hook_needed = false;
  {
    std::lock_guard lock(mu_);
    auto it = producers_.find(key);
    if (it == producers_.end()) {
      // Callbacks hold a weak reference: a producer outliving the hub must not touch it.
      std::weak_ptr<SubscriptionHub> weak = weak_from_this();
      handlers::StreamSink sink;
      sink.on_data = [weak, key](json::value data) {
        if (auto self = weak.lock()) self->on_data(key, data);
      };
      sink.on_end = [weak, key](std::optional<Error> error) {
        if (auto self = weak.lock()) self->on_end(key, error);
      };
      // Started under the lock so that two first subscribers cannot start two producers. The
      // stream's callbacks run asynchronously, never from within open().
      auto stream = open(std::move(sink));
      if (!stream.ok()) return std::move(stream).error();
      it = producers_.emplace(key, Producer{std::move(stream).value(), {}}).first;
    }
    it->second.subscribers.insert(id);
    subscribers_[id] = Subscriber{session, session->id(), endpoint, key};
    hook_needed = hooked_sessions_.insert(session->id()).second;
  }
  if (hook_needed) {
    // Dropped with the connection; the hook holds a weak reference so the hub may go first.
    std::weak_ptr<SubscriptionHub> weak = weak_from_this();
    session->on_close([weak, sid = session->id()] {
      if (auto self = weak.lock()) self->drop_session(sid);
    });
  }
  return id;
}

std::shared_ptr<handlers::Stream> SubscriptionHub::remove_locked(const std::string& subscription_id) {
  auto it = subscribers_.find(subscription_id);
  if (it == subscribers_.end()) return nullptr;
  std::string key = it->second.key;
  subscribers_.erase(it);
  auto p = producers_.find(key);
  if (p == producers_.end()) return nullptr;
  p->second.subscribers.erase(subscription_id);
  if (!p->second.subscribers.empty()) return nullptr;
  auto stream = std::move(p->second.stream);
  producers_.erase(p);
  return stream;
}

bool SubscriptionHub::unsubscribe(std::uint64_t session_id, const std::string& subscription_id) {
  std::shared_ptr<handlers::Stream> to_close;
  {
    std::lock_guard lock(mu_);
    auto it = subscribers_.find(subscription_id);
    if (it == subscribers_.end() || it->second.session_id != session_id) return false;
    to_close = remove_locked(subscription_id);
  }
  if (to_close) to_close->close();
  return true;
}

void SubscriptionHub::drop_session(std::uint64_t session_id) {
  std::vector<std::shared_ptr<handlers::Stream>> to_close;
  {
    std::lock_guard lock(mu_);
    hooked_sessions_.erase(session_id);
    std::vector<std::string> ids;
    for (const auto& [id, sub] : subscribers_) {
      if (sub.session_id == session_id) ids.push_back(id);
    }
    for (const auto& id : ids) {
      if (auto s = remove_locked(id)) to_close.push_back(std::move(s));
    }
  }
  for (auto& s : to_close) s->close();
}

void SubscriptionHub::close_all() {
  std::vector<std::shared_ptr<handlers::Stream>> to_close;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, producer] : producers_) to_close.push_back(std::move(producer.stream));
    producers_.clear();
    subscribers_.clear();
  }
  for (auto& s : to_close) {
    if (s) s->close();
  }
}

std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> SubscriptionHub::targets_locked(
    const std::string& key, bool remove) {
  std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> targets;
  auto p = producers_.find(key);
  if (p == producers_.end()) return targets;
  for (const auto& id : p->second.subscribers) {
    auto s = subscribers_.find(id);
    if (s == subscribers_.end()) continue;
    if (auto session = s->second.session.lock()) targets.emplace_back(id, std::move(session));
    if (remove) subscribers_.erase(s);
  }
  if (remove) producers_.erase(p);
  return targets;
}

void SubscriptionHub::on_data(const std::string& key, const json::value& data) {
  std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> targets;
  {
    std::lock_guard lock(mu_);
    targets = targets_locked(key, false);
  }
  for (auto& [id, session] : targets) session->push(data_message(id, data));
}

void SubscriptionHub::on_end(const std::string& key, const std::optional<Error>& error) {
  std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> targets;
  {
    std::lock_guard lock(mu_);
    targets = targets_locked(key, true);
  }
  if (error) {
    spdlog::warn("{}: subscription producer ended: {}", service_, error->message);
  }
  for (auto& [id, session] : targets) session->push(ended_message(id, error));
}

bool SubscriptionHub::publish(std::string_view subscription, json::value data) {
  if (endpoints_.find(subscription) == endpoints_.end()) return false;
  std::vector<std::pair<std::string, std::shared_ptr<rpc::Session>>> targets;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, sub] : subscribers_) {
      if (sub.endpoint != subscription) continue;
      if (auto session = sub.session.lock()) targets.emplace_back(id, std::move(session));
    }
  }
  for (auto& [id, session] : targets) session->push(data_message(id, data));
  return true;
}

std::size_t SubscriptionHub::subscriber_count() const {
  std::lock_guard lock(mu_);
  return subscribers_.size();
}

std::size_t SubscriptionHub::producer_count() const {
  std::lock_guard lock(mu_);
  return producers_.size();
}

}  // namespace hearth::host
