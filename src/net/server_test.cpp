#include "net/server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/fan_out.hpp"
#include "common/fd.hpp"
#include "json/json.hpp"
#include "net/event_stream.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"

namespace hearth::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using HttpRequest = http::request<http::string_body>;
using HttpResponse = http::response<http::string_body>;
using namespace std::chrono_literals;

constexpr std::string_view kToken = "s3cret-token_123";
constexpr std::string_view kAllowedOrigin = "http://localhost:3000";
/// Any single client operation that takes longer than this fails the test instead of hanging it.
constexpr auto kClientTimeout = 10s;

// ---------------------------------------------------------------------------------------------
// Test clients: blocking from the test's point of view, asynchronous underneath so that every
// operation has a deadline.

/// Runs one asynchronous operation on `ioc` to completion, at most kClientTimeout; `cancel`
/// unblocks it when the deadline passes.
template <class Initiate, class Cancel>
beast::error_code run_op(asio::io_context& ioc, Initiate&& initiate, Cancel&& cancel) {
  std::optional<beast::error_code> result;
  initiate([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run_for(kClientTimeout);
  if (!result) {
    ADD_FAILURE() << "client operation timed out";
    cancel();
    ioc.restart();
    ioc.run();
    return asio::error::timed_out;
  }
  return *result;
}

struct HttpReply {
  beast::error_code ec;
  HttpResponse res;
};

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port) {
    auto ec = run_op(
        ioc_,
        [&](auto handler) {
          stream_.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                                std::move(handler));
        },
        [&] { stream_.close(); });
    EXPECT_FALSE(ec) << "connect: " << ec.message();
  }

  beast::error_code write(const HttpRequest& req) {
    return run_op(
        ioc_, [&](auto handler) { http::async_write(stream_, req, std::move(handler)); },
        [&] { stream_.close(); });
  }

  beast::error_code write_raw(std::string_view bytes) {
    return run_op(
        ioc_,
        [&](auto handler) { asio::async_write(stream_, asio::buffer(bytes), std::move(handler)); },
        [&] { stream_.close(); });
  }

  HttpReply read() {
    HttpReply reply;
    reply.ec = run_op(
        ioc_,
        [&](auto handler) { http::async_read(stream_, buffer_, reply.res, std::move(handler)); },
        [&] { stream_.close(); });
    return reply;
  }

  beast::error_code read_with(http::response_parser<http::string_body>& parser) {
    return run_op(
        ioc_, [&](auto handler) { http::async_read(stream_, buffer_, parser, std::move(handler)); },
        [&] { stream_.close(); });
  }

  HttpReply send(const HttpRequest& req) {
    if (auto ec = write(req)) return HttpReply{ec, {}};
    return read();
  }

  /// True when the server closed the connection (reads end with EOF or a reset, not a timeout).
  bool closed_by_server() {
    std::array<char, 4096> scratch{};
    for (;;) {
      auto ec = run_op(
          ioc_,
          [&](auto handler) { stream_.async_read_some(asio::buffer(scratch), std::move(handler)); },
          [&] { stream_.close(); });
      if (ec) return ec == asio::error::eof || ec == asio::error::connection_reset;
    }
  }

 private:
  asio::io_context ioc_;
  beast::tcp_stream stream_{ioc_};
  beast::flat_buffer buffer_;
};

class WsClient {
 public:
  /// Connects and upgrades; `decorate` adds headers to the upgrade request. `response` receives
  /// the server's answer to the upgrade (101 or an error status).
  beast::error_code connect(std::uint16_t port, const std::string& target,
                            const std::function<void(websocket::request_type&)>& decorate,
                            websocket::response_type* response = nullptr) {
    auto ec = run_op(
        ioc_,
        [&](auto handler) {
          beast::get_lowest_layer(ws_).async_connect(
              tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), std::move(handler));
        },
        [&] { beast::get_lowest_layer(ws_).close(); });
    if (ec) return ec;
    ws_.set_option(websocket::stream_base::decorator(decorate));
    websocket::response_type local;
    websocket::response_type& res = response ? *response : local;
    return run_op(
        ioc_,
        [&](auto handler) {
          ws_.async_handshake(res, "127.0.0.1:" + std::to_string(port), target, std::move(handler));
        },
        [&] { beast::get_lowest_layer(ws_).close(); });
  }

  beast::error_code write(std::string_view text, bool binary = false) {
    ws_.binary(binary);
    return run_op(
        ioc_, [&](auto handler) { ws_.async_write(asio::buffer(text), std::move(handler)); },
        [&] { beast::get_lowest_layer(ws_).close(); });
  }

  /// Reads one message; the error is set when the connection ended instead.
  std::pair<beast::error_code, std::string> read() {
    beast::flat_buffer buffer;
    auto ec = run_op(
        ioc_, [&](auto handler) { ws_.async_read(buffer, std::move(handler)); },
        [&] { beast::get_lowest_layer(ws_).close(); });
    return {ec, beast::buffers_to_string(buffer.data())};
  }

  beast::error_code close() {
    return run_op(
        ioc_,
        [&](auto handler) { ws_.async_close(websocket::close_code::normal, std::move(handler)); },
        [&] { beast::get_lowest_layer(ws_).close(); });
  }

  /// Drops the TCP connection without a close frame.
  void drop() {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(ws_).close();
  }

  websocket::close_reason reason() const { return ws_.reason(); }

 private:
  asio::io_context ioc_;
  websocket::stream<beast::tcp_stream> ws_{ioc_};
};

std::string rpc_text(int id, std::string_view method, std::string_view params = "{}") {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"" +
         std::string(method) + "\",\"params\":" + std::string(params) + "}";
}

json::value parse(std::string_view text) {
  auto parsed = json::parse_text(text);
  EXPECT_TRUE(parsed.ok()) << "not JSON: " << text;
  return parsed.ok() ? std::move(parsed).value() : json::value();
}

// ---------------------------------------------------------------------------------------------
// The fixture: a real Server on port 0, run by two I/O threads, with a few test methods.

class ServerTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kIoThreads = 2;

  ServerTest() {
    dispatcher_.add("echo", [](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
      co_return r.params;
    });
    // Sleeps params.ms: many of these in flight at once show that requests run concurrently.
    dispatcher_.add("sleep", [](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
      auto ms = r.params.as_object().at("ms").to_number<std::int64_t>();
      asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
      boost::system::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      co_return json::object{{"slept", ms}};
    });
    // Pushes params.count notifications of params.size bytes through the session.
    dispatcher_.add("push", [](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
      auto count = r.params.as_object().at("count").to_number<std::int64_t>();
      std::size_t size = 0;
      if (auto* s = r.params.as_object().if_contains("size")) size = s->to_number<std::size_t>();
      for (std::int64_t i = 0; i < count; ++i) {
        r.session->push(json::dump(rpc::make_notification(
            "test/push", json::object{{"n", i}, {"pad", std::string(size, 'x')}})));
      }
      co_return json::object{{"pushed", count},
                             {"transport", r.session->transport()},
                             {"can_push", r.session->can_push()}};
    });
    // Broadcasts params.rounds notifications {"n": round} to every open WebSocket, each round
    // as one fan-out (FanOut), from the caller's strand: the caller is one of the receivers.
    dispatcher_.add("fanout",
                    [this](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
                      auto rounds = r.params.as_object().at("rounds").to_number<std::int64_t>();
                      for (std::int64_t n = 0; n < rounds; ++n) {
                        const FanOut fan_out(FanOut::kMinReceivers);
                        server_->broadcast(
                            json::dump(rpc::make_notification("test/all", json::object{{"n", n}})));
                      }
                      co_return json::object{{"rounds", rounds}};
                    });
    // Counts session closes, to see the transport run the close hook.
    dispatcher_.add("watch", [this](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
      r.session->on_close([this] {
        std::lock_guard lock(mu_);
        ++closed_sessions_;
        cv_.notify_all();
      });
      co_return true;
    });
  }

  ~ServerTest() override { stop_and_join(); }

  void start_server(const std::function<void(ServerOptions&)>& tweak = {}) {
    ServerOptions options;
    options.token = std::string(kToken);
    options.allowed_origins = {std::string(kAllowedOrigin)};
    options.log = [this](std::string_view line) {
      std::lock_guard lock(mu_);
      log_.emplace_back(line);
    };
    options.io_threads = kIoThreads;
    if (tweak) tweak(options);
    server_ = std::make_unique<Server>(ioc_, options, dispatcher_, routes_);
    auto port = server_->listen();
    ASSERT_TRUE(port.ok()) << port.error().message;
    port_ = *port;
    ASSERT_EQ(server_->port(), port_);
    server_->start();
    for (std::size_t i = 0; i < kIoThreads; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  /// stop() and wait for ioc.run() to return on every thread; true when it did in time.
  bool stop_and_join() {
    if (threads_.empty()) return true;
    if (server_) server_->stop();
    auto joined = std::async(std::launch::async, [this] {
      for (auto& t : threads_) t.join();
    });
    bool in_time = joined.wait_for(kClientTimeout) == std::future_status::ready;
    if (!in_time) {
      ADD_FAILURE() << "ioc.run() did not return after stop()";
      ioc_.stop();
      joined.wait();
    }
    threads_.clear();
    return in_time;
  }

  HttpRequest make_request(http::verb verb, const std::string& target,
                           std::string body = {}) const {
    HttpRequest req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port_));
    req.set(http::field::authorization, "Bearer " + std::string(kToken));
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    req.body() = std::move(body);
    req.prepare_payload();
    return req;
  }

  HttpRequest rpc_request(std::string body) const {
    return make_request(http::verb::post, "/rpc", std::move(body));
  }

  /// Decorator for an authorised, same-host upgrade request.
  static void ws_auth(websocket::request_type& req) {
    req.set(http::field::authorization, "Bearer " + std::string(kToken));
  }

  bool wait_closed_sessions(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kClientTimeout, [&] { return closed_sessions_ >= n; });
  }

  bool logged(std::string_view needle) {
    std::lock_guard lock(mu_);
    for (const auto& line : log_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  static void expect_standard_headers(const HttpResponse& res) {
    EXPECT_EQ(res[http::field::server], "hearth");
    EXPECT_EQ(res[http::field::cache_control], "no-store");
    EXPECT_EQ(res["X-Content-Type-Options"], "nosniff");
  }

  static void expect_error(const HttpReply& reply, http::status status, std::string_view message) {
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.res.result(), status);
    EXPECT_EQ(reply.res[http::field::content_type], "application/json");
    EXPECT_EQ(reply.res.body(), "{\"error\":\"" + std::string(message) + "\"}");
    expect_standard_headers(reply.res);
  }

  Routes routes_;
  asio::io_context ioc_;
  rpc::Dispatcher dispatcher_;
  std::unique_ptr<Server> server_;
  std::vector<std::thread> threads_;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int closed_sessions_ = 0;
  std::vector<std::string> log_;
};

// ---------------------------------------------------------------------------------------------
// HTTP

TEST_F(ServerTest, PostRpcAnswersWithJson) {
  start_server();
  HttpClient client(port_);
  auto reply = client.send(rpc_request(rpc_text(7, "echo", R"({"a":[1,2]})")));
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.res.result(), http::status::ok);
  EXPECT_EQ(reply.res[http::field::content_type], "application/json");
  expect_standard_headers(reply.res);
  EXPECT_TRUE(reply.res.find(http::field::access_control_allow_origin) == reply.res.end());
  auto body = parse(reply.res.body());
  EXPECT_EQ(body.at("id"), 7);
  EXPECT_EQ(body.at("result"), parse(R"({"a":[1,2]})"));
}

TEST_F(ServerTest, HttpSessionCannotPush) {
  start_server();
  HttpClient client(port_);
  auto reply = client.send(rpc_request(rpc_text(1, "push", R"({"count":2})")));
  ASSERT_FALSE(reply.ec);
  auto result = parse(reply.res.body()).at("result");
  EXPECT_EQ(result.at("transport"), "http");
  EXPECT_EQ(result.at("can_push"), false);
}

TEST_F(ServerTest, NotificationGets204WithoutBody) {
  start_server();
  HttpClient client(port_);
  auto reply = client.send(rpc_request(R"({"jsonrpc":"2.0","method":"echo","params":{}})"));
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.res.result(), http::status::no_content);
  EXPECT_TRUE(reply.res.body().empty());
  expect_standard_headers(reply.res);
  // The connection stays usable after a 204.
  auto next = client.send(rpc_request(rpc_text(2, "echo")));
  ASSERT_FALSE(next.ec);
  EXPECT_EQ(next.res.result(), http::status::ok);
}

TEST_F(ServerTest, ParseErrorIsAJsonRpcAnswer) {
  start_server();
  HttpClient client(port_);
  auto reply = client.send(rpc_request("{not json"));
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.res.result(), http::status::ok);
  EXPECT_EQ(parse(reply.res.body()).at("error").at("code"), -32700);
}

TEST_F(ServerTest, KeepAliveAnswersPipelinedRequestsInOrder) {
  start_server();
  HttpClient client(port_);
  // The first request is the slowest: answers must still come back in request order.
  const int ms[] = {150, 50, 0, 20, 0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_FALSE(
        client.write(rpc_request(rpc_text(i, "sleep", "{\"ms\":" + std::to_string(ms[i]) + "}"))));
  }
  for (int i = 0; i < 5; ++i) {
    auto reply = client.read();
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.res.result(), http::status::ok);
    EXPECT_EQ(parse(reply.res.body()).at("id"), i);
    EXPECT_TRUE(reply.res.keep_alive());
  }
  // Then a few more, one at a time, still on the same connection.
  for (int i = 5; i < 10; ++i) {
    auto reply = client.send(rpc_request(rpc_text(i, "echo")));
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(parse(reply.res.body()).at("id"), i);
  }
  EXPECT_EQ(server_->connection_count(), 1U);
}

TEST_F(ServerTest, ConnectionCloseIsHonoured) {
  start_server();
  HttpClient client(port_);
  auto req = rpc_request(rpc_text(1, "echo"));
  req.keep_alive(false);
  auto reply = client.send(req);
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.res.result(), http::status::ok);
  EXPECT_FALSE(reply.res.keep_alive());
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(ServerTest, OversizeBodyGets413AndClose) {
  start_server([](ServerOptions& o) { o.max_request_bytes = 1024; });
  {
    HttpClient client(port_);
    std::string params = "{\"pad\":\"" + std::string(4096, 'x') + "\"}";
    auto reply = client.send(rpc_request(rpc_text(1, "echo", params)));
    expect_error(reply, http::status::payload_too_large, "request body too large");
    EXPECT_FALSE(reply.res.keep_alive());
    EXPECT_TRUE(client.closed_by_server());
  }
  {
    // Chunked: no Content-Length to check up front, the limit applies while reading.
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo", "{\"pad\":\"" + std::string(4096, 'x') + "\"}"));
    req.chunked(true);
    auto reply = client.send(req);
    expect_error(reply, http::status::payload_too_large, "request body too large");
    EXPECT_TRUE(client.closed_by_server());
  }
  {
    // Exactly at the limit is fine.
    HttpClient client(port_);
    std::string body = rpc_text(1, "echo", "{\"pad\":\"\"}");
    body.insert(body.size() - 1, std::string(1024 - body.size(), ' '));
    ASSERT_EQ(body.size(), 1024U);
    auto reply = client.send(rpc_request(body));
    ASSERT_FALSE(reply.ec);
    EXPECT_EQ(reply.res.result(), http::status::ok);
  }
}

