#include "rpc/dispatcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdlib>
#include <new>

#include "rpc/params.hpp"

// Every allocation of this test program is counted, so that a test can tell how many a
// request's way through the dispatcher makes.
namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t /*size*/) noexcept {
  std::free(p);
}

namespace hearth::rpc {
namespace {
namespace asio = boost::asio;

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() : release_timer_(ioc_) {
    release_timer_.expires_at(asio::steady_timer::time_point::max());
    dispatcher_.add("echo", [](const Request& r) -> asio::awaitable<Result<json::value>> {
      co_return r.params;
    });
    dispatcher_.add("fail", [](const Request&) -> asio::awaitable<Result<json::value>> {
      co_return Error::make(ErrorCode::kHandlerError, "it failed", json::object{{"exitCode", 3}});
    });
    dispatcher_.add("count", [this](const Request&) -> asio::awaitable<Result<json::value>> {
      ++calls_;
      co_return calls_;
    });
    dispatcher_.add("throws", [](const Request&) -> asio::awaitable<Result<json::value>> {
      throw std::runtime_error("boom");
      co_return nullptr;
    });
    // "wait" completes only after "release" ran: a batch holding both finishes only if its
    // members run concurrently.
    dispatcher_.add("wait", [this](const Request&) -> asio::awaitable<Result<json::value>> {
      boost::system::error_code ec;
      co_await release_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      co_return "released";
    });
    dispatcher_.add("release", [this](const Request&) -> asio::awaitable<Result<json::value>> {
      release_timer_.cancel();
      co_return "done";
    });
    // A large result, with the allocations its making took.
    dispatcher_.add("large", [this](const Request&) -> asio::awaitable<Result<json::value>> {
      const std::size_t before = g_allocations.load();
      json::array items;
      for (int i = 0; i < 500; ++i) {
        items.push_back(json::object{{"description", "a string too long to be kept inline"}});
      }
      json::value result(std::move(items));
      made_ = g_allocations.load() - before;
      co_return result;
    });
    // The size of the input it takes out of its params.
    dispatcher_.add("take", [](const Request& r) -> asio::awaitable<Result<json::value>> {
      const json::value input = take_param(r, "input");
      co_return input.is_array() ? static_cast<std::int64_t>(input.get_array().size()) : -1;
    });
    // A result kept as text where the transport allows it, else as a value.
    dispatcher_.add("kept", [](const Request& r) -> asio::awaitable<Result<json::value>> {
      static const auto text = std::make_shared<const std::string>(R"({"name":"kept","n":[1,2]})");
      if (r.raw_result != nullptr) {
        *r.raw_result = text;
        co_return nullptr;
      }
      co_return json::parse(*text);
    });
  }

  /// Sends `text` and returns the response text ("<none>" when nothing is sent back).
  std::string send(std::string_view text) {
    std::optional<std::string> out;
    bool finished = false;
    auto session = std::make_shared<Session>("test", nullptr);
    asio::co_spawn(
        ioc_,
        [&]() -> asio::awaitable<void> {
          out = co_await dispatcher_.handle(text, session);
          finished = true;
        },
        asio::detached);
    ioc_.restart();
    ioc_.run_for(std::chrono::seconds(5));
    EXPECT_TRUE(finished) << "dispatcher did not answer: " << text;
    return out ? *out : "<none>";
  }

  json::value send_json(std::string_view text) {
    auto r = send(text);
    if (r == "<none>") return "<none>";
    return json::parse(r);
  }

  asio::io_context ioc_;
  asio::steady_timer release_timer_;
  Dispatcher dispatcher_;
  int calls_ = 0;
  std::size_t made_ = 0;  ///< allocations "large" made its result with
};

int code_of(const json::value& response) {
  return static_cast<int>(response.at("error").at("code").as_int64());
}

TEST_F(DispatcherTest, ParseErrorHasNullId) {
  auto r = send_json(R"({"jsonrpc":"2.0","method":"echo","params":[1,2)");
  EXPECT_EQ(code_of(r), -32700);
  EXPECT_TRUE(r.at("id").is_null());
}

TEST_F(DispatcherTest, ResultEchoesStringNumberAndNullIds) {
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":"a-1","method":"echo","params":{"x":1}})"),
            R"({"jsonrpc":"2.0","id":"a-1","result":{"x":1}})");
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":7,"method":"echo","params":[1]})"),
            R"({"jsonrpc":"2.0","id":7,"result":[1]})");
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":null,"method":"echo"})"),
            R"({"jsonrpc":"2.0","id":null,"result":null})");
}

