#include "egress/proxy.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>

#include "egress/proxy_request.hpp"
#include "listener/listener.hpp"

namespace hearth::egress {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Addresses = std::vector<asio::ip::address>;
using boost::system::error_code;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);

/// Read size of the request head and of each relay step.
constexpr std::size_t kHeadChunk = std::size_t{4} * 1024;
constexpr std::size_t kRelayChunk = std::size_t{16} * 1024;
/// Time to write a refusal. Then, for at most kLingerTime and kLingerBytes, the client's unread
/// input is drained, so that it reads the answer instead of a reset (closing a socket with
/// unread input sends RST, which may destroy the answer in flight).
constexpr std::chrono::seconds kReplyTime{5};
constexpr std::chrono::seconds kLingerTime{1};
constexpr std::size_t kLingerBytes = std::size_t{64} * 1024;
/// Once the origin has closed a forwarded exchange, how long the client may take to close its
/// end before the connection is closed for it (the exchange cannot continue anyway).
constexpr std::chrono::milliseconds kCloseGrace{5000};
/// Smallest max_header_bytes accepted: a request line and a Host field must fit.
constexpr std::size_t kMinHeaderBytes = 64;

constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";

std::string_view reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 431:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

/// A complete answer from the proxy itself: short text body, connection closed afterwards.
std::string http_reply(int status, std::string_view body) {
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) +
      "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n";
  out += body;
  return out;
}