TEST_F(ServerTest, UnknownPathGets404AndOtherMethodsGet405) {
  start_server();
  HttpClient client(port_);
  expect_error(client.send(make_request(http::verb::get, "/nope")), http::status::not_found,
               "not found");
  auto reply = client.send(make_request(http::verb::get, "/rpc"));
  expect_error(reply, http::status::method_not_allowed, "method not allowed");
  EXPECT_EQ(reply.res[http::field::allow], "POST, OPTIONS");
  expect_error(client.send(make_request(http::verb::put, "/rpc", "{}")),
               http::status::method_not_allowed, "method not allowed");
  // HEAD gets the headers of the answer only, and the connection stays in step.
  HttpClient head_client(port_);
  ASSERT_FALSE(head_client.write(make_request(http::verb::head, "/rpc")));
  http::response_parser<http::string_body> head_parser;
  head_parser.skip(true);
  ASSERT_FALSE(head_client.read_with(head_parser));
  EXPECT_EQ(head_parser.get().result(), http::status::method_not_allowed);
  EXPECT_TRUE(head_parser.get().body().empty());
  EXPECT_EQ(head_client.send(rpc_request(rpc_text(1, "echo"))).res.result(), http::status::ok);
  // /ws without an upgrade.
  expect_error(client.send(make_request(http::verb::get, "/ws")), http::status::upgrade_required,
               "websocket upgrade required");
  // All on one keep-alive connection.
  auto ok = client.send(rpc_request(rpc_text(1, "echo")));
  ASSERT_FALSE(ok.ec);
  EXPECT_EQ(ok.res.result(), http::status::ok);
}

TEST_F(ServerTest, StreamedRouteWritesEventsAsTheyComeAndEndsWhenThePeerLeaves) {
  std::shared_ptr<EventStream> open_stream;
  std::promise<void> peer_gone;
  std::mutex mu;
  Route route;
  route.path = "/events";
  route.handler = [&](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    auto stream = std::make_shared<EventStream>(ioc_.get_executor(), std::chrono::seconds(30));
    net::HttpResponse res;
    res.content_type = "text/event-stream";
    res.stream = stream;
    if (req.query == "finite") {
      stream->send(R"({"n":1})");
      stream->send(R"({"n":2})");
      stream->end();
    } else {
      stream->on_cancel([&peer_gone] { peer_gone.set_value(); });
      std::lock_guard lock(mu);
      open_stream = stream;
    }
    co_return res;
  };
  ASSERT_TRUE(routes_.add(std::move(route)).ok());
  start_server();

  // A stream that ends: chunked events, then the connection closes.
  HttpClient client(port_);
  auto reply = client.send(make_request(http::verb::get, "/events?finite"));
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.res[http::field::content_type], "text/event-stream");
  EXPECT_TRUE(reply.res.chunked());
  EXPECT_EQ(reply.res.body(),
            "event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"n\":2}\n\n");
  EXPECT_TRUE(client.closed_by_server());

  // A HEAD request gets the head and no body, and the producer is told to end.
  {
    HttpClient head(port_);
    ASSERT_FALSE(head.write(make_request(http::verb::head, "/events")));
    http::response_parser<http::string_body> parser;
    parser.skip(true);
    ASSERT_FALSE(head.read_with(parser));
    EXPECT_EQ(parser.get().result(), http::status::ok);
    ASSERT_EQ(peer_gone.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  }
  peer_gone = std::promise<void>();

  // A stream that stays open: the peer leaving is noticed although nothing is written.
  {
    {
      std::lock_guard lock(mu);
      open_stream.reset();
    }
    HttpClient watcher(port_);
    ASSERT_FALSE(watcher.write(make_request(http::verb::get, "/events")));
    bool opened = false;
    for (int i = 0; i < 1000 && !opened; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard lock(mu);
      opened = open_stream != nullptr;
    }
    ASSERT_TRUE(opened);
  }  // the client closes its socket here
  ASSERT_EQ(peer_gone.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(ServerTest, MissingOrWrongTokenGets401) {
  start_server();
  HttpClient client(port_);
  auto req = rpc_request(rpc_text(1, "echo"));
  req.erase(http::field::authorization);
  auto reply = client.send(req);
  expect_error(reply, http::status::unauthorized, "missing or invalid token");
  EXPECT_EQ(reply.res[http::field::www_authenticate], "Bearer");

  for (const std::string& bad : std::vector<std::string>{
           "Bearer wrong", "Bearer " + std::string(kToken) + "x", "Bearer s3cret",
           "Basic " + std::string(kToken), std::string(kToken), "Bearer "}) {
    req.set(http::field::authorization, bad);
    expect_error(client.send(req), http::status::unauthorized, "missing or invalid token");
  }
  // The query token is for the WebSocket upgrade only.
  auto query =
      make_request(http::verb::post, "/rpc?token=" + std::string(kToken), rpc_text(1, "echo"));
  query.erase(http::field::authorization);
  expect_error(client.send(query), http::status::unauthorized, "missing or invalid token");
  // Scheme is case-insensitive.
  req.set(http::field::authorization, "bearer " + std::string(kToken));
  auto ok = client.send(req);
  ASSERT_FALSE(ok.ec);
  EXPECT_EQ(ok.res.result(), http::status::ok);
}

TEST_F(ServerTest, ForeignHostGets403) {
  start_server();
  const std::string port = std::to_string(port_);
  for (const std::string& host : std::vector<std::string>{
           "evil.com", "evil.com:" + port, "127.0.0.1:1", "localhost:" + port + "0",
           "127.0.0.1:", "127.0.0.2:" + port, "localhost.:" + port, "[::2]:" + port, "",
           "127.0.0.1:" + port + ":1"}) {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.set(http::field::host, host);
    expect_error(client.send(req), http::status::forbidden, "forbidden host");
  }
  {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.erase(http::field::host);
    expect_error(client.send(req), http::status::forbidden, "forbidden host");
  }
  {
    // Two Host headers: refused whatever they say.
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.insert(http::field::host, "evil.com");
    expect_error(client.send(req), http::status::forbidden, "forbidden host");
  }
  // The host check comes before the token check.
  {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.set(http::field::host, "evil.com");
    req.erase(http::field::authorization);
    expect_error(client.send(req), http::status::forbidden, "forbidden host");
  }
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1", "localhost", "LocalHost:" + port, "[::1]:" + port, "[::1]"}) {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.set(http::field::host, host);
    auto reply = client.send(req);
    ASSERT_FALSE(reply.ec);
    EXPECT_EQ(reply.res.result(), http::status::ok) << host;
  }
  EXPECT_TRUE(logged("forbidden host 'evil.com'"));
}

TEST_F(ServerTest, ForeignOriginGets403) {
  start_server();
  for (const std::string& origin : std::vector<std::string>{
           "http://evil.com", "null", "http://127.0.0.1:1",
           "https://127.0.0.1:" + std::to_string(port_), "http://localhost:3000/"}) {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.set(http::field::origin, origin);
    auto reply = client.send(req);
    expect_error(reply, http::status::forbidden, "forbidden origin");
    // A refused origin is likely a hostile page: the connection is not kept.
    EXPECT_FALSE(reply.res.keep_alive());
    EXPECT_TRUE(client.closed_by_server());
  }
  {
    HttpClient client(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.set(http::field::origin, "http://127.0.0.1:" + std::to_string(port_));
    req.insert(http::field::origin, "http://evil.com");
    expect_error(client.send(req), http::status::forbidden, "forbidden origin");
  }
  // Same origin passes, without CORS headers.
  HttpClient client(port_);
  auto req = rpc_request(rpc_text(1, "echo"));
  req.set(http::field::origin, "http://localhost:" + std::to_string(port_));
  auto reply = client.send(req);
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.res.result(), http::status::ok);
  EXPECT_TRUE(reply.res.find(http::field::access_control_allow_origin) == reply.res.end());
}

TEST_F(ServerTest, AllowedOriginAndPreflight) {
  start_server();
  HttpClient client(port_);
  // Preflight: no token needed.
  auto preflight = make_request(http::verb::options, "/rpc");
  preflight.erase(http::field::authorization);
  preflight.set(http::field::origin, kAllowedOrigin);
  preflight.set(http::field::access_control_request_method, "POST");
  preflight.set(http::field::access_control_request_headers, "authorization, content-type");
  auto reply = client.send(preflight);
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.res.result(), http::status::no_content);
  EXPECT_EQ(reply.res[http::field::access_control_allow_origin], kAllowedOrigin);
  EXPECT_EQ(reply.res[http::field::access_control_allow_methods], "POST, OPTIONS");
  EXPECT_EQ(reply.res[http::field::access_control_allow_headers], "Authorization, Content-Type");
  EXPECT_EQ(reply.res[http::field::access_control_max_age], "600");
  EXPECT_EQ(reply.res[http::field::vary], "Origin");
  expect_standard_headers(reply.res);

  // The request itself carries the CORS headers too.
  auto req = rpc_request(rpc_text(1, "echo"));
  req.set(http::field::origin, kAllowedOrigin);
  auto post = client.send(req);
  ASSERT_FALSE(post.ec);
  EXPECT_EQ(post.res.result(), http::status::ok);
  EXPECT_EQ(post.res[http::field::access_control_allow_origin], kAllowedOrigin);
  EXPECT_EQ(post.res[http::field::vary], "Origin");

  // A preflight from a foreign origin, or to a foreign host, is refused.
  preflight.set(http::field::origin, "http://evil.com");
  expect_error(HttpClient(port_).send(preflight), http::status::forbidden, "forbidden origin");
  preflight.set(http::field::origin, kAllowedOrigin);
  preflight.set(http::field::host, "evil.com");
  expect_error(HttpClient(port_).send(preflight), http::status::forbidden, "forbidden host");
}

