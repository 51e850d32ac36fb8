#include "egress/proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/pipes.hpp"

namespace hearth::egress {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// Upper bound for anything the tests wait for; only a broken proxy gets near it.
constexpr auto kGenerous = 10s;

void set_timeouts(const Fd& fd) {
  timeval tv{static_cast<time_t>(std::chrono::seconds(kGenerous).count()), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/// A listening TCP socket on 127.0.0.1 with a port chosen by the kernel.
Fd listen_local(std::uint16_t& port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(fd.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::listen(fd.get(), 64), 0);
  socklen_t length = sizeof address;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

/// A port on 127.0.0.1 where nothing listens.
std::uint16_t closed_port() {
  std::uint16_t port = 0;
  listen_local(port);  // closed at once
  return port;
}

/// A blocking client socket (with generous timeouts) connected to 127.0.0.1:port, or none.
Fd connect_local(std::uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  set_timeouts(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return Fd();
  return fd;
}

bool send_all(const Fd& fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Reads until `done(received)` holds, the peer closes, or an error (including the timeout).
std::string read_while(const Fd& fd, const std::function<bool(const std::string&)>& done) {
  std::string out;
  char buffer[4096];
  while (!done(out)) {
    ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

std::string read_until(const Fd& fd, std::string_view marker) {
  return read_while(fd, [&](const std::string& s) { return s.find(marker) != std::string::npos; });
}
std::string read_exact(const Fd& fd, std::size_t n) {
  return read_while(fd, [&](const std::string& s) { return s.size() >= n; });
}
std::string read_to_eof(const Fd& fd) {
  return read_while(fd, [](const std::string&) { return false; });
}

/// True when the peer closed (EOF or reset) rather than the read timing out.
bool peer_closed(const Fd& fd) {
  char buffer[4096];
  while (true) {
    ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET || errno == EPIPE;
  }
}

/// A test upstream server: each accepted connection is handed to `handler` on its own thread.
class Upstream {
 public:
  using Handler = std::function<void(const Fd& fd)>;

  explicit Upstream(Handler handler) : handler_(std::move(handler)) {
    fd_ = listen_local(port_);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Upstream() {
    stopping_ = true;
    acceptor_.join();
    for (auto& t : workers_) t.join();
  }
  std::uint16_t port() const { return port_; }
  std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      auto client = std::make_shared<Fd>(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!*client) continue;
      set_timeouts(*client);
      ++accepted_;
      workers_.emplace_back([this, client] { handler_(*client); });
    }
  }

  Handler handler_;
  Fd fd_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

void echo(const Fd& fd) {
  char buffer[16 * 1024];
  while (true) {
    ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    if (!send_all(fd, std::string_view(buffer, static_cast<std::size_t>(n)))) break;
  }
  ::shutdown(fd.get(), SHUT_WR);
}

/// Reads everything up to the client's half-close, then answers "got:<it>".
void collect_then_answer(const Fd& fd) {
  std::string all = read_to_eof(fd);
  send_all(fd, "got:" + all);
}

/// A minimal HTTP origin: records one request (head and Content-Length body), answers "hello".
class HttpOrigin {
 public:
  HttpOrigin()
      : server_([this](const Fd& fd) {
          std::string data = read_until(fd, "\r\n\r\n");
          auto head_end = data.find("\r\n\r\n");
          std::size_t body_length = 0;
          if (auto cl = data.find("Content-Length: "); cl != std::string::npos && cl < head_end) {
            body_length = std::stoul(data.substr(cl + 16));
          }
          if (head_end != std::string::npos && data.size() < head_end + 4 + body_length) {
            data += read_exact(fd, head_end + 4 + body_length - data.size());
          }
          {
            std::lock_guard lock(mu_);
            request_ = data;
          }
          send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
          ::shutdown(fd.get(), SHUT_WR);
          read_to_eof(fd);
        }) {}

  std::uint16_t port() const { return server_.port(); }
  std::string request() const {
    std::lock_guard lock(mu_);
    return request_;
  }

 private:
  mutable std::mutex mu_;
  std::string request_;
  Upstream server_;
};

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  void TearDown() override {
    if (proxy_) proxy_->stop();
    proxy_.reset();
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }

  /// Starts a proxy allowing `entries`, with the fake resolver; returns its port.
  std::uint16_t start_proxy(const std::vector<std::string>& entries,
                            const std::function<void(ProxyOptions&)>& adjust = {}) {
    auto list = AllowList::parse(entries);
    EXPECT_TRUE(list.ok()) << (list.ok() ? "" : list.error().message);
    ProxyOptions options;
    if (list.ok()) options.allow = std::move(list).value();
    options.on_event = [this](const ProxyEvent& event) {
      std::lock_guard lock(mu_);
      events_.push_back(event);
      cv_.notify_all();
    };
    options.resolve = [this](std::string host) { return fake_resolve(std::move(host)); };
    if (adjust) adjust(options);
    std::uint16_t port = 0;
    auto proxy = Proxy::start(ioc_.get_executor(), listen_local(port), std::move(options));
    EXPECT_TRUE(proxy.ok()) << (proxy.ok() ? "" : proxy.error().message);
    if (proxy.ok()) proxy_ = std::move(proxy).value();
    return port;
  }

  /// "localhost" and "rebind.test" resolve to 127.0.0.1, "hang.test" never answers, anything
  /// else fails. Every name asked for is recorded.
  asio::awaitable<Result<std::vector<asio::ip::address>>> fake_resolve(std::string host) {
    {
      std::lock_guard lock(mu_);
      resolved_.push_back(host);
    }
    if (host == "localhost" || host == "rebind.test") {
      co_return std::vector<asio::ip::address>{asio::ip::make_address("127.0.0.1")};
    }
    if (host == "hang.test") {
      asio::steady_timer never(co_await asio::this_coro::executor, std::chrono::hours(1));
      co_await never.async_wait(asio::use_awaitable);
    }
    co_return Error::make(ErrorCode::kHandlerError, "Host not found");
  }

  std::vector<std::string> resolved() {
    std::lock_guard lock(mu_);
    return resolved_;
  }

  /// Waits (generously) for at least `count` events and returns them all.
  std::vector<ProxyEvent> events(std::size_t count = 1) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, kGenerous, [&] { return events_.size() >= count; });
    return events_;
  }

  template <class Predicate>
  bool eventually(Predicate predicate) {
    auto deadline = std::chrono::steady_clock::now() + kGenerous;
    while (!predicate()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  /// Sends a CONNECT and returns the proxy's answer head.
  std::string connect_through(const Fd& fd, const std::string& target) {
    send_all(fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
    return read_until(fd, "\r\n\r\n");
  }

  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      ioc_.get_executor()};
  std::vector<std::thread> threads_;
  std::shared_ptr<Proxy> proxy_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ProxyEvent> events_;
  std::vector<std::string> resolved_;
};

constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";

TEST_F(ProxyTest, AllowedConnectTunnelsToUpstream) {
  Upstream upstream(echo);
  auto port = start_proxy({"localhost:" + std::to_string(upstream.port())});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  EXPECT_EQ(connect_through(fd, "localhost:" + std::to_string(upstream.port())), kEstablished);
  ASSERT_TRUE(send_all(fd, "ping"));
  EXPECT_EQ(read_exact(fd, 4), "ping");
  ::shutdown(fd.get(), SHUT_WR);
  EXPECT_EQ(read_to_eof(fd), "");  // the echo server's end arrives through the proxy
  fd.reset();

  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].host, "localhost");
  EXPECT_EQ(seen[0].port, upstream.port());
  EXPECT_TRUE(seen[0].allowed);
  EXPECT_EQ(seen[0].status, 200);
  EXPECT_EQ(seen[0].detail, "CONNECT tunnel to " + upstream.authority());
  EXPECT_EQ(resolved(), std::vector<std::string>{"localhost"});
  EXPECT_TRUE(eventually([&] { return proxy_->connection_count() == 0; }));
}

TEST_F(ProxyTest, ConnectRelaysEarlyDataAndHalfClose) {
  Upstream upstream(collect_then_answer);
  auto port = start_proxy({upstream.authority()});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  // Head and first bytes in one write, as a client does when it does not wait for the 200.
  ASSERT_TRUE(send_all(fd, "CONNECT " + upstream.authority() + " HTTP/1.1\r\n\r\nearly+"));
  EXPECT_EQ(read_exact(fd, kEstablished.size()), kEstablished);
  ASSERT_TRUE(send_all(fd, "late"));
  ::shutdown(fd.get(), SHUT_WR);
  // The upstream answers only after seeing our end of stream: the half-close went through and
  // the other direction stayed open.
  EXPECT_EQ(read_to_eof(fd), "got:early+late");
  fd.reset();
  EXPECT_TRUE(resolved().empty());  // an IP literal is never resolved
}

TEST_F(ProxyTest, ConcurrentTunnels) {
  Upstream upstream(echo);
  auto port = start_proxy({upstream.authority()});
  constexpr int kClients = 12;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  clients.reserve(kClients);
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      Fd fd = connect_local(port);
      if (!fd) return;
      if (connect_through(fd, upstream.authority()) == kEstablished) {
        std::string payload(64 * 1024 + i, static_cast<char>('a' + i));
        std::thread writer([&] {
          send_all(fd, payload);
          ::shutdown(fd.get(), SHUT_WR);
        });
        std::string echoed = read_to_eof(fd);
        writer.join();
        if (echoed == payload) ++ok;
      }
      fd.reset();
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients);
  EXPECT_EQ(events(kClients).size(), static_cast<std::size_t>(kClients));
}

TEST_F(ProxyTest, DeniedConnectIsRefusedWithoutResolving) {
  auto port = start_proxy({"example.com", "localhost:1"});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_TRUE(send_all(fd, "CONNECT denied.test:443 HTTP/1.1\r\n\r\n"));
  std::string answer = read_to_eof(fd);
  fd.reset();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(answer.find("denied.test:443 is not allowed by networkAccess"), std::string::npos)
      << answer;

  fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  EXPECT_TRUE(connect_through(fd, "localhost:2").starts_with("HTTP/1.1 403"));  // wrong port
  fd.reset();

  auto seen = events(2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].host, "denied.test");
  EXPECT_EQ(seen[0].port, 443);
  EXPECT_FALSE(seen[0].allowed);
  EXPECT_EQ(seen[0].status, 403);
  EXPECT_EQ(seen[0].detail, "not allowed by networkAccess");
  EXPECT_EQ(seen[1].host, "localhost");
  EXPECT_FALSE(seen[1].allowed);
  EXPECT_TRUE(resolved().empty());
}

TEST_F(ProxyTest, NameResolvingToLoopbackIsRefused) {
  auto port = start_proxy({"rebind.test"});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  std::string answer = connect_through(fd, "rebind.test:" + std::to_string(closed_port()));
  fd.reset();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403")) << answer;
  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].allowed);
  EXPECT_NE(seen[0].detail.find("local addresses"), std::string::npos) << seen[0].detail;
}

TEST_F(ProxyTest, ResolutionAndConnectionFailuresAre502) {
  auto refused = closed_port();
  auto port = start_proxy({"nxdomain.test", "127.0.0.1:" + std::to_string(refused)});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  EXPECT_TRUE(connect_through(fd, "nxdomain.test:443").starts_with("HTTP/1.1 502 Bad Gateway"));
  fd.reset();
  fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  EXPECT_TRUE(connect_through(fd, "127.0.0.1:" + std::to_string(refused))
                  .starts_with("HTTP/1.1 502 Bad Gateway"));
  fd.reset();
  auto seen = events(2);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_TRUE(seen[0].allowed);
  EXPECT_EQ(seen[0].status, 502);
  EXPECT_NE(seen[0].detail.find("Host not found"), std::string::npos) << seen[0].detail;
  EXPECT_EQ(seen.back().status, 502);
  EXPECT_NE(seen.back().detail.find("failed"), std::string::npos) << seen.back().detail;
}

TEST_F(ProxyTest, ResolutionOverConnectTimeoutIs504) {
  auto port = start_proxy({"hang.test"}, [](ProxyOptions& o) { o.connect_timeout = 100ms; });
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  EXPECT_TRUE(connect_through(fd, "hang.test:443").starts_with("HTTP/1.1 504 Gateway Timeout"));
  fd.reset();
  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].status, 504);
}