TEST_F(DispatcherTest, AResultIsNotCopiedOnItsWayOut) {
  // A copy of the result would make as many allocations again as making it did (1,500 here:
  // each object, its key and its string); the rest of a request's way is a few dozen.
  const std::size_t before = g_allocations.load();
  const std::string text = send(R"({"jsonrpc":"2.0","id":1,"method":"large"})");
  const std::size_t all = g_allocations.load() - before;
  ASSERT_GE(made_, 1000U);
  EXPECT_LT(all - made_, made_ / 4) << "made " << made_ << ", all " << all;
  EXPECT_EQ(json::parse(text).at("result").as_array().size(), 500U);
}

TEST_F(DispatcherTest, ParamsAreNotCopiedOnTheirWayIn) {
  std::string items;
  for (int i = 0; i < 500; ++i) {
    items += std::string(i == 0 ? "" : ",") + R"({"description":"a string too long to be inline"})";
  }
  const std::string text =
      R"({"jsonrpc":"2.0","id":1,"method":"take","params":{"input":[)" + items + "]}}";
  std::size_t before = g_allocations.load();
  ASSERT_TRUE(json::parse_text(text).ok());
  const std::size_t parsing = g_allocations.load() - before;
  before = g_allocations.load();
  EXPECT_EQ(send(text), R"({"jsonrpc":"2.0","id":1,"result":500})");
  const std::size_t all = g_allocations.load() - before;
  // Parsing makes each object, its key and its string (1,500 allocations); a copy of the params
  // on the way to the method would make as many again.
  ASSERT_GE(parsing, 1000U);
  EXPECT_LT(all, parsing + parsing / 4) << "parsing " << parsing << ", all " << all;
  // The member taken is gone from the params; a member absent, or params not an object, is null.
  Request request;
  request.params = json::object{{"input", json::array{1, 2}}, {"other", 3}};
  EXPECT_EQ(take_param(request, "input"), (json::array{1, 2}));
  EXPECT_TRUE(request.params.at("input").is_null());
  EXPECT_EQ(request.params.at("other"), 3);
  EXPECT_TRUE(take_param(request, "absent").is_null());
  request.params = json::array{1};
  EXPECT_TRUE(take_param(request, "input").is_null());
}

TEST_F(DispatcherTest, AResultKeptAsTextIsWrittenAsIs) {
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":7,"method":"kept"})"),
            R"({"jsonrpc":"2.0","id":7,"result":{"name":"kept","n":[1,2]}})");
  // The id as written, and in a batch.
  EXPECT_EQ(
      send(
          R"([{"jsonrpc":"2.0","id":1.50,"method":"kept"},{"jsonrpc":"2.0","id":2,"method":"echo","params":[3]}])"),
      R"([{"jsonrpc":"2.0","id":1.50,"result":{"name":"kept","n":[1,2]}},{"jsonrpc":"2.0","id":2,"result":[3]}])");
  // A caller that wants values gets the value.
  std::optional<json::value> value;
  asio::co_spawn(
      ioc_,
      [&]() -> asio::awaitable<void> {
        value = co_await dispatcher_.handle_value(
            json::parse(R"({"jsonrpc":"2.0","id":3,"method":"kept"})"),
            std::make_shared<Session>("test", nullptr));
      },
      asio::detached);
  ioc_.restart();
  ioc_.run_for(std::chrono::seconds(5));
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->at("result"), json::parse(R"({"name":"kept","n":[1,2]})"));
  // In envelope mode the method is not offered the text: the envelope wraps the value.
  auto enveloped = send_json(R"({"jsonrpc":"2.0","id":4,"method":"kept","params":{"_lafs":true}})");
  EXPECT_EQ(enveloped.at("result").at("result"), json::parse(R"({"name":"kept","n":[1,2]})"));
}