TEST_F(ServerTest, IdleHttpConnectionIsClosed) {
  start_server([](ServerOptions& o) { o.idle_timeout = 1s; });
  HttpClient client(port_);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(ServerTest, ConnectionLimit) {
  start_server([](ServerOptions& o) { o.max_connections = 2; });
  HttpClient a(port_);
  HttpClient b(port_);
  // Make sure both are accepted before the third arrives.
  ASSERT_EQ(a.send(rpc_request(rpc_text(1, "echo"))).res.result(), http::status::ok);
  ASSERT_EQ(b.send(rpc_request(rpc_text(1, "echo"))).res.result(), http::status::ok);
  HttpClient c(port_);
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_TRUE(logged("connection limit"));
  EXPECT_EQ(a.send(rpc_request(rpc_text(2, "echo"))).res.result(), http::status::ok);
}

// Half-open connections that never show the token must not lock clients out: they have a cap
// of their own (the oldest goes first) and a header deadline, and at the total cap they make
// room for a client rather than the client being refused.
TEST_F(ServerTest, HalfOpenConnectionsWithoutTokenCannotLockClientsOut) {
  start_server([](ServerOptions& o) {
    o.max_connections = 40;
    o.max_unauthenticated = 8;
  });
  std::vector<std::unique_ptr<HttpClient>> idle;
  for (int i = 0; i < 60; ++i) {
    idle.push_back(std::make_unique<HttpClient>(port_));
    idle.back()->write_raw("POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  }
  for (int round = 0; round < 3; ++round) {
    HttpClient client(port_);
    auto reply = client.send(rpc_request(rpc_text(round, "echo")));
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.res.result(), http::status::ok);
  }
  EXPECT_TRUE(logged("without a token"));
  // The oldest half-open ones were closed.
  EXPECT_TRUE(idle.front()->closed_by_server());
}

// A flood of idle connections, new ones all the time and never a byte, cannot keep a client with
// the token out: at the cap the oldest idle one is closed whatever its age, and a connection
// whose request is waiting on its socket or being handled is never the one closed.
TEST_F(ServerTest, AFloodOfIdleConnectionsCannotKeepAClientOut) {
  start_server([](ServerOptions& o) {
    o.max_connections = 300;
    o.max_unauthenticated = 32;
  });
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::thread flood([&] {
    std::deque<Fd> idle;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    while (!stop.load()) {
      Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!fd) break;
      if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
        opened.fetch_add(1);
        idle.push_back(std::move(fd));
      }
      if (idle.size() > 600) idle.pop_front();  // the flood keeps 600 open at most
    }
  });
  while (opened.load() < 200) std::this_thread::yield();  // the flood is on
  // A client's connection that still looks idle when it has become the oldest without a token
  // is closed like the flood's: its thread has not sent the request yet (on 2 busy cores it may
  // wait that long between connect and send), or the server has just taken the request's bytes
  // off the socket and not yet parsed them (idle() cannot see that). A client tries again on a
  // connection closed before any answer, as HTTP clients do: every call gets through, nearly
  // all on the first try.
  int failed = 0;
  int retried = 0;
  for (int i = 0; i < 40; ++i) {
    bool ok = false;
    for (int attempt = 0; attempt < 3 && !ok; ++attempt) {
      HttpClient client(port_);
      auto reply = client.send(rpc_request(rpc_text(i, "echo")));
      ok = !reply.ec && reply.res.result() == http::status::ok;
      if (!ok && attempt == 0) ++retried;
    }
    if (!ok) ++failed;
  }
  stop.store(true);
  flood.join();
  EXPECT_EQ(failed, 0) << "of 40 calls during a flood of " << opened.load() << " connections";
  EXPECT_LE(retried, 2) << "of 40 calls closed before their request arrived";
  EXPECT_TRUE(logged("without a token"));
}

// A burst of real clients that all connect before any of them sends is not cut by the cap
// on connections without the token (by default a quarter of the connection cap; the young ones
// are spared when it is reached).
TEST_F(ServerTest, ABurstOfNewClientsIsNotCut) {
  start_server();
  std::vector<std::unique_ptr<HttpClient>> clients;
  clients.reserve(200);
  for (int i = 0; i < 200; ++i) clients.push_back(std::make_unique<HttpClient>(port_));
  for (int i = 0; i < 200; ++i) {
    auto reply = clients[i]->send(rpc_request(rpc_text(i, "echo")));
    ASSERT_FALSE(reply.ec) << i << ": " << reply.ec.message();
    EXPECT_EQ(reply.res.result(), http::status::ok);
  }
  EXPECT_FALSE(logged("without a token"));
}

