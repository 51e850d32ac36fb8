#include "methods/lavs/subscriber.hpp"

#include "rpc/dispatcher.hpp"

namespace hearth::methods::lavs {

namespace {

class SessionSubscriber final : public host::Subscriber {
 public:
  explicit SessionSubscriber(const std::shared_ptr<rpc::Session>& session)
      : session_(session), id_(session->id()) {}

  std::uint64_t id() const override { return id_; }

  void item(const std::string& subscription_id, const host::SubscriptionItem& item) override {
    if (auto session = session_.lock()) {
      session->push(data_notification(subscription_id, item.text));
    }
  }

  void ended(const std::string& subscription_id, std::string_view reason,
             const std::optional<Error>& error) override {
    if (auto session = session_.lock()) {
      session->push(ended_notification(subscription_id, reason, error));
    }
  }

  void on_close(std::function<void()> hook) override {
    if (auto session = session_.lock()) {
      session->on_close(std::move(hook));
    } else {
      hook();  // gone: closed already
    }
  }

 private:
  std::weak_ptr<rpc::Session> session_;
  std::uint64_t id_;
};

}  // namespace

std::shared_ptr<host::Subscriber> session_subscriber(const std::shared_ptr<rpc::Session>& session) {
  return std::make_shared<SessionSubscriber>(session);
}

std::string data_notification(const std::string& subscription_id, std::string_view data_text) {
  constexpr std::string_view kHead = R"({"jsonrpc":"2.0","method":"lavs/data","params":{)"
                                     R"("subscriptionId":)";
  const std::string id = json::dump(json::value(json::string(subscription_id)));
  std::string out;
  out.reserve(kHead.size() + id.size() + data_text.size() + 12);
  out.append(kHead).append(id).append(R"(,"data":)").append(data_text).append("}}");
  return out;
}

std::string ended_notification(const std::string& subscription_id, std::string_view reason,
                               const std::optional<Error>& error) {
  json::object params;
  params["subscriptionId"] = subscription_id;
  params["reason"] = reason;
  if (error) params["error"] = to_json(*error);
  return json::dump(rpc::make_notification("lavs/subscriptionEnded", std::move(params)));
}

}  // namespace hearth::methods::lavs