std::string endpoint_text(const tcp::endpoint& endpoint) {
  auto address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

asio::awaitable<Result<Addresses>> system_resolve(std::string host) {
  tcp::resolver resolver(co_await asio::this_coro::executor);
  auto [ec, results] =
      co_await resolver.async_resolve(host, "0", tcp::resolver::numeric_service, kUseTuple);
  if (ec) co_return Error::make(ErrorCode::kHandlerError, ec.message());
  Addresses out;
  for (const auto& entry : results) {
    auto address = entry.endpoint().address();
    if (std::find(out.begin(), out.end(), address) == out.end()) out.push_back(address);
  }
  if (out.empty()) co_return Error::make(ErrorCode::kHandlerError, "no addresses");
  co_return out;
}

class Connection;

// ---------------------------------------------------------------------------------------------
// ProxyState: the options and the event sink, shared by the handle, the accept loop and every
// connection; the listening socket and the connection set are its Listener's.

class ProxyState : public std::enable_shared_from_this<ProxyState> {
 public:
  ProxyState(asio::any_io_executor executor, ProxyOptions options)
      : options_(std::move(options)),
        listener_(listener::Listener::make(std::move(executor),
                                           listener::Options{options_.max_connections, {}})) {}

  /// Adopts the listening fd (closed on failure).
  Status open(Fd fd);
  void start();
  void stop();

  /// Delivers an event unless stopped; serialised, and excluded with stop().
  void report(const ProxyEvent& event);

  /// Registers a connection; its id, or 0 once stopped.
  std::uint64_t add(const std::shared_ptr<Connection>& connection);
  void remove(std::uint64_t id) { listener_->remove(id); }
  std::size_t connection_count() const { return listener_->connection_count(); }
  const ProxyOptions& options() const { return options_; }

 private:
  const ProxyOptions options_;
  const std::shared_ptr<listener::Listener> listener_;

  std::atomic<bool> stopped_{false};
  /// Held while an event is delivered and while stop() flips stopped_: once stop() returns, no
  /// delivery is running or can start. Recursive so that on_event may call stop().
  std::recursive_mutex events_mu_;
};

// ---------------------------------------------------------------------------------------------
// Connection: one client connection, from its request head to the end of its relay. Every
// member is used on the connection's strand only.

class Connection : public listener::Connection, public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<ProxyState> proxy, tcp::socket client)
      : proxy_(std::move(proxy)),
        executor_(client.get_executor()),
        client_(std::move(client)),
        upstream_(executor_),
        watchdog_(executor_),
        wake_(executor_),
        activity_timeout_(proxy_->options().idle_timeout) {}

  /// Registers with the proxy and runs the connection on its strand; once stopped, the socket
  /// closes with this object.
  void start() {
    auto self = shared_from_this();
    id_ = proxy_->add(self);
    if (id_ != 0) asio::co_spawn(executor_, run(std::move(self)), asio::detached);
  }

  /// From any thread: closes both sockets on the strand, which ends the connection.
  void request_stop() override {
    asio::post(executor_, [self = shared_from_this()] { self->abort(); });
  }

 private:
  enum class Phase { kHead, kConnect, kRelay, kReply };
  enum class HeadStatus { kComplete, kTooLarge, kClosed };

  const ProxyOptions& options() const { return proxy_->options(); }

  static asio::awaitable<void> run(std::shared_ptr<Connection> self) {
    try {
      self->set_deadline(Clock::now() + self->options().idle_timeout);
      asio::co_spawn(self->executor_, watch(self), asio::detached);
      co_await self->serve();
    } catch (...) {
      // Only resource exhaustion gets here (the I/O reports errors as values): drop the
      // connection, keep the proxy.
    }
    self->finish();
  }

  /// Closes everything the connection holds; its coroutines then end.
  void abort() {
    aborted_ = true;
    error_code ec;
    client_.close(ec);
    upstream_.close(ec);
    wake_.cancel();
  }

  void finish() {
    done_ = true;
    abort();
    watchdog_.cancel();
    proxy_->remove(id_);
  }

  // --- deadlines: one timer enforces whichever limit the current phase has ------------------

  void set_deadline(Clock::time_point deadline) {
    const bool sooner = deadline < deadline_;
    deadline_ = deadline;
    if (sooner) watchdog_.cancel();  // the watch loop re-arms for the new, earlier deadline
  }

  void touch() { set_deadline(Clock::now() + activity_timeout_); }

  static asio::awaitable<void> watch(std::shared_ptr<Connection> self) {
    while (!self->done_) {
      self->watchdog_.expires_at(self->deadline_);
      auto [ec] = co_await self->watchdog_.async_wait(kUseTuple);
      (void)ec;
      if (self->done_) break;
      if (Clock::now() >= self->deadline_) self->on_deadline();
    }
  }

  void on_deadline() {
    deadline_ = Clock::time_point::max();
    timed_out_ = true;
    if (phase_ == Phase::kConnect) {
      // Abandon the resolution or connection attempt; the client still gets its 504.
      error_code ec;
      upstream_.close(ec);
      wake_.cancel();
    } else {
      abort();
    }
  }

  // --- the request ---------------------------------------------------------------------------

  asio::awaitable<void> serve() {
    auto head = co_await read_head();
    if (head == HeadStatus::kClosed) co_return;
    if (head == HeadStatus::kTooLarge) {
      std::string detail =
          "request head over " + std::to_string(options().max_header_bytes) + " bytes";
      proxy_->report(ProxyEvent{{}, 0, false, 431, detail});
      co_await reply(431, detail);
      co_return;
    }

    auto parsed = parse_proxy_request(std::string_view(buffer_).substr(0, head_size_));
    if (const auto* rejection = std::get_if<RequestRejection>(&parsed)) {
      proxy_->report(ProxyEvent{{}, 0, false, rejection->status, rejection->reason});
      co_await reply(rejection->status, rejection->reason);
      co_return;
    }
    auto& request = std::get<ProxyRequest>(parsed);
    forward_ = request.kind == ProxyRequest::Kind::kForward;
    const std::string target = request.host.authority_text() + ":" + std::to_string(request.port);
    auto event = [&](bool allowed, int status, std::string detail) {
      proxy_->report(
          ProxyEvent{request.host.text, request.port, allowed, status, std::move(detail)});
    };

    if (!options().allow.allows(request.host, request.port)) {
      event(false, 403, "not allowed by networkAccess");
      co_await reply(403, target + " is not allowed by networkAccess");
      co_return;
    }

    phase_ = Phase::kConnect;
    set_deadline(Clock::now() + options().connect_timeout);
    Addresses addresses;
    if (request.host.is_address()) {
      error_code ec;
      addresses.push_back(asio::ip::make_address(request.host.text, ec));
      if (ec) {  // cannot happen for a canonical literal; refuse rather than guess
        event(false, 400, "invalid address");
        co_await reply(400, "invalid address");
        co_return;
      }
    } else {
      auto resolved = co_await resolve(request.host.text);
      if (aborted_) co_return;
      if (timed_out_) {
        event(true, 504, "resolving " + request.host.text + " timed out");
        co_await reply(504, "resolving " + request.host.text + " timed out");
        co_return;
      }
      if (!resolved) {
        std::string detail =
            "cannot resolve " + request.host.text + ": " + resolved.error().message;
        event(true, 502, detail);
        co_await reply(502, detail);
        co_return;
      }
      if (resolved->empty()) {
        std::string detail = "cannot resolve " + request.host.text + ": no addresses";
        event(true, 502, detail);
        co_await reply(502, detail);
        co_return;
      }
      const bool local_ok = is_localhost_name(request.host);
      for (const auto& address : *resolved) {
        if (local_ok || !is_local_address(address)) addresses.push_back(address);
      }
      if (addresses.empty()) {
        std::string detail = request.host.text + " resolves only to local addresses (" +
                             resolved->front().to_string() +
                             "); list the address itself to allow it";
        event(false, 403, detail);
        co_await reply(403, detail);
        co_return;
      }
    }

    std::optional<tcp::endpoint> connected;
    tcp::endpoint last_endpoint;
    error_code last_error;
    for (const auto& address : addresses) {
      tcp::endpoint endpoint(address, request.port);
      error_code ignored;
      upstream_.close(ignored);
      auto [ec] = co_await upstream_.async_connect(endpoint, kUseTuple);
      if (aborted_) co_return;
      if (timed_out_) break;
      if (!ec) {
        connected = endpoint;
        break;
      }
      last_endpoint = endpoint;
      last_error = ec;
    }
    if (!connected) {
      if (timed_out_) {
        event(true, 504, "connecting to " + target + " timed out");
        co_await reply(504, "connecting to " + target + " timed out");
      } else {
        std::string detail =
            "connect to " + endpoint_text(last_endpoint) + " failed: " + last_error.message();
        event(true, 502, detail);
        co_await reply(502, detail);
      }
      co_return;
    }

    phase_ = Phase::kRelay;
    touch();
    error_code ignored;
    client_.set_option(tcp::no_delay(true), ignored);
    upstream_.set_option(tcp::no_delay(true), ignored);
    const std::string_view early_data = std::string_view(buffer_).substr(head_size_);
    if (forward_) {
      std::array<asio::const_buffer, 2> out{asio::buffer(request.upstream_head),
                                            asio::buffer(early_data)};
      auto [ec, n] = co_await asio::async_write(upstream_, out, kUseTuple);
      if (ec) {
        std::string detail = "sending the request to " + endpoint_text(*connected) +
                             " failed: " + (timed_out_ ? std::string("timed out") : ec.message());
        event(true, 502, detail);
        // Nothing has reached the client yet, so it can still be told.
        if (!aborted_) {
          co_await reply(502, detail);
        }
        co_return;
      }
      event(true, 0, request.method + " forwarded to " + endpoint_text(*connected));
    } else {
      event(true, 200, "CONNECT tunnel to " + endpoint_text(*connected));
      auto [ec, n] = co_await asio::async_write(client_, asio::buffer(kEstablished), kUseTuple);
      if (ec) co_return;
      if (!early_data.empty()) {  // e.g. a TLS ClientHello sent without waiting for our 200
        auto [ec2, n2] = co_await asio::async_write(upstream_, asio::buffer(early_data), kUseTuple);
        if (ec2) co_return;
      }
    }
    std::string().swap(buffer_);
    touch();

    using namespace asio::experimental::awaitable_operators;
    co_await (pump(client_, upstream_, false) && pump(upstream_, client_, true));
  }

  /// Reads until the end of the request head; bytes after it stay in buffer_ (early data).
  asio::awaitable<HeadStatus> read_head() {
    const std::size_t max = options().max_header_bytes;
    std::size_t scanned = 0;
    while (true) {
      // Empty lines before a request line are ignored (RFC 9112 section 2.2).
      std::size_t skip = 0;
      while (buffer_.size() - skip >= 2 && buffer_.compare(skip, 2, "\r\n") == 0) skip += 2;
      if (skip != 0) {
        buffer_.erase(0, skip);
        scanned = 0;
      }
      if (auto end = buffer_.find("\r\n\r\n", scanned); end != std::string::npos) {
        head_size_ = end + 4;
        co_return head_size_ <= max ? HeadStatus::kComplete : HeadStatus::kTooLarge;
      }
      if (buffer_.size() >= max) co_return HeadStatus::kTooLarge;
      scanned = buffer_.size() >= 3 ? buffer_.size() - 3 : 0;
      const std::size_t old_size = buffer_.size();
      const std::size_t want = std::min(kHeadChunk, max - old_size);
      buffer_.resize(old_size + want);
      auto [ec, n] = co_await client_.async_read_some(asio::buffer(buffer_.data() + old_size, want),
                                                      kUseTuple);
      buffer_.resize(old_size + n);
      if (ec) co_return HeadStatus::kClosed;  // gone, or no complete head within idle_timeout
    }
  }

  /// Runs the resolver, waiting for it at most until the connect deadline or stop().
  asio::awaitable<Result<Addresses>> resolve(std::string host) {
    auto slot = std::make_shared<std::optional<Result<Addresses>>>();
    Resolver resolver = options().resolve ? options().resolve : Resolver(system_resolve);
    asio::co_spawn(executor_,
                   run_resolver(std::move(resolver), std::move(host), slot, weak_from_this()),
                   asio::detached);
    while (!slot->has_value() && !timed_out_ && !aborted_) {
      wake_.expires_at(Clock::time_point::max());
      auto [ec] = co_await wake_.async_wait(kUseTuple);
      (void)ec;
    }
    if (slot->has_value()) co_return std::move(**slot);
    co_return Error::make(ErrorCode::kTimeout, "resolution abandoned");
  }

  /// Detached from the connection: a lookup that outlives it (getaddrinfo cannot be
  /// interrupted) completes into a slot nobody reads.
  static asio::awaitable<void> run_resolver(Resolver resolver, std::string host,
                                            std::shared_ptr<std::optional<Result<Addresses>>> slot,
                                            std::weak_ptr<Connection> weak) {
    try {
      *slot = co_await resolver(std::move(host));
    } catch (const std::exception& e) {
      *slot = Result<Addresses>(Error::make(ErrorCode::kHandlerError, e.what()));
    } catch (...) {
      *slot = Result<Addresses>(Error::make(ErrorCode::kHandlerError, "resolver failed"));
    }
    if (auto self = weak.lock()) self->wake_.cancel();
  }

  /// Copies one direction until its end of stream, then half-closes the other side. Any error
  /// ends both directions.
  asio::awaitable<void> pump(tcp::socket& from, tcp::socket& to, bool from_upstream) {
    auto chunk = std::make_unique<char[]>(kRelayChunk);
    while (true) {
      auto [read_ec, n] =
          co_await from.async_read_some(asio::buffer(chunk.get(), kRelayChunk), kUseTuple);
      if (n > 0) {
        touch();
        auto [write_ec, written] =
            co_await asio::async_write(to, asio::buffer(chunk.get(), n), kUseTuple);
        (void)written;
        if (write_ec) {
          abort();
          co_return;
        }
        touch();
      }
      if (read_ec) {
        if (read_ec == asio::error::eof && !aborted_) {
          error_code ec;
          to.shutdown(tcp::socket::shutdown_send, ec);
          if (from_upstream && forward_) {
            activity_timeout_ = std::min(activity_timeout_, kCloseGrace);
            touch();
          }
        } else {
          abort();
        }
        co_return;
      }
    }
  }

  /// Answers the client with `status` and a one-line body, then closes gracefully.
  asio::awaitable<void> reply(int status, std::string_view message) {
    if (aborted_) co_return;
    phase_ = Phase::kReply;
    set_deadline(Clock::now() + kReplyTime);
    const std::string response =
        http_reply(status, "hearth egress proxy: " + std::string(message) + "\n");
    auto [ec, n] = co_await asio::async_write(client_, asio::buffer(response), kUseTuple);
    if (ec) co_return;
    error_code shutdown_ec;
    client_.shutdown(tcp::socket::shutdown_send, shutdown_ec);
    if (shutdown_ec) co_return;
    set_deadline(Clock::now() + kLingerTime);
    std::array<char, 4096> scratch{};
    std::size_t drained = 0;
    while (drained < kLingerBytes) {
      auto [read_ec, m] = co_await client_.async_read_some(asio::buffer(scratch), kUseTuple);
      drained += m;
      if (read_ec) break;
    }
  }

  const std::shared_ptr<ProxyState> proxy_;
  std::uint64_t id_ = 0;                  // the listener's, set by start()
  const asio::any_io_executor executor_;  // the connection's strand
  tcp::socket client_;
  tcp::socket upstream_;
  asio::steady_timer watchdog_;
  asio::steady_timer wake_;  // woken when a resolution completes
  std::string buffer_;       // request head, then early data after it
  std::size_t head_size_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max();
  std::chrono::milliseconds activity_timeout_;
  Phase phase_ = Phase::kHead;
  bool forward_ = false;
  bool timed_out_ = false;
  bool aborted_ = false;
  bool done_ = false;
};