TEST_F(DispatcherTest, NotificationGetsNoResponseButRuns) {
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","method":"count"})"), "<none>");
  EXPECT_EQ(calls_, 1);
  // Even a failing or unknown notification is silent.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","method":"fail"})"), "<none>");
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","method":"nope"})"), "<none>");
}

TEST_F(DispatcherTest, MethodNotFoundNamesTheMethod) {
  auto r = send_json(R"({"jsonrpc":"2.0","id":1,"method":"nope"})");
  EXPECT_EQ(code_of(r), -32601);
  EXPECT_EQ(r.at("error").at("data").at("method"), "nope");
  EXPECT_EQ(r.at("id"), 1);
}

TEST_F(DispatcherTest, InvalidRequests) {
  // Not an object.
  EXPECT_EQ(code_of(send_json("1")), -32600);
  EXPECT_EQ(code_of(send_json(R"("x")")), -32600);
  // Wrong or missing version; the id is echoed when it is valid.
  auto r = send_json(R"({"jsonrpc":"1.0","id":4,"method":"echo"})");
  EXPECT_EQ(code_of(r), -32600);
  EXPECT_EQ(r.at("id"), 4);
  EXPECT_EQ(code_of(send_json(R"({"id":4,"method":"echo"})")), -32600);
  // Method not a string.
  EXPECT_EQ(code_of(send_json(R"({"jsonrpc":"2.0","id":1,"method":1})")), -32600);
  // Bad id type: the id cannot be echoed.
  r = send_json(R"({"jsonrpc":"2.0","id":{"a":1},"method":"echo"})");
  EXPECT_EQ(code_of(r), -32600);
  EXPECT_TRUE(r.at("id").is_null());
  // params must be structured.
  r = send_json(R"({"jsonrpc":"2.0","id":2,"method":"echo","params":"x"})");
  EXPECT_EQ(code_of(r), -32600);
  EXPECT_EQ(r.at("error").at("data").at("field"), "params");
}

TEST_F(DispatcherTest, ErrorsCarryData) {
  auto r = send_json(R"({"jsonrpc":"2.0","id":1,"method":"fail"})");
  EXPECT_EQ(code_of(r), -32003);
  EXPECT_EQ(r.at("error").at("message"), "it failed");
  EXPECT_EQ(r.at("error").at("data").at("exitCode"), 3);
}

TEST_F(DispatcherTest, ExceptionInMethodIsInternalError) {
  auto r = send_json(R"({"jsonrpc":"2.0","id":1,"method":"throws"})");
  EXPECT_EQ(code_of(r), -32603);
}

TEST_F(DispatcherTest, EmptyBatchIsOneInvalidRequest) {
  auto r = send_json("[]");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code_of(r), -32600);
}

TEST_F(DispatcherTest, BatchOfInvalidItemsAnswersEach) {
  auto r = send_json("[1,2,3]");
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.as_array().size(), 3u);
  for (auto& item : r.as_array()) EXPECT_EQ(code_of(item), -32600);
}

TEST_F(DispatcherTest, MixedBatchKeepsOrderAndSkipsNotifications) {
  auto r = send_json(R"([
    {"jsonrpc":"2.0","id":"1","method":"echo","params":[1]},
    {"jsonrpc":"2.0","method":"count"},
    {"jsonrpc":"2.0","id":"2","method":"nope"},
    {"foo":"boo"},
    {"jsonrpc":"2.0","id":"3","method":"fail"}
  ])");
  ASSERT_TRUE(r.is_array());
  auto& a = r.as_array();
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].at("id"), "1");
  EXPECT_EQ(a[0].at("result"), json::array{1});
  EXPECT_EQ(code_of(a[1]), -32601);
  EXPECT_EQ(code_of(a[2]), -32600);
  EXPECT_EQ(code_of(a[3]), -32003);
  EXPECT_EQ(calls_, 1);
}

TEST_F(DispatcherTest, BatchOfNotificationsOnlyGetsNoResponse) {
  EXPECT_EQ(send(R"([{"jsonrpc":"2.0","method":"count"},{"jsonrpc":"2.0","method":"count"}])"),
            "<none>");
  EXPECT_EQ(calls_, 2);
}

