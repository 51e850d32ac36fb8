#include "listener/listener.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hearth::listener {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
/// Back-off after an accept error such as EMFILE, so the loop does not spin on a full fd table.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

std::string endpoint_text(const tcp::endpoint& endpoint) {
  auto address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

}  // namespace

Listener::Listener(asio::any_io_executor executor, Options options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      acceptor_(asio::make_strand(executor_)) {}

std::shared_ptr<Listener> Listener::make(asio::any_io_executor executor, Options options) {
  return std::shared_ptr<Listener>(new Listener(std::move(executor), std::move(options)));
}

Result<std::uint16_t> Listener::bind(const tcp::endpoint& endpoint, std::string_view name) {
  const std::string where = name.empty() ? endpoint_text(endpoint) : std::string(name);
  auto fail = [](std::string message) {
    return Error::make(ErrorCode::kInternalError, std::move(message));
  };
  if (open_) return fail("already listening");
  error_code ec;
  if (acceptor_.open(endpoint.protocol(), ec); ec) {
    return fail("cannot open " + where + ": " + ec.message());
  }
  if (acceptor_.set_option(asio::socket_base::reuse_address(true), ec); ec) {
    error_code ignored;
    acceptor_.close(ignored);
    return fail("cannot set SO_REUSEADDR on " + where + ": " + ec.message());
  }
  if (acceptor_.bind(endpoint, ec); ec) {
    error_code ignored;
    acceptor_.close(ignored);
    return fail("cannot bind " + where + ": " + ec.message());
  }
  if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
    error_code ignored;
    acceptor_.close(ignored);
    return fail("cannot listen on " + where + ": " + ec.message());
  }
  auto bound = acceptor_.local_endpoint(ec);
  if (ec) {
    error_code ignored;
    acceptor_.close(ignored);
    return fail("cannot read the bound port of " + where + ": " + ec.message());
  }
  open_ = true;
  return bound.port();
}

Status Listener::adopt(Fd fd) {
  auto fail = [](std::string message) {
    return Error::make(ErrorCode::kInvalidParams, std::move(message));
  };
  if (open_) return fail("already listening");
  if (!fd) return fail("invalid listen fd");
  int type = 0;
  socklen_t length = sizeof type;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM) {
    return fail("listen fd is not a stream socket");
  }
  int protocol = 0;
  length = sizeof protocol;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PROTOCOL, &protocol, &length) != 0 ||
      protocol != IPPROTO_TCP) {
    return fail("listen fd is not a TCP socket");
  }
  int listening = 0;
  length = sizeof listening;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 ||
      listening == 0) {
    return fail("listen fd is not listening");
  }
  sockaddr_storage address{};
  length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      (address.ss_family != AF_INET && address.ss_family != AF_INET6)) {
    return fail("listen fd is not an IPv4 or IPv6 socket");
  }
  // The daemon spawns children: a listener must not leak into them.
  if (int flags = ::fcntl(fd.get(), F_GETFD);
      flags < 0 || ::fcntl(fd.get(), F_SETFD, flags | FD_CLOEXEC) < 0) {
    return fail("cannot set close-on-exec on the listen fd");
  }
  error_code ec;
  acceptor_.assign(address.ss_family == AF_INET ? tcp::v4() : tcp::v6(), fd.get(), ec);
  if (ec) return fail("cannot adopt the listen fd: " + ec.message());
  fd.release();  // the acceptor owns it now
  open_ = true;
  return {};
}

void Listener::start(Handlers handlers) {
  if (!open_ || started_) {
    log(started_ ? "start() called twice: ignored" : "start() before a listening socket: ignored");
    return;
  }
  started_ = true;
  asio::co_spawn(acceptor_.get_executor(), accept_loop(shared_from_this(), std::move(handlers)),
                 asio::detached);
}

asio::any_io_executor Listener::connection_strand() const {
  // Over the io_context's own executor when that is what the listener runs on: a strand over
  // the type-erased executor would erase every handler's dispatch a second time.
  if (const auto* io = executor_.target<asio::io_context::executor_type>()) {
    return asio::make_strand(*io);
  }
  return asio::make_strand(executor_);
}

asio::awaitable<void> Listener::accept_loop(std::shared_ptr<Listener> self, Handlers handlers) {
  asio::steady_timer backoff(self->acceptor_.get_executor());
  while (!self->stopped_) {
    bool back_off = false;
    try {
      auto [ec, socket] =
          co_await self->acceptor_.async_accept(self->connection_strand(), kUseTuple);
      if (ec) {
        if (ec == asio::error::operation_aborted || self->stopped_ || !self->acceptor_.is_open()) {
          break;
        }
        self->log("accept failed: " + ec.message());
        back_off = true;  // EMFILE, ENOBUFS, ...: retry shortly
      } else if (self->stopped_) {
        error_code ignored;
        socket.close(ignored);
        break;
      } else {
        self->admit(std::move(socket), handlers);
      }
    } catch (const std::exception& e) {
      // Resource exhaustion setting a connection up: drop it, keep accepting.
      self->log(std::string("cannot set up a connection: ") + e.what());
      back_off = true;
    }
    if (back_off) {
      backoff.expires_after(kAcceptBackoff);
      auto [wait_ec] = co_await backoff.async_wait(kUseTuple);
      (void)wait_ec;
    }
  }
  error_code ignored;
  self->acceptor_.close(ignored);
  self->log("accept loop ended");
}

void Listener::admit(tcp::socket socket, const Handlers& handlers) {
  // Only this loop adds connections, so the count cannot grow between this check and the add.
  std::optional<Limit> limit;
  if (connection_count() >= options_.max_connections) {
    limit = Limit::kConnections;
  } else if (handlers.owner_limit && handlers.owner_limit()) {
    limit = Limit::kOwner;
  }
  if (limit && !(handlers.make_room && handlers.make_room(*limit))) {
    if (handlers.refuse) handlers.refuse(socket, *limit);
    error_code ignored;
    socket.close(ignored);
    return;
  }
  handlers.serve(std::move(socket));
}

void Listener::stop() {
  if (stopped_.exchange(true)) return;
  asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
    error_code ignored;
    self->acceptor_.close(ignored);
  });
  // add() refuses from now on (it checks under the lock live() takes), so none slips past.
  for (auto& connection : live()) connection->request_stop();
}

std::vector<std::shared_ptr<Connection>> Listener::live() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu_);
  out.reserve(connections_.size());
  for (const auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) out.push_back(std::move(connection));
  }
  return out;
}

std::uint64_t Listener::add(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mu_);
  // Checked under the lock stop() takes to snapshot the set, so no connection slips past it.
  if (stopped_) return 0;
  const std::uint64_t id = next_id_++;
  connections_.emplace(id, connection);
  return id;
}

void Listener::remove(std::uint64_t id) {
  std::lock_guard lock(mu_);
  connections_.erase(id);
}

std::size_t Listener::connection_count() const {
  std::lock_guard lock(mu_);
  return connections_.size();
}

}  // namespace hearth::listener