TEST_F(ServerTest, ConnectionWithoutTokenIsClosedAtTheHeaderDeadline) {
  start_server([](ServerOptions& o) { o.header_timeout = 500ms; });  // idle_timeout stays 60 s
  {
    HttpClient slow(port_);
    slow.write_raw("POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(slow.closed_by_server());
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  {
    // Requests without the token (401 on keep-alive) do not move the deadline.
    HttpClient unauth(port_);
    auto req = rpc_request(rpc_text(1, "echo"));
    req.erase(http::field::authorization);
    EXPECT_EQ(unauth.send(req).res.result(), http::status::unauthorized);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(unauth.closed_by_server());
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  // A connection that showed the token lives on the idle timeout.
  HttpClient good(port_);
  EXPECT_EQ(good.send(rpc_request(rpc_text(1, "echo"))).res.result(), http::status::ok);
  std::this_thread::sleep_for(900ms);
  EXPECT_EQ(good.send(rpc_request(rpc_text(2, "echo"))).res.result(), http::status::ok);
}

TEST_F(ServerTest, WebSocketsCannotTakeTheRoomOfHttpCalls) {
  start_server([](ServerOptions& o) {
    o.max_connections = 12;
    o.max_websockets = 4;
  });
  std::vector<std::unique_ptr<WsClient>> sockets;
  for (int i = 0; i < 4; ++i) {
    sockets.push_back(std::make_unique<WsClient>());
    ASSERT_FALSE(sockets.back()->connect(port_, "/ws", ws_auth)) << i;
  }
  WsClient extra;
  websocket::response_type res;
  EXPECT_TRUE(extra.connect(port_, "/ws", ws_auth, &res));
  EXPECT_EQ(res.result(), http::status::service_unavailable);
  // HTTP calls still get through, several at once.
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int i = 0; i < 6; ++i) {
    clients.push_back(std::make_unique<HttpClient>(port_));
    EXPECT_EQ(clients.back()->send(rpc_request(rpc_text(i, "echo"))).res.result(),
              http::status::ok);
  }
  // A closed WebSocket gives its slot back.
  EXPECT_FALSE(sockets.front()->close());
  sockets.erase(sockets.begin());
  bool reconnected = false;
  for (int i = 0; i < 50 && !reconnected; ++i) {
    WsClient again;
    reconnected = !again.connect(port_, "/ws", ws_auth);
    if (!reconnected) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(reconnected);
}

TEST_F(ServerTest, ListenReportsErrorsAsValues) {
  start_server();
  ServerOptions options;
  options.token = "t";
  options.port = port_;
  Server second(ioc_, options, dispatcher_);
  auto in_use = second.listen();
  ASSERT_FALSE(in_use.ok());
  EXPECT_NE(in_use.error().message.find("cannot bind"), std::string::npos)
      << in_use.error().message;

  ServerOptions no_token;
  Server third(ioc_, no_token, dispatcher_);
  EXPECT_FALSE(third.listen().ok());

  ServerOptions bad_address;
  bad_address.token = "t";
  bad_address.address = "not an address";
  Server fourth(ioc_, bad_address, dispatcher_);
  EXPECT_FALSE(fourth.listen().ok());
}

// ---------------------------------------------------------------------------------------------
// WebSocket

TEST_F(ServerTest, WebSocketRequestWithHeaderToken) {
  start_server();
  WsClient ws;
  websocket::response_type res;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth, &res));
  EXPECT_EQ(res[http::field::server], "hearth");
  ASSERT_FALSE(ws.write(rpc_text(3, "echo", R"({"x":1})")));
  auto [ec, text] = ws.read();
  ASSERT_FALSE(ec) << ec.message();
  auto body = parse(text);
  EXPECT_EQ(body.at("id"), 3);
  EXPECT_EQ(body.at("result").at("x"), 1);
  EXPECT_FALSE(ws.close());
}

TEST_F(ServerTest, WebSocketQueryToken) {
  start_server();
  WsClient ws;
  auto with_origin = [this](websocket::request_type& req) {
    req.set(http::field::origin, "http://127.0.0.1:" + std::to_string(port_));
  };
  ASSERT_FALSE(ws.connect(port_, "/ws?x=1&token=" + std::string(kToken), with_origin));
  ASSERT_FALSE(ws.write(rpc_text(1, "echo")));
  EXPECT_FALSE(ws.read().first);

  // Percent-encoded is fine too ('-' as %2D).
  WsClient encoded;
  std::string token(kToken);
  token.replace(token.find('-'), 1, "%2D");
  ASSERT_FALSE(encoded.connect(port_, "/ws?token=" + token, with_origin));

  WsClient wrong;
  websocket::response_type res;
  EXPECT_TRUE(wrong.connect(port_, "/ws?token=nope", with_origin, &res));
  EXPECT_EQ(res.result(), http::status::unauthorized);
  EXPECT_EQ(res[http::field::www_authenticate], "Bearer");
}

TEST_F(ServerTest, WebSocketUpgradeIsChecked) {
  start_server();
  struct Case {
    std::string name;
    std::function<void(websocket::request_type&)> decorate;
    http::status status;
  };
  const std::vector<Case> cases = {
      {"no token", [](websocket::request_type&) {}, http::status::unauthorized},
      {"wrong token",
       [](websocket::request_type& r) { r.set(http::field::authorization, "Bearer nope"); },
       http::status::unauthorized},
      {"foreign origin",
       [](websocket::request_type& r) {
         ws_auth(r);
         r.set(http::field::origin, "http://evil.com");
       },
       http::status::forbidden},
      {"null origin",
       [](websocket::request_type& r) {
         ws_auth(r);
         r.set(http::field::origin, "null");
       },
       http::status::forbidden},
      {"foreign host",
       [](websocket::request_type& r) {
         ws_auth(r);
         r.set(http::field::host, "evil.com");
       },
       http::status::forbidden},
  };
  for (const auto& c : cases) {
    WsClient ws;
    websocket::response_type res;
    EXPECT_TRUE(ws.connect(port_, "/ws", c.decorate, &res)) << c.name;
    EXPECT_EQ(res.result(), c.status) << c.name;
    EXPECT_EQ(res[http::field::server], "hearth") << c.name;
  }
  // Allowed cross origin: accepted.
  WsClient ws;
  EXPECT_FALSE(ws.connect(port_, "/ws", [](websocket::request_type& r) {
    ws_auth(r);
    r.set(http::field::origin, kAllowedOrigin);
  }));
  // Only /ws upgrades.
  WsClient elsewhere;
  websocket::response_type res;
  EXPECT_TRUE(elsewhere.connect(port_, "/rpc", ws_auth, &res));
  EXPECT_EQ(res.result(), http::status::method_not_allowed);
}

TEST_F(ServerTest, WebSocketServerPush) {
  start_server();
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(ws.write(rpc_text(9, "push", R"({"count":3})")));
  // The pushes were queued before the response, and the queue keeps order.
  for (int i = 0; i < 3; ++i) {
    auto [ec, text] = ws.read();
    ASSERT_FALSE(ec) << ec.message();
    auto message = parse(text);
    EXPECT_EQ(message.at("method"), "test/push");
    EXPECT_EQ(message.at("params").at("n"), i);
    EXPECT_EQ(message.as_object().if_contains("id"), nullptr);
  }
  auto [ec, text] = ws.read();
  ASSERT_FALSE(ec);
  auto response = parse(text);
  EXPECT_EQ(response.at("id"), 9);
  EXPECT_EQ(response.at("result").at("transport"), "ws");
  EXPECT_EQ(response.at("result").at("can_push"), true);
}

// broadcast() reaches every open WebSocket connection, once each, and none that has closed.
TEST_F(ServerTest, BroadcastReachesEveryOpenWebSocket) {
  start_server();
  WsClient a;
  WsClient b;
  WsClient gone;
  ASSERT_FALSE(a.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(b.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(gone.connect(port_, "/ws", ws_auth));
  // A round trip on each: the server has set up their sessions.
  for (auto* ws : {&a, &b, &gone}) {
    ASSERT_FALSE(ws->write(rpc_text(1, "echo")));
    ASSERT_FALSE(ws->read().first);
  }
  ASSERT_FALSE(gone.close());
  const auto deadline = std::chrono::steady_clock::now() + kClientTimeout;
  while (server_->connection_count() > 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(server_->connection_count(), 2u);
  server_->broadcast(R"({"jsonrpc":"2.0","method":"test/all","params":{"n":1}})");
  server_->broadcast(R"({"jsonrpc":"2.0","method":"test/all","params":{"n":2}})");
  for (auto* ws : {&a, &b}) {
    for (int n = 1; n <= 2; ++n) {
      auto [ec, text] = ws->read();
      ASSERT_FALSE(ec) << ec.message();
      EXPECT_EQ(parse(text).at("params").at("n"), n);
    }
    // Nothing more was queued for it: the next message is the answer to this request.
    ASSERT_FALSE(ws->write(rpc_text(2, "echo")));
    auto [ec, text] = ws->read();
    ASSERT_FALSE(ec);
    EXPECT_EQ(parse(text).at("id"), 2);
  }
}

// A connection takes broadcasts from the moment its handshake is answered: a peer that holds
// the 101 may at once do what makes the daemon broadcast (edit a watched manifest), and must
// get it. The session is registered before the 101 is written, and what is pushed meanwhile is
// written after it.
TEST_F(ServerTest, ABroadcastRightAfterTheHandshakeReachesTheNewConnection) {
  start_server();
  for (int i = 0; i < 200; ++i) {
    WsClient ws;
    ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
    server_->broadcast(json::dump(rpc::make_notification("test/all", json::object{{"n", i}})));
    auto [ec, text] = ws.read();
    ASSERT_FALSE(ec) << "connection " << i << ": " << ec.message();
    EXPECT_EQ(parse(text).at("params").at("n"), i);
  }
}

// A fan-out writes some messages on the publishing thread and hands the others to the pool;
// every connection still gets its messages in order. The publisher runs on one receiver's own
// strand, where a message handed off would be overtaken by the next one written at once. An odd
// number of receivers makes each one's turn alternate between the two ways from round to round.
TEST_F(ServerTest, FanOutKeepsEveryConnectionsOrder) {
  start_server();
  constexpr int kClients = 2 * static_cast<int>(FanOut::kMinReceivers) + 1;
  constexpr int kRounds = 20;
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<WsClient>());
    ASSERT_FALSE(clients.back()->connect(port_, "/ws", ws_auth));
    ASSERT_FALSE(clients.back()->write(rpc_text(1, "echo")));
    ASSERT_FALSE(clients.back()->read().first);  // its session is registered
  }
  WsClient& caller = *clients.front();
  ASSERT_FALSE(caller.write(rpc_text(2, "fanout", "{\"rounds\":" + std::to_string(kRounds) + "}")));
  for (int i = 0; i < kClients; ++i) {
    for (int n = 0; n < kRounds; ++n) {
      auto [ec, text] = clients[i]->read();
      ASSERT_FALSE(ec) << "client " << i << ": " << ec.message();
      ASSERT_EQ(parse(text).at("params").at("n"), n) << "client " << i;
    }
  }
  auto [ec, text] = caller.read();
  ASSERT_FALSE(ec);
  EXPECT_EQ(parse(text).at("id"), 2);
}

TEST_F(ServerTest, ManyConcurrentWebSocketRequests) {
  start_server();
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  constexpr int kRequests = 64;
  constexpr int kSleepMs = 300;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_FALSE(ws.write(rpc_text(i, "sleep", "{\"ms\":" + std::to_string(kSleepMs) + "}")));
  }
  // A notification and a batch in the mix.
  ASSERT_FALSE(ws.write(R"({"jsonrpc":"2.0","method":"echo"})"));
  ASSERT_FALSE(ws.write("[" + rpc_text(1000, "echo") + "," + rpc_text(1001, "echo") + "]"));
  std::set<std::int64_t> ids;
  for (int i = 0; i < kRequests + 1; ++i) {
    auto [ec, text] = ws.read();
    ASSERT_FALSE(ec) << ec.message();
    auto message = parse(text);
    if (message.is_array()) {
      ASSERT_EQ(message.as_array().size(), 2U);
      EXPECT_EQ(message.as_array()[0].at("id"), 1000);
      ids.insert(1000);
      continue;
    }
    EXPECT_EQ(message.at("result").at("slept"), kSleepMs);
    ids.insert(message.at("id").to_number<std::int64_t>());
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kRequests + 1));
  // Sequential handling would take kRequests * kSleepMs = 19 s.
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(kSleepMs * kRequests / 4));
}