TEST_F(ProxyTest, AbsoluteFormRequestIsForwardedInOriginForm) {
  HttpOrigin origin;
  auto port = start_proxy({"127.0.0.1:" + std::to_string(origin.port())});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  const std::string authority = "127.0.0.1:" + std::to_string(origin.port());
  ASSERT_TRUE(send_all(fd, "GET http://" + authority +
                               "/path?q=1 HTTP/1.1\r\n"
                               "Host: fronted.example\r\n"
                               "Proxy-Authorization: Basic eDp5\r\n"
                               "Proxy-Connection: keep-alive\r\n"
                               "Connection: keep-alive, X-Hop\r\n"
                               "X-Hop: 1\r\n"
                               "X-Keep: 2\r\n"
                               "\r\n"));
  std::string answer = read_to_eof(fd);
  fd.reset();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\nhello")) << answer;
  EXPECT_EQ(origin.request(), "GET /path?q=1 HTTP/1.1\r\nHost: " + authority +
                                  "\r\nX-Keep: 2\r\nConnection: close\r\n\r\n");
  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].allowed);
  EXPECT_EQ(seen[0].status, 0);
  EXPECT_EQ(seen[0].detail, "GET forwarded to " + authority);
}

TEST_F(ProxyTest, AbsoluteFormRequestBodyIsRelayed) {
  HttpOrigin origin;
  auto port = start_proxy({"localhost"});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_TRUE(send_all(fd, "POST http://localhost:" + std::to_string(origin.port()) +
                               "/submit HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello"));
  ASSERT_TRUE(send_all(fd, " world"));
  std::string answer = read_to_eof(fd);
  fd.reset();
  EXPECT_TRUE(answer.ends_with("hello")) << answer;
  EXPECT_EQ(origin.request(),
            "POST /submit HTTP/1.1\r\nHost: localhost:" + std::to_string(origin.port()) +
                "\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world");
}

