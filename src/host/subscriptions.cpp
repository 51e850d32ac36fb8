#include "host/subscriptions.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <vector>

#include "common/random.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::host {

std::string make_subscription_id() {
  return "sub-" + random_hex(8);
}

namespace {

/// A `lavs/data` notification for a subscriber, from its data already serialised (`data_text`):
/// a push to many subscribers serialises the data once and splices each id in.
std::string data_message_text(const std::string& subscription_id, std::string_view data_text) {
  constexpr std::string_view kHead = R"({"jsonrpc":"2.0","method":"lavs/data","params":{)"
                                     R"("subscriptionId":)";
  const std::string id = json::dump(json::value(json::string(subscription_id)));
  std::string out;
  out.reserve(kHead.size() + id.size() + data_text.size() + 12);
  out.append(kHead).append(id).append(R"(,"data":)").append(data_text).append("}}");
  return out;
}

std::string data_message(const std::string& subscription_id, const json::value& data) {
  return data_message_text(subscription_id, json::dump(data));
}

std::string ended_message(const std::string& subscription_id, std::string_view reason,
                          const std::optional<Error>& error = std::nullopt) {
  json::object params;
  params["subscriptionId"] = subscription_id;
  params["reason"] = reason;
  if (error) params["error"] = to_json(*error);
  return json::dump(rpc::make_notification("lavs/subscriptionEnded", std::move(params)));
}

}  // namespace

SubscriptionHub::~SubscriptionHub() {
  close_all();
}

namespace {
using Pushes = std::vector<std::pair<std::shared_ptr<rpc::Session>, std::string>>;

void send_all(Pushes& pushes) {
  for (auto& [session, message] : pushes) session->push(std::move(message));
}

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
}  // namespace

Result<std::string> SubscriptionHub::subscribe(const std::shared_ptr<rpc::Session>& session,
                                               const std::string& endpoint,
                                               const json::value& input, const OpenFn& open,
                                               bool shared) {
  std::string id = make_subscription_id();
  std::string key = endpoint + "\n" + json::canonical(input);
  if (!shared) key += "\n" + id;  // a producer of its own
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
    const std::uint64_t sid = session->id();
    if (auto own = ids_by_session_.find(sid);
        own != ids_by_session_.end() && own->second.size() >= limits_.subscriptions_per_session) {
      return limit_error("subscriptions", limits_.subscriptions_per_session);
    }
    Subscriber sub;
    sub.session = session;
    sub.session_id = sid;
    sub.endpoint = endpoint;
    sub.key = key;
    auto it = producers_.find(key);
    if (it == producers_.end()) {
      if (producers_by_session_[sid] >= limits_.producers_per_session) {
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
      it =
          producers_.emplace(key, Producer{std::move(stream).value(), {}, sid, std::nullopt}).first;
      ++producers_by_session_[sid];
    } else if (it->second.latest) {
      // Joining a running producer: its current state first.
      sub.held.push_back(data_message(id, *it->second.latest));
    }
    it->second.subscribers.insert(id);
    subscribers_.emplace(id, std::move(sub));
    ids_by_session_[sid].insert(id);
    hook_needed = hooked_sessions_.insert(sid).second;
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

void SubscriptionHub::activate(const std::string& subscription_id) {
  std::vector<std::string> held;
  std::shared_ptr<rpc::Session> session;
  {
    std::lock_guard lock(mu_);
    auto it = subscribers_.find(subscription_id);
    if (it == subscribers_.end() || it->second.active) return;
    it->second.active = true;
    held = std::move(it->second.held);
    it->second.held.clear();
    session = it->second.session.lock();
    if (it->second.ended) {
      forget_id_locked(it->second.session_id, it->first);
      subscribers_.erase(it);
    }
  }
  // On the session's strand a push is written at once, before any item another thread pushes
  // after the flag was set: the order holds.
  if (session) {
    for (auto& message : held) session->push(std::move(message));
  }
}

void SubscriptionHub::deliver_locked(Subscriber& sub, std::string message, Pushes& out) {
  if (!sub.active) {
    sub.held.push_back(std::move(message));
    return;
  }
  if (auto session = sub.session.lock()) out.emplace_back(std::move(session), std::move(message));
}

void SubscriptionHub::forget_id_locked(std::uint64_t session_id, const std::string& id) {
  auto own = ids_by_session_.find(session_id);
  if (own == ids_by_session_.end()) return;
  own->second.erase(id);
  if (own->second.empty()) ids_by_session_.erase(own);
}

void SubscriptionHub::forget_producer_locked(std::map<std::string, Producer>::iterator it) {
  auto owner = producers_by_session_.find(it->second.owner);
  if (owner != producers_by_session_.end() && owner->second > 0) {
    if (--owner->second == 0) producers_by_session_.erase(owner);
  }
  producers_.erase(it);
}

std::shared_ptr<handlers::Stream> SubscriptionHub::remove_locked(
    const std::string& subscription_id) {
  auto it = subscribers_.find(subscription_id);
  if (it == subscribers_.end()) return nullptr;
  std::string key = it->second.key;
  forget_id_locked(it->second.session_id, subscription_id);
  subscribers_.erase(it);
  auto p = producers_.find(key);
  if (p == producers_.end()) return nullptr;
  p->second.subscribers.erase(subscription_id);
  if (!p->second.subscribers.empty()) return nullptr;
  auto stream = std::move(p->second.stream);
  forget_producer_locked(p);
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
    // The session's own ids, not a walk over every subscriber: 10,000 subscribers leaving at
    // once would otherwise cost 10,000 walks of 10,000.
    std::vector<std::string> ids;
    if (auto own = ids_by_session_.find(session_id); own != ids_by_session_.end()) {
      ids.assign(own->second.begin(), own->second.end());
    }
    for (const auto& id : ids) {
      if (auto s = remove_locked(id)) to_close.push_back(std::move(s));
    }
    ids_by_session_.erase(session_id);
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
    producers_by_session_.clear();
    ids_by_session_.clear();
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
    for (auto& [id, sub] : subscribers_) {
      if (sub.ended) continue;  // already told (held until activate)
      deliver_locked(sub, ended_message(id, reason(sub.endpoint)), pushes);
      sub.ended = true;
    }
    // Held subscribers stay until activate() hands them what they were told.
    std::erase_if(subscribers_, [](const auto& entry) { return entry.second.active; });
    for (auto& [key, producer] : producers_) to_close.push_back(std::move(producer.stream));
    producers_.clear();
    producers_by_session_.clear();
    ids_by_session_.clear();
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
    p->second.latest = data;
    const std::string text = json::dump(data);
    for (const auto& id : p->second.subscribers) {
      auto s = subscribers_.find(id);
      if (s != subscribers_.end()) deliver_locked(s->second, data_message_text(id, text), pushes);
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
    for (const auto& id : p->second.subscribers) {
      auto s = subscribers_.find(id);
      if (s == subscribers_.end()) continue;
      deliver_locked(s->second, ended_message(id, error ? "error" : "completed", error), pushes);
      if (s->second.active) {
        forget_id_locked(s->second.session_id, id);
        subscribers_.erase(s);
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
  const std::string text = json::dump(data);
  Pushes pushes;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, sub] : subscribers_) {
      if (sub.endpoint != subscription || sub.ended) continue;
      deliver_locked(sub, data_message_text(id, text), pushes);
    }
  }
  send_all(pushes);
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