TEST_F(ServerTest, InFlightCapPausesReadingWithoutLosingRequests) {
  start_server();
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  // 300 requests against a cap of 256 in flight: the last ones start only once the first wave
  // has finished, so the whole takes two sleeps, and none is lost.
  constexpr int kRequests = 300;
  constexpr int kSleepMs = 200;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_FALSE(ws.write(rpc_text(i, "sleep", "{\"ms\":" + std::to_string(kSleepMs) + "}")));
  }
  std::set<std::int64_t> ids;
  for (int i = 0; i < kRequests; ++i) {
    auto [ec, text] = ws.read();
    ASSERT_FALSE(ec) << ec.message();
    ids.insert(parse(text).at("id").to_number<std::int64_t>());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kRequests));
  EXPECT_GE(elapsed, std::chrono::milliseconds(2 * kSleepMs));
  EXPECT_LT(elapsed, 10s);
}

TEST_F(ServerTest, WebSocketSessionClosesWhenClientLeaves) {
  start_server();
  {
    WsClient ws;
    ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
    ASSERT_FALSE(ws.write(rpc_text(1, "watch")));
    ASSERT_FALSE(ws.read().first);
    EXPECT_FALSE(ws.close());  // a clean close handshake
    EXPECT_EQ(ws.reason().code, websocket::close_code::normal);
  }
  EXPECT_TRUE(wait_closed_sessions(1));
  {
    WsClient ws;
    ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
    ASSERT_FALSE(ws.write(rpc_text(1, "watch")));
    ASSERT_FALSE(ws.read().first);
    ws.drop();  // no close frame
  }
  EXPECT_TRUE(wait_closed_sessions(2));
  {
    HttpClient client(port_);
    ASSERT_EQ(client.send(rpc_request(rpc_text(1, "watch"))).res.result(), http::status::ok);
  }
  EXPECT_TRUE(wait_closed_sessions(3));
  // Exactly once each.
  std::this_thread::sleep_for(100ms);
  std::lock_guard lock(mu_);
  EXPECT_EQ(closed_sessions_, 3);
}

TEST_F(ServerTest, BinaryFrameClosesWith1003) {
  start_server();
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(ws.write(rpc_text(1, "watch")));
  ASSERT_FALSE(ws.read().first);
  ASSERT_FALSE(ws.write("\x01\x02", true));
  auto [ec, text] = ws.read();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(ws.reason().code, websocket::close_code::unknown_data);
  EXPECT_TRUE(wait_closed_sessions(1));
}