TEST_F(ProxyTest, DeniedAbsoluteFormRequestIs403) {
  HttpOrigin origin;
  auto port = start_proxy({"localhost:1"});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_TRUE(send_all(fd, "GET http://elsewhere.test/ HTTP/1.1\r\nHost: elsewhere.test\r\n\r\n"));
  std::string answer = read_to_eof(fd);
  fd.reset();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("elsewhere.test:80 is not allowed by networkAccess"), std::string::npos);
  EXPECT_TRUE(resolved().empty());
  EXPECT_EQ(origin.request(), "");
  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].host, "elsewhere.test");
  EXPECT_EQ(seen[0].port, 80);
  EXPECT_FALSE(seen[0].allowed);
}

TEST_F(ProxyTest, MalformedAndNonProxyRequestsAreRefused) {
  auto port = start_proxy({"localhost"});
  struct Case {
    std::string request;
    std::string status_line;
  };
  const std::vector<Case> cases = {
      {"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"},
      {"garbage\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"},
      {"GET http://localhost/ HTTP/1.1\r\nBad Header\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"},
      {"GET http://localhost/ HTTP/2.0\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported\r\n"},
      {"GET http://localhost/ HTTP/1.1\r\nX-Big: " + std::string(20000, 'x') + "\r\n\r\n",
       "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
  };
  for (const auto& c : cases) {
    Fd fd = connect_local(port);
    ASSERT_TRUE(fd.valid());
    ASSERT_TRUE(send_all(fd, c.request));
    std::string answer = read_to_eof(fd);
    fd.reset();
    EXPECT_TRUE(answer.starts_with(c.status_line)) << c.request.substr(0, 60) << " -> " << answer;
  }
  auto seen = events(cases.size());
  ASSERT_EQ(seen.size(), cases.size());
  for (const auto& event : seen) {
    EXPECT_FALSE(event.allowed);
    EXPECT_TRUE(event.host.empty());
  }
  EXPECT_TRUE(resolved().empty());
}

TEST_F(ProxyTest, StopClosesLiveTunnelsAndTheListener) {
  Upstream upstream(echo);
  auto port = start_proxy({upstream.authority()});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(connect_through(fd, upstream.authority()), kEstablished);
  ASSERT_TRUE(send_all(fd, "x"));
  ASSERT_EQ(read_exact(fd, 1), "x");
  EXPECT_EQ(proxy_->connection_count(), 1u);
  ASSERT_EQ(events().size(), 1u);

  proxy_->stop();
  proxy_->stop();  // idempotent
  EXPECT_TRUE(peer_closed(fd));
  fd.reset();
  EXPECT_TRUE(eventually([&] { return proxy_->connection_count() == 0; }));
  EXPECT_TRUE(eventually([&] { return !connect_local(port).valid(); }));
  std::lock_guard lock(mu_);
  EXPECT_EQ(events_.size(), 1u);  // nothing reported after stop()
}

TEST_F(ProxyTest, IdleTunnelIsClosed) {
  Upstream upstream(echo);
  auto port = start_proxy({upstream.authority()}, [](ProxyOptions& o) { o.idle_timeout = 100ms; });
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(connect_through(fd, upstream.authority()), kEstablished);
  EXPECT_TRUE(peer_closed(fd));
  fd.reset();
}

TEST_F(ProxyTest, ConnectionsOverTheLimitGet503) {
  auto port = start_proxy({"localhost"}, [](ProxyOptions& o) { o.max_connections = 1; });
  Fd first = connect_local(port);
  ASSERT_TRUE(first.valid());
  ASSERT_TRUE(eventually([&] { return proxy_->connection_count() == 1; }));
  Fd second = connect_local(port);
  ASSERT_TRUE(second.valid());
  std::string answer = read_to_eof(second);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << answer;
  second.reset();
  first.reset();
  auto seen = events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].status, 503);
}