// ---------------------------------------------------------------------------------------------

/// Over the connection limit, on the accept strand: a best-effort 503 written without waiting.
void refuse_over_limit(tcp::socket& client) {
  static const std::string kBusy = http_reply(503, "hearth egress proxy: too many connections\n");
  error_code ec;
  client.non_blocking(true, ec);
  if (!ec) client.write_some(asio::buffer(kBusy), ec);
  client.shutdown(tcp::socket::shutdown_send, ec);
}

Status ProxyState::open(Fd fd) {
  auto adopted = listener_->adopt(std::move(fd));
  if (!adopted.ok()) {
    return Error::make(ErrorCode::kInvalidParams, "egress proxy: " + adopted.error().message);
  }
  return {};
}

void ProxyState::start() {
  auto self = shared_from_this();
  listener::Handlers handlers;
  handlers.serve = [self](tcp::socket socket) {
    std::make_shared<Connection>(self, std::move(socket))->start();
  };
  handlers.refuse = [self](tcp::socket& socket, listener::Limit) {
    refuse_over_limit(socket);
    self->report(ProxyEvent{
        {},
        0,
        false,
        503,
        "connection limit of " + std::to_string(self->options_.max_connections) + " reached"});
  };
  listener_->start(std::move(handlers));
}

void ProxyState::stop() {
  {
    std::lock_guard lock(events_mu_);
    if (stopped_.exchange(true)) return;
  }
  listener_->stop();
}