TEST_F(ServerTest, OversizeWebSocketMessageClosesWith1009) {
  start_server([](ServerOptions& o) { o.max_request_bytes = 1024; });
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(ws.write(rpc_text(1, "echo", "{\"pad\":\"" + std::string(2048, 'x') + "\"}")));
  // The server fails the connection with 1009 and drops the unread rest of the frame, so the
  // client may see a reset while answering the close frame: only the code is certain.
  auto [ec, text] = ws.read();
  EXPECT_TRUE(ec);
  EXPECT_EQ(ws.reason().code, websocket::close_code::too_big);
}

TEST_F(ServerTest, SlowWebSocketReaderIsDisconnected) {
  start_server([](ServerOptions& o) { o.max_ws_queue_bytes = std::size_t{64} << 10; });
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(ws.write(rpc_text(1, "watch")));
  ASSERT_FALSE(ws.read().first);
  // 4 MB pushed in one go: the queue limit is crossed before any of it can drain.
  ASSERT_FALSE(ws.write(rpc_text(2, "push", R"({"count":1024,"size":4096})")));
  beast::error_code ec;
  int messages = 0;
  while (!ec) {
    std::tie(ec, std::ignore) = ws.read();
    if (!ec) ++messages;
  }
  EXPECT_LT(messages, 1024);
  EXPECT_TRUE(wait_closed_sessions(1));
  EXPECT_TRUE(logged("too slow"));
}

TEST_F(ServerTest, WebSocketIdleTimeoutKeepsLivePeersWithPings) {
  start_server([](ServerOptions& o) { o.idle_timeout = 1s; });
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  // The server pings after half the idle time; our read loop answers with pongs.
  ASSERT_FALSE(ws.write(rpc_text(1, "sleep", R"({"ms":2500})")));
  auto [ec, text] = ws.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(parse(text).at("id"), 1);
}

// ---------------------------------------------------------------------------------------------
// stop()

TEST_F(ServerTest, StopClosesConnectionsAndLetsRunReturn) {
  start_server();
  HttpClient http_client(port_);
  ASSERT_EQ(http_client.send(rpc_request(rpc_text(1, "echo"))).res.result(), http::status::ok);
  WsClient ws;
  ASSERT_FALSE(ws.connect(port_, "/ws", ws_auth));
  ASSERT_FALSE(ws.write(rpc_text(1, "watch")));
  ASSERT_FALSE(ws.read().first);
  // A request still running when stop() comes is abandoned.
  ASSERT_FALSE(ws.write(rpc_text(2, "sleep", R"({"ms":300})")));
  WsClient idle_ws;
  ASSERT_FALSE(idle_ws.connect(port_, "/ws", ws_auth));

  server_->stop();
  auto [ec, text] = ws.read();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message() << " " << text;
  EXPECT_EQ(ws.reason().code, websocket::close_code::going_away);
  EXPECT_EQ(idle_ws.read().first, websocket::error::closed);
  EXPECT_TRUE(http_client.closed_by_server());
  EXPECT_TRUE(wait_closed_sessions(1));
  EXPECT_TRUE(stop_and_join());
  EXPECT_EQ(server_->connection_count(), 0U);

  // Nothing listens any more.
  asio::io_context client_ioc;
  tcp::socket socket(client_ioc);
  beast::error_code connect_ec;
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), connect_ec);
  EXPECT_TRUE(connect_ec);
}

TEST_F(ServerTest, StopWhileHttpRequestInFlight) {
  start_server();
  HttpClient client(port_);
  ASSERT_FALSE(client.write(rpc_request(rpc_text(1, "sleep", R"({"ms":300})"))));
  std::this_thread::sleep_for(50ms);
  server_->stop();
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_TRUE(stop_and_join());
}

TEST_F(ServerTest, LogsToSpdlogWithoutCallback) {
  // No log callback: the server must still work (lines go to spdlog at debug level).
  start_server([](ServerOptions& o) { o.log = nullptr; });
  HttpClient client(port_);
  auto req = rpc_request(rpc_text(1, "echo"));
  req.set(http::field::host, "evil.com");
  expect_error(client.send(req), http::status::forbidden, "forbidden host");
}

// ---------------------------------------------------------------------------------------------
// The route table

TEST(RoutesTable, ExactPathsThenTheLongestPrefix) {
  Routes routes;
  const auto answer = [](const std::string& text) {
    return [text](net::HttpRequest) -> asio::awaitable<net::HttpResponse> {
      co_return net::HttpResponse{200, "text/plain", {}, text};
    };
  };
  ASSERT_TRUE(routes.add({"/view/", {"GET"}, Access::kToken, answer("view")}).ok());
  ASSERT_TRUE(routes.add({"/view/app/", {"GET"}, Access::kToken, answer("app")}).ok());
  ASSERT_TRUE(routes.add({"/view/index", {"GET"}, Access::kToken, answer("index")}).ok());
  EXPECT_EQ(routes.find("/view/index")->path, "/view/index");
  EXPECT_EQ(routes.find("/view/app/x.js")->path, "/view/app/");
  EXPECT_EQ(routes.find("/view/other")->path, "/view/");
  EXPECT_EQ(routes.find("/viewer"), nullptr);
  EXPECT_EQ(routes.find("/"), nullptr);
  EXPECT_FALSE(routes.add({"/view/", {"GET"}, Access::kToken, answer("again")}).ok());
  EXPECT_FALSE(routes.add({"/rpc", {"GET"}, Access::kToken, answer("no")}).ok());
  EXPECT_FALSE(routes.add({"/ws/x", {"GET"}, Access::kToken, answer("no")}).ok());
  EXPECT_FALSE(routes.add({"relative", {"GET"}, Access::kToken, answer("no")}).ok());
  EXPECT_FALSE(routes.add({"/nohandler", {"GET"}, Access::kToken, {}}).ok());
  EXPECT_EQ(allow_header(*routes.find("/view/index")), "GET, HEAD, OPTIONS");
}

class RouteTest : public ServerTest {
 protected:
  void SetUp() override {
    // A page: the handler chooses the content type and headers.
    ASSERT_TRUE(routes_
                    .add({"/page",
                          {"GET"},
                          Access::kTokenOrQuery,
                          [](net::HttpRequest r) -> asio::awaitable<net::HttpResponse> {
                            net::HttpResponse out;
                            out.content_type = "text/html; charset=utf-8";
                            out.headers = {{"Cache-Control", "max-age=60"},
                                           {"X-Seen-Query", r.query},
                                           {"X-Bad", "a\r\nInjected: yes"}};
                            out.body = "<p>" + r.path + "</p>";
                            co_return out;
                          }})
                    .ok());
    // Files below a prefix, no token: the Host and Origin checks still apply.
    ASSERT_TRUE(routes_
                    .add({"/open/",
                          {"GET"},
                          Access::kOpen,
                          [](net::HttpRequest r) -> asio::awaitable<net::HttpResponse> {
                            co_return net::HttpResponse{200, "text/plain", {}, "open " + r.path};
                          }})
                    .ok());
    // What a sandboxed view frame loads: its requests carry `Origin: null`.
    net::Route frame;
    frame.path = "/frame/";
    frame.methods = {"GET", "POST"};
    frame.access = Access::kOpen;
    frame.opaque_origin = true;
    frame.handler = [](net::HttpRequest r) -> asio::awaitable<net::HttpResponse> {
      co_return net::HttpResponse{200, "text/plain", {}, "frame " + r.path};
    };
    ASSERT_TRUE(routes_.add(std::move(frame)).ok());
    // An answer that depends on a request header of its own.
    ASSERT_TRUE(
        routes_
            .add({"/varies",
                  {"GET"},
                  Access::kOpen,
                  [](net::HttpRequest) -> asio::awaitable<net::HttpResponse> {
                    co_return net::HttpResponse{200, "text/plain", {{"Vary", "A2A-Version"}}, "v"};
                  }})
            .ok());
    // Echoes a posted body with a status of its choosing.
    ASSERT_TRUE(routes_
                    .add({"/echo",
                          {"POST", "PUT"},
                          Access::kToken,
                          [](net::HttpRequest r) -> asio::awaitable<net::HttpResponse> {
                            co_return net::HttpResponse{
                                201,
                                "application/octet-stream",
                                {},
                                r.method + " " + std::string(r.header("x-tag").value_or("-")) +
                                    " " + r.body};
                          }})
                    .ok());
    start_server();
  }
};

