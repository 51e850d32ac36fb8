#pragma once
// Test helpers for the method groups: a dispatcher driven on a test-owned io_context, and
// sessions that record what the server pushes to them.

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "json/json.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"

namespace hearth::methods::testing {

/// What a push-capable session received, in order.
struct Pushes {
  std::mutex mu;
  std::vector<json::value> messages;
  std::size_t size() {
    std::lock_guard lock(mu);
    return messages.size();
  }
  json::value at(std::size_t i) {
    std::lock_guard lock(mu);
    return messages.at(i);
  }
  /// The messages whose method is `method`.
  std::vector<json::value> with_method(std::string_view method) {
    std::lock_guard lock(mu);
    std::vector<json::value> out;
    for (const auto& m : messages) {
      const auto* name = m.as_object().if_contains("method");
      if (name != nullptr && name->is_string() && name->get_string() == method) out.push_back(m);
    }
    return out;
  }
};

/// A WebSocket-like session whose pushes land in `pushes`.
inline std::shared_ptr<rpc::Session> push_session(const std::shared_ptr<Pushes>& pushes) {
  return std::make_shared<rpc::Session>("ws", [pushes](const std::string& m) {
    std::lock_guard lock(pushes->mu);
    pushes->messages.push_back(json::parse(m));
  });
}

/// A dispatcher and the io_context its methods run on, driven by the test thread.
class Harness {
 public:
  /// Sends one request on `session` (an HTTP-like one when null) and runs the loop until it is
  /// answered.
  json::value rpc(const std::string& method, json::value params,
                  std::shared_ptr<rpc::Session> session = nullptr) {
    auto pending = start(method, std::move(params), std::move(session));
    EXPECT_TRUE(run_until([&] { return pending->has_value(); }, std::chrono::seconds(20)))
        << method;
    return pending->value_or(json::value());
  }

  /// Sends one request and returns at once; the answer appears in the result once the loop has
  /// run far enough (run_until).
  std::shared_ptr<std::optional<json::value>> start(
      const std::string& method, json::value params,
      std::shared_ptr<rpc::Session> session = nullptr) {
    if (!session) session = std::make_shared<rpc::Session>("http", nullptr);
    auto answer = std::make_shared<std::optional<json::value>>();
    auto request = std::make_shared<json::value>(json::object{
        {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}});
    boost::asio::co_spawn(
        ioc_,
        [this, answer, request, session]() -> boost::asio::awaitable<void> {
          *answer = co_await dispatcher_.handle_value(*request, session);
        },
        boost::asio::detached);
    return answer;
  }

  /// Runs the loop until `pred` holds or `limit` passes.
  template <class Pred>
  bool run_until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    ioc_.restart();
    while (!pred() && std::chrono::steady_clock::now() < deadline) {
      ioc_.run_one_for(std::chrono::milliseconds(50));
    }
    return pred();
  }

  static int code(const json::value& r) {
    return static_cast<int>(r.at("error").at("code").as_int64());
  }

  boost::asio::io_context& ioc() { return ioc_; }
  rpc::Dispatcher& dispatcher() { return dispatcher_; }

 private:
  boost::asio::io_context ioc_;
  rpc::Dispatcher dispatcher_;
};

}  // namespace hearth::methods::testing