TEST_F(ProxyTest, StartRefusesWhatIsNotAListeningTcpSocket) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  const int pipe_read = pipe->at(0).get();
  auto not_socket = Proxy::start(ioc_.get_executor(), std::move(pipe->at(0)), {});
  ASSERT_FALSE(not_socket.ok());
  EXPECT_EQ(not_socket.error().message, "egress proxy: listen fd is not a stream socket");
  EXPECT_EQ(::fcntl(pipe_read, F_GETFD), -1);  // taken over and closed

  Fd unbound(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_FALSE(Proxy::start(ioc_.get_executor(), std::move(unbound), {}).ok());

  Fd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  EXPECT_FALSE(Proxy::start(ioc_.get_executor(), std::move(udp), {}).ok());

  EXPECT_FALSE(Proxy::start(ioc_.get_executor(), Fd(), {}).ok());

  std::uint16_t port = 0;
  Fd listening = listen_local(port);
  const int listening_fd = listening.get();
  ProxyOptions bad;
  bad.max_connections = 0;
  auto refused = Proxy::start(ioc_.get_executor(), std::move(listening), std::move(bad));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(::fcntl(listening_fd, F_GETFD), -1);  // the fd was taken over and closed
}

TEST_F(ProxyTest, SystemResolverByDefault) {
  Upstream upstream(echo);
  auto port = start_proxy({"localhost:" + std::to_string(upstream.port())},
                          [](ProxyOptions& o) { o.resolve = nullptr; });
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  // getaddrinfo may list ::1 first; the proxy then falls back to 127.0.0.1.
  EXPECT_EQ(connect_through(fd, "localhost:" + std::to_string(upstream.port())), kEstablished);
  ASSERT_TRUE(send_all(fd, "sys"));
  EXPECT_EQ(read_exact(fd, 3), "sys");
  fd.reset();
  EXPECT_TRUE(resolved().empty());  // the fake resolver was not involved
}