TEST_F(RouteTest, AHandlerChoosesStatusContentTypeAndHeaders) {
  HttpClient c(port_);
  auto reply = c.send(make_request(http::verb::get, "/page?x=1"));
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.res.result_int(), 200u);
  EXPECT_EQ(reply.res[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_EQ(reply.res[http::field::cache_control], "max-age=60");
  EXPECT_EQ(reply.res["X-Seen-Query"], "x=1");
  EXPECT_EQ(reply.res[http::field::server], "hearth");
  EXPECT_EQ(reply.res["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(reply.res.body(), "<p>/page</p>");
  // A header value that would split the header block is not sent.
  EXPECT_EQ(reply.res.count("X-Bad"), 0u);
  EXPECT_EQ(reply.res.count("Injected"), 0u);

  auto posted = c.send([&] {
    auto req = make_request(http::verb::put, "/echo", "body bytes");
    req.set("X-Tag", "t1");
    return req;
  }());
  ASSERT_FALSE(posted.ec);
  EXPECT_EQ(posted.res.result_int(), 201u);
  EXPECT_EQ(posted.res[http::field::content_type], "application/octet-stream");
  EXPECT_EQ(posted.res[http::field::cache_control], "no-store");
  EXPECT_EQ(posted.res.body(), "PUT t1 body bytes");
}

TEST_F(RouteTest, ARoutesVaryKeepsTheServersVaryOrigin) {
  HttpClient c(port_);
  auto same = c.send(make_request(http::verb::get, "/varies"));
  ASSERT_FALSE(same.ec);
  EXPECT_EQ(same.res[http::field::vary], "A2A-Version");
  auto req = make_request(http::verb::get, "/varies");
  req.set(http::field::origin, kAllowedOrigin);
  auto cross = c.send(req);
  ASSERT_FALSE(cross.ec);
  EXPECT_EQ(cross.res[http::field::access_control_allow_origin], kAllowedOrigin);
  EXPECT_EQ(cross.res[http::field::vary], "Origin, A2A-Version");
}

TEST_F(RouteTest, TheTokenIsRequiredAsEachRouteSays) {
  HttpClient c(port_);
  auto no_token = make_request(http::verb::get, "/page");
  no_token.erase(http::field::authorization);
  expect_error(c.send(no_token), http::status::unauthorized, "missing or invalid token");
  // A browser navigating to a page may carry the token in the query.
  auto query = make_request(http::verb::get, "/page?token=" + std::string(kToken));
  query.erase(http::field::authorization);
  auto page = c.send(query);
  ASSERT_FALSE(page.ec);
  EXPECT_EQ(page.res.result_int(), 200u);
  // ... which a route that wants the header refuses.
  auto echo = make_request(http::verb::post, "/echo?token=" + std::string(kToken), "x");
  echo.erase(http::field::authorization);
  expect_error(c.send(echo), http::status::unauthorized, "missing or invalid token");

  auto open = make_request(http::verb::get, "/open/a/b.txt");
  open.erase(http::field::authorization);
  auto opened = c.send(open);
  ASSERT_FALSE(opened.ec);
  EXPECT_EQ(opened.res.body(), "open /open/a/b.txt");
  // An open route still has the Host and Origin checks.
  HttpClient other(port_);
  open.set(http::field::host, "evil.example");
  expect_error(other.send(open), http::status::forbidden, "forbidden host");
  HttpClient third(port_);
  open.set(http::field::host, "127.0.0.1:" + std::to_string(port_));
  open.set(http::field::origin, "http://evil.example");
  expect_error(third.send(open), http::status::forbidden, "forbidden origin");
}

TEST_F(RouteTest, AnOpaqueOriginIsAcceptedOnlyWhereARouteSaysAndOnlyToRead) {
  auto frame = make_request(http::verb::get, "/frame/index.html");
  frame.erase(http::field::authorization);
  frame.set(http::field::origin, "null");
  HttpClient a(port_);
  auto got = a.send(frame);
  ASSERT_FALSE(got.ec);
  EXPECT_EQ(got.res.result_int(), 200u);
  EXPECT_EQ(got.res.body(), "frame /frame/index.html");
  // Not to post, even on that route.
  HttpClient b(port_);
  auto post = make_request(http::verb::post, "/frame/x", "x");
  post.set(http::field::origin, "null");
  expect_error(b.send(post), http::status::forbidden, "forbidden origin");
  // Not on another open route, nor on /rpc or /ws, even with the token.
  HttpClient c(port_);
  auto open = make_request(http::verb::get, "/open/a");
  open.set(http::field::origin, "null");
  expect_error(c.send(open), http::status::forbidden, "forbidden origin");
  HttpClient d(port_);
  auto rpc = rpc_request(R"({"jsonrpc":"2.0","id":1,"method":"x"})");
  rpc.set(http::field::origin, "null");
  expect_error(d.send(rpc), http::status::forbidden, "forbidden origin");
  // The Host check still applies.
  HttpClient e(port_);
  frame.set(http::field::host, "evil.example");
  expect_error(e.send(frame), http::status::forbidden, "forbidden host");
}

TEST_F(RouteTest, MethodsHeadPreflightAndUnknownPaths) {
  HttpClient c(port_);
  auto wrong = c.send(make_request(http::verb::delete_, "/echo"));
  ASSERT_FALSE(wrong.ec);
  EXPECT_EQ(wrong.res.result(), http::status::method_not_allowed);
  EXPECT_EQ(wrong.res[http::field::allow], "POST, PUT, OPTIONS");

  http::response_parser<http::string_body> head_parser;
  head_parser.skip(true);
  ASSERT_FALSE(c.write(make_request(http::verb::head, "/page")));
  ASSERT_FALSE(c.read_with(head_parser));
  EXPECT_EQ(head_parser.get().result_int(), 200u);
  EXPECT_EQ(head_parser.get()[http::field::content_length], "12");
  EXPECT_TRUE(head_parser.get().body().empty());

  auto preflight = c.send(make_request(http::verb::options, "/echo"));
  ASSERT_FALSE(preflight.ec);
  EXPECT_EQ(preflight.res.result(), http::status::no_content);
  EXPECT_EQ(preflight.res[http::field::allow], "POST, PUT, OPTIONS");

  expect_error(c.send(make_request(http::verb::get, "/nothing/here")), http::status::not_found,
               "not found");
  // Without the token an unknown path says no more than a known one.
  auto probe = make_request(http::verb::get, "/nothing/here");
  probe.erase(http::field::authorization);
  expect_error(c.send(probe), http::status::unauthorized, "missing or invalid token");
}

TEST_F(RouteTest, ARouteBodyHasTheRequestSizeLimit) {
  HttpClient c(port_);
  auto big = make_request(http::verb::post, "/echo", std::string((1 << 20) + 1, 'x'));
  expect_error(c.send(big), http::status::payload_too_large, "request body too large");
}

}  // namespace
}  // namespace hearth::net
