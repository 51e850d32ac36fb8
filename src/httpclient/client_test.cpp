#include "httpclient/client.hpp"

#include <gtest/gtest.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "httpclient/testing.hpp"

namespace hearth::httpclient {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::reply;
using testing::Reply;
using testing::SeenRequest;
using testing::Server;

const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// ---------------------------------------------------------------------------------------------
// URLs

TEST(Url, ParsesWhatARequestNeeds) {
  auto u = parse_url("HTTPS://API.Example.com:8443/a/b?x=1#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "api.example.com");
  EXPECT_EQ(u->port, 8443);
  EXPECT_EQ(u->target, "/a/b?x=1");
  EXPECT_EQ(u->origin(), "https://api.example.com:8443");

  u = parse_url("http://example.com");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  EXPECT_EQ(u->origin(), "http://example.com");

  u = parse_url("http://example.com:?q");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/?q");

  u = parse_url("https://[2001:DB8::1]:444/x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "2001:db8::1");
  EXPECT_EQ(u->origin(), "https://[2001:db8::1]:444");

  // What may not appear in a request line is encoded; existing escapes stay.
  u = parse_url("http://h/a b/\xC3\xA9?q=\"x\"&r=%2F\r\n");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->target, "/a%20b/%C3%A9?q=%22x%22&r=%2F%0D%0A");
}

TEST(Url, HostHeaderAndAuthority) {
  // url, Host header, authority: the port in the Host header only when it is not the default.
  const std::array<std::array<const char*, 3>, 4> cases = {{
      {"https://Example.com/", "example.com", "example.com:443"},
      {"http://example.com:8080", "example.com:8080", "example.com:8080"},
      {"http://[::1]/", "[::1]", "[::1]:80"},
      {"https://[::1]:80/", "[::1]:80", "[::1]:80"},
  }};
  for (const auto& [text, host_header, authority] : cases) {
    auto u = parse_url(text);
    ASSERT_TRUE(u.ok()) << text;
    EXPECT_EQ(u->host_header(), host_header) << text;
    EXPECT_EQ(u->authority(), authority) << text;
    EXPECT_EQ(u->origin(), (u->tls ? "https://" : "http://") + u->host_header()) << text;
  }
}

TEST(Url, RefusesWhatItCannotUse) {
  for (const char* bad : {"ftp://h/", "h/x", "http://", "http:///x", "http://user:pw@h/",
                          "http://h:0/", "http://h:65536/", "http://h:8x/", "http://[::1/",
                          "http://[fe80::1%eth0]/", "http://h st/", "http://h:-1/"}) {
    auto u = parse_url(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.error().code, ErrorCode::kInvalidParams) << bad;
    }
  }
}

TEST(Url, ResolvesLocations) {
  const Url base = parse_url("https://h.example/a/b/c?q=1").value();
  auto at = [&](std::string_view location) {
    auto u = resolve_location(base, location);
    return u.ok() ? u->origin() + u->target : "error: " + u.error().message;
  };
  EXPECT_EQ(at("http://other.example/x"), "http://other.example/x");
  EXPECT_EQ(at("//other.example:8443/y"), "https://other.example:8443/y");
  EXPECT_EQ(at("/root?z"), "https://h.example/root?z");
  EXPECT_EQ(at("d"), "https://h.example/a/b/d");
  EXPECT_EQ(at("../d/./e"), "https://h.example/a/d/e");
  EXPECT_EQ(at("../../../../x"), "https://h.example/x");
  EXPECT_EQ(at("?only=query"), "https://h.example/a/b/c?only=query");
  EXPECT_EQ(at("./"), "https://h.example/a/b/");
  EXPECT_EQ(at(""), "https://h.example/a/b/c?q=1");
  EXPECT_EQ(at("x#frag"), "https://h.example/a/b/x");
  EXPECT_EQ(at(" \t/trimmed\t "), "https://h.example/trimmed");
  EXPECT_EQ(at("HTTP://Other.example/"), "http://other.example/");
  EXPECT_TRUE(at("mailto:a@b").starts_with("error:"));
}

TEST(Url, EncodesComponents) {
  EXPECT_EQ(encode_component("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(encode_component("a/b c?d&e=f%"), "a%2Fb%20c%3Fd%26e%3Df%25");
  EXPECT_EQ(encode_component("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(encode_component(""), "");
}

TEST(Url, ResponseHeaderLookupIgnoresCase) {
  Response r;
  r.headers = {{"content-type", "a"}, {"x-y", "1"}, {"x-y", "2"}};
  EXPECT_EQ(r.header("Content-Type"), "a");
  EXPECT_EQ(r.header("x-y"), "1");
  EXPECT_FALSE(r.header("missing").has_value());
}

// ---------------------------------------------------------------------------------------------
// Requests against a local server

class ClientTest : public ::testing::Test {
 protected:
  ClientTest() : work_(asio::make_work_guard(io_)) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~ClientTest() override {
    client_.reset();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  Client& client(Client::Options options = {}) {
    if (!client_) client_ = std::make_unique<Client>(io_.get_executor(), options);
    return *client_;
  }

  /// Runs one request on the io_context's threads and waits for it.
  Result<Response> fetch(Request request, const Abort& abort = {}) {
    auto done = std::make_shared<std::promise<Result<Response>>>();
    auto future = done->get_future();
    Client& c = client();
    asio::co_spawn(
        io_,
        [&c, request = std::move(request), abort, done]() mutable -> asio::awaitable<void> {
          done->set_value(co_await c.request(std::move(request), abort));
        },
        asio::detached);
    if (future.wait_for(30s) != std::future_status::ready) {
      ADD_FAILURE() << "the request did not finish";
      return Error::make(ErrorCode::kInternalError, "test: no answer");
    }
    return future.get();
  }

  Result<Response> get(const std::string& url) {
    Request r;
    r.url = url;
    return fetch(std::move(r));
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::unique_ptr<Client> client_;
};

std::string message(const Result<Response>& r) {
  return r.ok() ? "(ok)" : r.error().message;
}

TEST_F(ClientTest, GetAndPost) {
  Server server([](const SeenRequest& r) {
    if (r.method == "POST") return reply(201, "got " + r.body, {{"Content-Type", "text/x"}});
    return reply(200, "hello", {{"X-Thing", "1"}, {"X-Thing", "2"}});
  });
  auto r = get(server.url("/path?q=1"));
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  EXPECT_EQ(r->header("X-THING"), "1");
  EXPECT_EQ(r->url, server.url("/path?q=1"));
  ASSERT_EQ(r->headers.size(), 4u);
  EXPECT_EQ(r->headers[0].first, "x-thing");

  Request post;
  post.method = "POST";
  post.url = server.url("/submit");
  post.headers = {{"Content-Type", "application/json"}, {"X-Custom", "v"}};
  post.body = R"({"a":1})";
  r = fetch(post);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, R"(got {"a":1})");

  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/path?q=1");
  EXPECT_EQ(seen[0].header("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_FALSE(seen[0].has("content-length"));
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].header("content-length"), "7");
  EXPECT_EQ(seen[1].header("content-type"), "application/json");
  EXPECT_EQ(seen[1].header("x-custom"), "v");
  EXPECT_EQ(seen[1].body, R"({"a":1})");
}

TEST_F(ClientTest, ChunkedAndReadUntilCloseBodies) {
  Server server([](const SeenRequest& r) {
    if (r.target == "/chunked") {
      return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + testing::chunk("hel") +
                       testing::chunk("lo ") + testing::chunk("world") + "0\r\n\r\n",
                   {},
                   false,
                   false};
    }
    return Reply{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", {}, true, false};
  });
  auto r = get(server.url("/chunked"));
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "hello world");
  r = get(server.url("/close"));
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "until the end");
}

TEST_F(ClientTest, KeepAliveConnectionsAreReused) {
  Server server([](const SeenRequest& r) {
    if (r.target == "/close") {
      return Reply{testing::response(200, "x", {{"Connection", "close"}}), {}, true, false};
    }
    std::string bytes = testing::response(200, "x");
    if (r.method == "HEAD") bytes.pop_back();  // the head only
    return Reply{bytes, {}, false, false};
  });
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(get(server.url("/a")).ok());
  Request head;
  head.method = "HEAD";
  head.url = server.url("/a");
  auto r = fetch(head);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "");
  EXPECT_EQ(r->header("content-length"), "1");
  ASSERT_TRUE(get(server.url("/a")).ok());  // HEAD left the connection usable
  EXPECT_EQ(client().connections_opened(), 1u);
  EXPECT_EQ(server.connections(), 1);

  // A response that closes the connection is not pooled.
  ASSERT_TRUE(get(server.url("/close")).ok());
  ASSERT_TRUE(get(server.url("/a")).ok());
  EXPECT_EQ(client().connections_opened(), 2u);
  EXPECT_EQ(server.connections(), 2);
}

TEST_F(ClientTest, ConcurrentRequestsUseSeparateConnections) {
  Server server([](const SeenRequest&) {
    Reply r;
    r.later = {{150ms, testing::response(200, "slow")}};
    return r;
  });
  client();
  std::vector<std::future<Result<Response>>> results;
  results.reserve(4);
  for (int i = 0; i < 4; ++i) {
    results.push_back(std::async(std::launch::async, [&] { return get(server.url("/")); }));
  }
  for (auto& f : results) {
    auto r = f.get();
    ASSERT_TRUE(r.ok()) << message(r);
    EXPECT_EQ(r->body, "slow");
  }
  EXPECT_EQ(server.connections(), 4);
  // All four went back to the pool: the next four reuse them.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(get(server.url("/")).ok());
  EXPECT_EQ(server.connections(), 4);
}

TEST_F(ClientTest, StaleReusedConnectionIsRetriedOnceForIdempotentMethods) {
  // The second request on any connection gets no answer: the server closes, as a server does when
  // its keep-alive timeout strikes just as the request arrives.
  Server server([](const SeenRequest& r) {
    if (r.index >= 1) return Reply{"", {}, true, false};
    return reply(200, "fresh " + std::to_string(r.connection));
  });
  ASSERT_EQ(get(server.url("/")).value().body, "fresh 1");
  auto r = get(server.url("/"));
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "fresh 2");
  EXPECT_EQ(client().connections_opened(), 2u);

  // A POST is not sent twice: the request may have been acted upon.
  Request post;
  post.method = "POST";
  post.url = server.url("/");
  post.body = "once";
  r = fetch(post);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(client().connections_opened(), 2u);
}

TEST_F(ClientTest, ConnectionClosedWhileIdleIsNotReused) {
  // The server closes after each answer without saying so: the pooled connection is seen closed
  // before it is used, so even a POST goes through on a fresh one.
  Server server([](const SeenRequest&) {
    return Reply{testing::response(200, "ok"), {}, true, false};
  });
  ASSERT_TRUE(get(server.url("/")).ok());
  ASSERT_TRUE(Server::eventually([&] { return server.requests().size() == 1; }));
  std::this_thread::sleep_for(50ms);  // the FIN reaches the client
  Request post;
  post.method = "POST";
  post.url = server.url("/");
  post.body = "x";
  auto r = fetch(post);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(client().connections_opened(), 2u);
}

TEST_F(ClientTest, IdleConnectionsAreClosedAfterTheIdleTimeout) {
  Server server([](const SeenRequest&) { return reply(200, "ok"); });
  Client::Options options;
  options.idle_timeout = 100ms;
  client(options);
  ASSERT_TRUE(get(server.url("/")).ok());
  ASSERT_TRUE(Server::eventually([&] { return server.closed_by_peer() == 1; }, 3000ms));
  ASSERT_TRUE(get(server.url("/")).ok());
  EXPECT_EQ(client().connections_opened(), 2u);
}

TEST_F(ClientTest, PoolKeepsAtMostMaxIdlePerOrigin) {
  Server server([](const SeenRequest&) {
    Reply r;
    r.later = {{100ms, testing::response(200, "ok")}};
    return r;
  });
  Client::Options options;
  options.max_idle_per_origin = 1;
  client(options);
  auto a = std::async(std::launch::async, [&] { return get(server.url("/")); });
  auto b = std::async(std::launch::async, [&] { return get(server.url("/")); });
  ASSERT_TRUE(a.get().ok());
  ASSERT_TRUE(b.get().ok());
  ASSERT_TRUE(Server::eventually([&] { return server.closed_by_peer() == 1; }));
}

TEST_F(ClientTest, RedirectsAreFollowedWithinTheLimit) {
  Server server([](const SeenRequest& r) {
    if (r.target == "/start") return reply(302, "", {{"Location", "/next?x=1"}});
    if (r.target == "/next?x=1") return reply(200, "arrived by " + r.method);
    if (r.target == "/post") return reply(303, "", {{"Location", "/next?x=1"}});
    if (r.target == "/loop") return reply(307, "", {{"Location", "loop"}});
    return reply(404, "");
  });
  Request req;
  req.url = server.url("/start");
  req.max_redirects = 5;
  auto r = fetch(req);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "arrived by GET");
  EXPECT_EQ(r->url, server.url("/next?x=1"));

  // 303 after a POST: GET, no body, no Content-* headers.
  req.url = server.url("/post");
  req.method = "POST";
  req.body = "payload";
  req.headers = {{"Content-Type", "text/plain"}};
  r = fetch(req);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "arrived by GET");
  const auto seen = server.requests();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[3].method, "GET");
  EXPECT_FALSE(seen[3].has("content-type"));
  EXPECT_FALSE(seen[3].has("content-length"));

  // Without max_redirects the 3xx is the answer.
  Request plain;
  plain.url = server.url("/start");
  r = fetch(plain);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->header("location"), "/next?x=1");

  Request loop;
  loop.url = server.url("/loop");
  loop.max_redirects = 3;
  const auto before = server.requests().size();
  r = fetch(loop);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "too many redirects (more than 3)");
  EXPECT_EQ(server.requests().size() - before, 4u);  // the first request and three redirects
  EXPECT_EQ(client().connections_opened(), 1u);      // redirect bodies drained, one connection
}