TEST_F(ProxyTest, ServesAnIPv6ListeningSocket) {
  Fd fd6(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd6.valid());
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  if (::bind(fd6.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  ASSERT_EQ(::listen(fd6.get(), 16), 0);
  socklen_t length = sizeof address;
  ::getsockname(fd6.get(), reinterpret_cast<sockaddr*>(&address), &length);

  Upstream upstream(echo);
  ProxyOptions options;
  options.allow = AllowList::parse({upstream.authority()}).value();
  auto proxy = Proxy::start(ioc_.get_executor(), std::move(fd6), std::move(options));
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;

  Fd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  set_timeouts(fd);
  ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(connect_through(fd, upstream.authority()), kEstablished);
  ASSERT_TRUE(send_all(fd, "six"));
  EXPECT_EQ(read_exact(fd, 3), "six");
  fd.reset();
  (*proxy)->stop();
}

TEST_F(ProxyTest, DestroyingTheHandleStops) {
  Upstream upstream(echo);
  auto port = start_proxy({upstream.authority()});
  Fd fd = connect_local(port);
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(connect_through(fd, upstream.authority()), kEstablished);
  proxy_.reset();
  EXPECT_TRUE(peer_closed(fd));
  fd.reset();
}

}  // namespace
}  // namespace hearth::egress