TEST_F(DispatcherTest, BatchMembersRunConcurrently) {
  auto r = send_json(R"([
    {"jsonrpc":"2.0","id":1,"method":"wait"},
    {"jsonrpc":"2.0","id":2,"method":"release"}
  ])");
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.as_array().size(), 2u);
  EXPECT_EQ(r.as_array()[0].at("result"), "released");
  EXPECT_EQ(r.as_array()[1].at("result"), "done");
}

TEST_F(DispatcherTest, OversizedBatchIsRefused) {
  std::string batch = "[";
  for (int i = 0; i < 101; ++i) {
    if (i) batch += ",";
    batch += R"({"jsonrpc":"2.0","id":1,"method":"echo"})";
  }
  batch += "]";
  auto r = send_json(batch);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code_of(r), -32600);
}

TEST(SessionTest, CloseRunsHooksOnceAndDropsPushes) {
  int pushed = 0;
  int closed = 0;
  auto session = std::make_shared<Session>("ws", [&](const std::string&) { ++pushed; });
  session->on_close([&] { ++closed; });
  session->push("a");
  session->close();
  session->close();
  session->push("b");
  EXPECT_EQ(pushed, 1);
  EXPECT_EQ(closed, 1);
  session->on_close([&] { ++closed; });  // registered after close: runs at once
  EXPECT_EQ(closed, 2);
}

}  // namespace
// Ids come back exactly as written: numbers beyond a double, beyond 64 bits, or in a form that
// serialising a double would change.
TEST_F(DispatcherTest, EchoesNumericIdsExactlyAsWritten) {
  for (std::string id : {"123456789012345678901234567890", "1e400", "-1e400", "1.0", "2.50", "1E2",
                         "-0", "0.1", "12345678901234567"}) {
    const std::string reply =
        send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"echo","params":{"a":1}})");
    EXPECT_EQ(reply, R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"a":1}})") << id;
  }
  // In an error response too, and in every member of a batch.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":1e400,"method":"nope"})")
                .rfind(R"({"jsonrpc":"2.0","id":1e400,"error":)", 0),
            0u);
  const std::string batch = send(
      R"([{"jsonrpc":"2.0","id":1.50,"method":"echo","params":[]},{"jsonrpc":"2.0","id":7,"method":"echo","params":[]}])");
  EXPECT_EQ(batch,
            R"([{"jsonrpc":"2.0","id":1.50,"result":[]},{"jsonrpc":"2.0","id":7,"result":[]}])");
}

TEST_F(DispatcherTest, RefusesOutOfRangeNumbersInParamsWithInvalidParams) {
  for (std::string number : {"1e400", "-1e999", "123456789012345678901234567890"}) {
    auto r =
        send_json(R"({"jsonrpc":"2.0","id":5,"method":"echo","params":{"x":[)" + number + "]}}");
    EXPECT_EQ(code_of(r), -32602) << number;
    EXPECT_EQ(r.at("id"), 5);
    EXPECT_EQ(r.at("error").at("data").at("number"), json::value(number));
    // Never "Infinity" anywhere in the answer.
    EXPECT_EQ(json::dump(r).find("Infinity"), std::string::npos);
  }
  // A notification gets nothing back, and the method does not run with a changed number.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","method":"count","params":{"x":1e400}})"), "<none>");
  EXPECT_EQ(calls_, 0);
  // Elsewhere in the request: an invalid request.
  EXPECT_EQ(code_of(send_json(R"({"jsonrpc":"2.0","id":1,"method":"echo","extra":1e400})")),
            -32600);
  // Only the batch member that holds it fails.
  auto batch = send_json(
      R"([{"jsonrpc":"2.0","id":1,"method":"echo","params":[1e400]},{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}])");
  ASSERT_TRUE(batch.is_array());
  EXPECT_EQ(code_of(batch.as_array()[0]), -32602);
  EXPECT_EQ(batch.as_array()[1].at("result").as_array()[0], 2);
}

}  // namespace hearth::rpc