TEST_F(ClientTest, AllowIsAskedBeforeEveryConnectionAndCanRefuse) {
  Server target([](const SeenRequest&) { return reply(200, "secret"); });
  Server bouncer([&](const SeenRequest&) {
    return reply(302, "", {{"Location", target.url("localhost", "/x")}});
  });
  std::vector<std::string> asked;
  Request req;
  req.url = bouncer.url("/");
  req.max_redirects = 5;
  std::mutex mutex;
  req.allow = [&](const Url& url,
                  const std::vector<std::string>& addresses) -> std::optional<Error> {
    std::lock_guard lock(mutex);
    std::string line = url.host + ":" + std::to_string(url.port);
    for (const auto& a : addresses) line += " " + a;
    asked.push_back(line);
    if (url.port == target.port()) {
      return Error::make(ErrorCode::kPermissionDenied, "not " + url.host);
    }
    return std::nullopt;
  };
  auto r = fetch(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message, "not localhost");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0], "127.0.0.1:" + std::to_string(bouncer.port()) + " 127.0.0.1");
  EXPECT_TRUE(asked[1].starts_with("localhost:" + std::to_string(target.port()) + " "));
  EXPECT_NE(asked[1].find("127.0.0.1"), std::string::npos) << asked[1];
  EXPECT_EQ(target.connections(), 0);

  // A pooled connection is checked too (with the address it is connected to).
  asked.clear();
  req.url = bouncer.url("/");
  req.max_redirects = 0;
  req.allow = [&](const Url&, const std::vector<std::string>& addresses) -> std::optional<Error> {
    std::lock_guard lock(mutex);
    asked.push_back(addresses.empty() ? "" : addresses[0]);
    return Error::make(ErrorCode::kPermissionDenied, "no");
  };
  r = fetch(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(asked, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(bouncer.requests().size(), 1u);
}

TEST_F(ClientTest, CredentialsAreNotForwardedToAnotherOrigin) {
  Server target([](const SeenRequest&) { return reply(200, "ok"); });
  Server bouncer([&](const SeenRequest& r) {
    if (r.target == "/same") return reply(307, "", {{"Location", "/here"}});
    if (r.target == "/here") return reply(200, "ok");
    return reply(307, "", {{"Location", target.url("/x")}});
  });
  Request req;
  req.max_redirects = 2;
  req.headers = {{"Authorization", "Bearer t"}, {"Cookie", "c=1"}, {"X-Other", "kept"}};
  req.url = bouncer.url("/same");
  ASSERT_TRUE(fetch(req).ok());
  req.url = bouncer.url("/away");
  ASSERT_TRUE(fetch(req).ok());
  const auto same = bouncer.requests();
  ASSERT_EQ(same.size(), 3u);
  EXPECT_EQ(same[1].header("authorization"), "Bearer t");
  const auto away = target.requests();
  ASSERT_EQ(away.size(), 1u);
  EXPECT_FALSE(away[0].has("authorization"));
  EXPECT_FALSE(away[0].has("cookie"));
  EXPECT_EQ(away[0].header("x-other"), "kept");
}

TEST_F(ClientTest, ResponseSizeLimit) {
  Server server([](const SeenRequest& r) {
    if (r.target == "/chunked") {
      return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       testing::chunk(std::string(60, 'a')) + testing::chunk(std::string(60, 'b')) +
                       "0\r\n\r\n",
                   {},
                   false,
                   false};
    }
    if (r.target == "/close") {
      return Reply{
          "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + std::string(150, 'c'), {}, true, false};
    }
    return reply(200, std::string(r.target == "/fits" ? 100 : 101, 'x'));
  });
  for (const char* path : {"/big", "/chunked", "/close"}) {
    Request req;
    req.url = server.url(path);
    req.max_response_bytes = 100;
    auto r = fetch(req);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
    EXPECT_EQ(r.error().message, "response larger than 100 bytes") << path;
  }
  Request fits;
  fits.url = server.url("/fits");
  fits.max_response_bytes = 100;
  auto r = fetch(fits);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body.size(), 100u);
}