void ProxyState::report(const ProxyEvent& event) {
  if (!options_.on_event) return;
  std::lock_guard lock(events_mu_);
  if (stopped_) return;
  try {
    options_.on_event(event);
  } catch (...) {
    // An observer's failure must not take the request path down with it.
  }
}

std::uint64_t ProxyState::add(const std::shared_ptr<Connection>& connection) {
  return listener_->add(connection);
}

class ProxyHandle final : public Proxy {
 public:
  explicit ProxyHandle(std::shared_ptr<ProxyState> state) : state_(std::move(state)) {}
  ~ProxyHandle() override { state_->stop(); }
  void stop() override { state_->stop(); }
  std::size_t connection_count() const override { return state_->connection_count(); }

 private:
  std::shared_ptr<ProxyState> state_;
};

}  // namespace

Proxy::~Proxy() = default;

Result<std::shared_ptr<Proxy>> Proxy::start(asio::any_io_executor executor, Fd listen_fd,
                                            ProxyOptions options) {
  auto invalid = [](const std::string& message) {
    return Error::make(ErrorCode::kInvalidParams, "egress proxy: " + message);
  };
  if (!listen_fd) return invalid("invalid listen fd");
  if (!executor) return invalid("no executor");
  if (options.connect_timeout.count() <= 0 || options.idle_timeout.count() <= 0) {
    return invalid("timeouts must be positive");
  }
  if (options.max_connections == 0) return invalid("max_connections must be at least 1");
  if (options.max_header_bytes < kMinHeaderBytes) {
    return invalid("max_header_bytes must be at least " + std::to_string(kMinHeaderBytes));
  }
  try {
    auto state = std::make_shared<ProxyState>(std::move(executor), std::move(options));
    HEARTH_RETURN_IF_ERROR(state->open(std::move(listen_fd)));
    auto handle = std::make_shared<ProxyHandle>(state);
    state->start();
    return std::shared_ptr<Proxy>(std::move(handle));
  } catch (const std::exception& e) {
    return Error::make(ErrorCode::kInternalError, std::string("egress proxy: ") + e.what());
  }
}

}  // namespace hearth::egress
