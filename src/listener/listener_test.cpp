#include "listener/listener.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/pipes.hpp"

namespace hearth::listener {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

/// Polls `condition` for up to five seconds.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

/// A blocking client socket with a receive timeout.
Fd connect_to(std::uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv{5, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Fd();
  return fd;
}

/// What the peer sends until it closes ("" for an immediate close), or "<timeout>".
std::string read_to_eof(const Fd& fd) {
  std::string out;
  char buffer[256];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) return out;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? "<timeout>" : out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

/// A connection that greets its peer with "hi\n" and then waits for the peer's end or stop.
class Echo : public Connection, public std::enable_shared_from_this<Echo> {
 public:
  Echo(std::shared_ptr<Listener> listener, tcp::socket socket, std::atomic<int>& stops)
      : listener_(std::move(listener)), socket_(std::move(socket)), stops_(stops) {}

  void start() {
    id_ = listener_->add(shared_from_this());
    if (id_ == 0) return;  // stopping: the socket closes with this object
    asio::co_spawn(socket_.get_executor(), run(shared_from_this()), asio::detached);
  }

  void request_stop() override {
    ++stops_;
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      boost::system::error_code ignored;
      self->socket_.close(ignored);
    });
  }

  std::uint64_t id() const { return id_; }

 private:
  static asio::awaitable<void> run(std::shared_ptr<Echo> self) {
    auto [write_ec, written] = co_await asio::async_write(
        self->socket_, asio::buffer(std::string_view("hi\n")), asio::as_tuple(asio::use_awaitable));
    (void)written;
    if (!write_ec) {
      char byte = 0;
      auto [read_ec, n] = co_await self->socket_.async_read_some(
          asio::buffer(&byte, 1), asio::as_tuple(asio::use_awaitable));
      (void)read_ec;
      (void)n;
    }
    boost::system::error_code ignored;
    self->socket_.close(ignored);
    self->listener_->remove(self->id_);
  }

  std::shared_ptr<Listener> listener_;
  tcp::socket socket_;
  std::atomic<int>& stops_;
  std::uint64_t id_ = 0;
};