TEST_F(ClientTest, DeadlineCoversTheWholeExchange) {
  Server server([](const SeenRequest&) {
    Reply r;
    // Headers at once, the body dribbles: only a deadline on the whole exchange catches it.
    r.bytes = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 50; ++i) r.later.push_back({50ms, testing::chunk("x")});
    return r;
  });
  Request req;
  req.url = server.url("/");
  req.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = fetch(req);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().message, "no complete response within 300 ms");
  EXPECT_GE(took, 280ms);
  EXPECT_LT(took, 1500ms);
}

TEST_F(ClientTest, ConnectFailureIsAHandlerError) {
  int port = 0;
  {
    Server gone([](const SeenRequest&) { return reply(200, ""); });
    port = gone.port();
  }
  auto r = get("http://127.0.0.1:" + std::to_string(port) + "/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_TRUE(r.error().message.starts_with("cannot connect to 127.0.0.1:")) << r.error().message;
}

TEST_F(ClientTest, BadRequestsAreRefusedBeforeConnecting) {
  Server server([](const SeenRequest&) { return reply(200, ""); });
  const std::vector<std::pair<std::string, std::string>> bad[] = {
      {{"X-A", "line\r\nInjected: 1"}},
      {{"Bad Name", "v"}},
      {{"Host", "evil"}},
      {{"content-length", "5"}},
      {{"Connection", "close"}},
      {{"Transfer-Encoding", "chunked"}}};
  for (const auto& headers : bad) {
    Request req;
    req.url = server.url("/");
    req.headers = headers;
    auto r = fetch(req);
    ASSERT_FALSE(r.ok()) << headers[0].first;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams) << headers[0].first;
  }
  Request req;
  req.url = server.url("/");
  req.method = "GE T";
  EXPECT_EQ(fetch(req).error().code, ErrorCode::kInvalidParams);
  req.method = "GET";
  req.url = "http://user@127.0.0.1/";
  EXPECT_EQ(fetch(req).error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(server.connections(), 0);
}

TEST_F(ClientTest, StreamingDeliversChunksAsTheyArriveAndAbortStops) {
  Server server([](const SeenRequest&) {
    Reply r;
    r.bytes =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
        "chunked\r\n\r\n" +
        testing::chunk("data: 1\n\n");
    r.later = {{100ms, testing::chunk("data: 2\n\n")}};
    r.hang = true;
    return r;
  });
  Abort abort;
  std::mutex mutex;
  std::string got;
  int status = 0;
  std::string type;
  Request req;
  req.url = server.url("/events");
  req.timeout = 0ms;
  req.on_headers = [&](int s, const std::vector<std::pair<std::string, std::string>>& headers) {
    std::lock_guard lock(mutex);
    status = s;
    for (const auto& [k, v] : headers) {
      if (k == "content-type") type = v;
    }
  };
  req.on_body = [&](std::string_view piece) {
    std::lock_guard lock(mutex);
    EXPECT_EQ(status, 200);  // headers came first
    got += piece;
    return true;
  };
  auto pending = std::async(std::launch::async, [&] { return fetch(req, abort); });
  ASSERT_TRUE(Server::eventually([&] {
    std::lock_guard lock(mutex);
    return got == "data: 1\n\ndata: 2\n\n";
  })) << got;
  EXPECT_EQ(pending.wait_for(100ms), std::future_status::timeout);  // still open
  abort();
  auto r = pending.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "aborted");
  EXPECT_EQ(type, "text/event-stream");
  abort();  // again: harmless

  // A consumer that stops: the response, without a body, and the connection is not reused.
  Request stop = req;
  stop.on_body = [](std::string_view) { return false; };
  r = fetch(stop);
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "");
  const auto opened = client().connections_opened();
  EXPECT_EQ(opened, 2u);

  // An Abort that fired before the request starts stops it at once.
  Abort early;
  early();
  r = fetch(req, early);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "aborted");
  EXPECT_EQ(client().connections_opened(), opened);
}