/// A Listener on 127.0.0.1:0, run by two I/O threads, serving Echo connections.
class ListenerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (listener_) listener_->stop();
    work_.reset();
    for (auto& t : threads_) t.join();
  }

  /// Binds, starts with `handlers` (serve filled in when empty) and runs the io_context.
  std::uint16_t start(std::size_t max_connections, Handlers handlers = {}) {
    Options options;
    options.max_connections = max_connections;
    options.log = [this](std::string_view line) {
      std::lock_guard lock(mu_);
      log_.emplace_back(line);
    };
    listener_ = Listener::make(ioc_.get_executor(), options);
    auto port = listener_->bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    EXPECT_TRUE(port.ok()) << port.error().message;
    if (!handlers.serve) {
      handlers.serve = [this, weak = std::weak_ptr<Listener>(listener_)](tcp::socket socket) {
        ++served_;
        std::make_shared<Echo>(weak.lock(), std::move(socket), stops_)->start();
      };
    }
    listener_->start(std::move(handlers));
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
    return port.ok() ? *port : 0;
  }

  bool logged(std::string_view needle) {
    std::lock_guard lock(mu_);
    for (const auto& line : log_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(ioc_)};
  std::vector<std::thread> threads_;
  std::shared_ptr<Listener> listener_;
  std::atomic<int> served_{0};
  std::atomic<int> stops_{0};
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(ListenerTest, BindsAFreePortAndServesConnectionsOnTheirOwnStrands) {
  const std::uint16_t port = start(8);
  ASSERT_NE(port, 0);
  Fd a = connect_to(port);
  Fd b = connect_to(port);
  ASSERT_TRUE(a && b);
  char greeting[3] = {};
  EXPECT_EQ(::recv(a.get(), greeting, 3, MSG_WAITALL), 3);
  EXPECT_EQ(::recv(b.get(), greeting, 3, MSG_WAITALL), 3);
  EXPECT_EQ(std::string(greeting, 3), "hi\n");
  EXPECT_EQ(listener_->connection_count(), 2U);
  a.reset();
  EXPECT_TRUE(eventually([&] { return listener_->connection_count() == 1; }));
}

TEST_F(ListenerTest, BindErrorsAreValues) {
  const std::uint16_t port = start(8);
  auto second = Listener::make(ioc_.get_executor(), {});
  auto in_use = second->bind(tcp::endpoint(asio::ip::address_v4::loopback(), port), "here:1");
  ASSERT_FALSE(in_use.ok());
  EXPECT_EQ(in_use.error().message.rfind("cannot bind here:1: ", 0), 0U) << in_use.error().message;
  auto again = listener_->bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  EXPECT_FALSE(again.ok());
}

TEST_F(ListenerTest, TheCapRefusesNewConnectionsUntilOneEnds) {
  std::atomic<int> refused{0};
  Handlers handlers;
  handlers.refuse = [&](tcp::socket& socket, Limit limit) {
    EXPECT_EQ(limit, Limit::kConnections);
    ++refused;
    boost::system::error_code ec;
    asio::write(socket, asio::buffer(std::string_view("busy\n")), ec);
  };
  const std::uint16_t port = start(2, std::move(handlers));
  Fd a = connect_to(port);
  Fd b = connect_to(port);
  ASSERT_TRUE(eventually([&] { return listener_->connection_count() == 2; }));
  Fd c = connect_to(port);
  EXPECT_EQ(read_to_eof(c), "busy\n");  // refused, then closed by the listener
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(served_, 2);
  EXPECT_EQ(listener_->connection_count(), 2U);

  // Freed: a connection that ends gives its place back.
  a.reset();
  ASSERT_TRUE(eventually([&] { return listener_->connection_count() == 1; }));
  Fd d = connect_to(port);
  char greeting[3] = {};
  EXPECT_EQ(::recv(d.get(), greeting, 3, MSG_WAITALL), 3);
  EXPECT_EQ(listener_->connection_count(), 2U);
  EXPECT_EQ(refused, 1);
}

TEST_F(ListenerTest, MakeRoomAdmitsAndTheOwnerLimitIsApplied) {
  std::atomic<bool> owner_full{false};
  std::vector<Limit> limits;
  std::mutex limits_mu;
  std::atomic<bool> room{true};
  Handlers handlers;
  handlers.owner_limit = [&] { return owner_full.load(); };
  handlers.make_room = [&](Limit limit) {
    std::lock_guard lock(limits_mu);
    limits.push_back(limit);
    return room.load();
  };
  std::atomic<int> refused{0};
  handlers.refuse = [&](tcp::socket&, Limit) { ++refused; };
  const std::uint16_t port = start(1, std::move(handlers));
  Fd a = connect_to(port);
  ASSERT_TRUE(eventually([&] { return listener_->connection_count() == 1; }));
  // At the cap, room made: admitted beyond the cap.
  Fd b = connect_to(port);
  ASSERT_TRUE(eventually([&] { return served_ == 2; }));
  // At the cap, no room: refused.
  room = false;
  Fd c = connect_to(port);
  EXPECT_EQ(read_to_eof(c), "");
  EXPECT_EQ(refused, 1);
  // Under the cap but at the owner's limit.
  a.reset();
  b.reset();
  ASSERT_TRUE(eventually([&] { return listener_->connection_count() == 0; }));
  owner_full = true;
  Fd d = connect_to(port);
  EXPECT_EQ(read_to_eof(d), "");
  EXPECT_EQ(refused, 2);
  std::lock_guard lock(limits_mu);
  EXPECT_EQ(limits, (std::vector<Limit>{Limit::kConnections, Limit::kConnections, Limit::kOwner}));
}

TEST_F(ListenerTest, StopClosesEveryConnectionAndTheListeningSocket) {
  const std::uint16_t port = start(16);
  std::vector<Fd> clients;
  clients.reserve(5);
  for (int i = 0; i < 5; ++i) clients.push_back(connect_to(port));
  ASSERT_TRUE(eventually([&] { return listener_->connection_count() == 5; }));
  EXPECT_EQ(listener_->live().size(), 5U);
  listener_->stop();
  listener_->stop();  // idempotent
  EXPECT_TRUE(listener_->stopped());
  for (auto& client : clients) EXPECT_EQ(read_to_eof(client), "hi\n");
  EXPECT_EQ(stops_, 5);
  EXPECT_TRUE(eventually([&] { return listener_->connection_count() == 0; }));
  EXPECT_TRUE(eventually([&] { return logged("accept loop ended"); }));
  EXPECT_FALSE(connect_to(port));  // nothing listens any more
  // A connection registered after stop() is refused.
  EXPECT_EQ(listener_->add(std::make_shared<Echo>(listener_, tcp::socket(ioc_), stops_)), 0U);
  // Once the connections are gone the io_context runs out of work.
  work_.reset();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

TEST_F(ListenerTest, AdoptsAListeningSocketAndRefusesAnythingElse) {
  auto listener = Listener::make(ioc_.get_executor(), {});
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  auto refused = listener->adopt(std::move(pipe->at(0)));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "listen fd is not a stream socket");
  Fd unbound(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(listener->adopt(std::move(unbound)).error().message, "listen fd is not listening");
  EXPECT_FALSE(listener->adopt(Fd()).ok());

  // A listening socket made elsewhere, not close-on-exec: adopt() makes it so.
  tcp::acceptor made(ioc_, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  const std::uint16_t port = made.local_endpoint().port();
  Fd fd(made.release());
  ASSERT_EQ(::fcntl(fd.get(), F_SETFD, 0), 0);
  const int raw = fd.get();
  ASSERT_TRUE(listener->adopt(std::move(fd)).ok());
  EXPECT_NE(::fcntl(raw, F_GETFD) & FD_CLOEXEC, 0);

  std::atomic<int> served{0};
  Handlers handlers;
  handlers.serve = [&](tcp::socket socket) {
    ++served;
    boost::system::error_code ec;
    asio::write(socket, asio::buffer(std::string_view("ok")), ec);
  };
  listener->start(std::move(handlers));
  threads_.emplace_back([this] { ioc_.run(); });
  Fd client = connect_to(port);
  EXPECT_EQ(read_to_eof(client), "ok");
  EXPECT_EQ(served, 1);
  listener->stop();
}

}  // namespace
}  // namespace hearth::listener