TEST_F(ClientTest, ShutdownStopsRequestsInFlightAndLaterOnes) {
  Server server([](const SeenRequest&) { return Reply{"", {}, false, true}; });
  auto pending = std::async(std::launch::async, [&] { return get(server.url("/")); });
  ASSERT_TRUE(Server::eventually([&] { return server.requests().size() == 1; }));
  client().shutdown();
  auto r = pending.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the daemon is stopping");
  r = get(server.url("/"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the daemon is stopping");
  EXPECT_EQ(server.connections(), 1);
}

// ---------------------------------------------------------------------------------------------
// TLS: a CA and certificates made by the test (openssl CLI), trusted through SSL_CERT_FILE.

struct Certificates {
  fs::path dir;
  std::string ca;                     ///< the test CA (PEM)
  std::string cert, key;              ///< signed by the CA for localhost and 127.0.0.1
  std::string other_cert, other_key;  ///< signed by the CA for other.invalid only
  std::string self_cert, self_key;    ///< self-signed for localhost
};

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

const Certificates& certificates() {
  static const Certificates certs = [] {
    Certificates c;
    std::string pattern = (fs::temp_directory_path() / "hearth-tls-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    c.dir = pattern;
    const std::string d = c.dir.string() + "/";
    const std::string newkey = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    EXPECT_TRUE(run("openssl req -x509" + newkey + " -keyout " + d + "ca.key -out " + d +
                    "ca.pem -days 2 -subj /CN=hearth-test-ca"));
    auto leaf = [&](const std::string& name, const std::string& cn, const std::string& san) {
      std::ofstream(d + name + ".ext")
          << "subjectAltName=" << san << "\nbasicConstraints=CA:FALSE\n"
          << "extendedKeyUsage=serverAuth\n";
      EXPECT_TRUE(run("openssl req" + newkey + " -keyout " + d + name + ".key -out " + d + name +
                      ".csr -subj /CN=" + cn));
      EXPECT_TRUE(run("openssl x509 -req -in " + d + name + ".csr -CA " + d + "ca.pem -CAkey " + d +
                      "ca.key -CAcreateserial -days 2 -out " + d + name + ".pem -extfile " + d +
                      name + ".ext"));
    };
    leaf("server", "localhost", "DNS:localhost,IP:127.0.0.1");
    leaf("other", "other.invalid", "DNS:other.invalid");
    EXPECT_TRUE(run("openssl req -x509" + newkey + " -keyout " + d + "self.key -out " + d +
                    "self.pem -days 2 -subj /CN=localhost -addext "
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"));
    c.ca = d + "ca.pem";
    c.cert = d + "server.pem";
    c.key = d + "server.key";
    c.other_cert = d + "other.pem";
    c.other_key = d + "other.key";
    c.self_cert = d + "self.pem";
    c.self_key = d + "self.key";
    return c;
  }();
  return certs;
}

class TlsTest : public ClientTest {
 protected:
  void SetUp() override {
    // Read by OpenSSL when the client loads the default verify paths, i.e. in its constructor.
    ::setenv("SSL_CERT_FILE", certificates().ca.c_str(), 1);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(certificates().dir, ec);
  }
};

Reply tls_hello(const SeenRequest& r) {
  return reply(200, "over tls " + r.header("host"));
}

TEST_F(TlsTest, TrustedCertificateByNameAndAddress) {
  Server server(tls_hello, testing::server_tls(certificates().cert, certificates().key));
  auto r = get(server.url("localhost", "/"));
  ASSERT_TRUE(r.ok()) << message(r);
  EXPECT_EQ(r->body, "over tls localhost:" + std::to_string(server.port()));
  r = get(server.url("/"));  // https://127.0.0.1: the IP subjectAltName
  ASSERT_TRUE(r.ok()) << message(r);
  // Two origins (localhost, 127.0.0.1): two connections; a third request reuses one.
  ASSERT_TRUE(get(server.url("localhost", "/")).ok());
  EXPECT_EQ(client().connections_opened(), 2u);
}

TEST_F(TlsTest, UntrustedCertificateIsRefused) {
  Server server(tls_hello, testing::server_tls(certificates().self_cert, certificates().self_key));
  auto r = get(server.url("localhost", "/"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(r.error().message.find("certificate verify failed"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("self-signed"), std::string::npos) << r.error().message;
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(TlsTest, WrongHostNameIsRefused) {
  Server server(tls_hello,
                testing::server_tls(certificates().other_cert, certificates().other_key));
  auto r = get(server.url("localhost", "/"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(r.error().message.find("hostname mismatch"), std::string::npos) << r.error().message;
  r = get(server.url("/"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("IP address mismatch"), std::string::npos) << r.error().message;
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(TlsTest, HttpsToHttpRedirectIsRefused) {
  Server plain([](const SeenRequest&) { return reply(200, "plain"); });
  Server server(
      [&](const SeenRequest&) {
        return reply(302, "", {{"Location", plain.url("/")}});
      },
      testing::server_tls(certificates().cert, certificates().key));
  Request req;
  req.url = server.url("localhost", "/");
  req.max_redirects = 5;
  auto r = fetch(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_TRUE(r.error().message.starts_with("refusing to follow a redirect from https to http"))
      << r.error().message;
  EXPECT_EQ(plain.connections(), 0);
}

}  // namespace
}  // namespace hearth::httpclient
