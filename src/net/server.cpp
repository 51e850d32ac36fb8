#include "net/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cctype>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "common/ascii.hpp"
#include "common/fan_out.hpp"
#include "common/rfc3986.hpp"
#include "listener/listener.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"

namespace hearth::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using WireRequest = http::request<http::string_body>;
using WireResponse = http::response<http::string_body>;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);

/// Request headers beyond this are refused (431); JSON-RPC requests carry a handful of headers.
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
/// How long a refused request's unread body is drained before closing, so that the peer reads
/// our error response instead of a TCP reset (closing with unread input sends RST).
constexpr std::chrono::seconds kLingerTime{1};
constexpr std::size_t kLingerBytes = 8 << 20;
/// How long a WebSocket close handshake (or, at stop(), an upgrade under way) may take before
/// the socket is simply closed.
constexpr std::chrono::seconds kCloseGrace{3};
/// WebSocket requests one connection may have in flight; beyond it the connection stops reading
/// until one finishes, so a single peer cannot start unbounded work.
constexpr std::size_t kMaxInFlight = 256;
/// Host and Origin values are attacker-controlled: log at most this much of them.
constexpr std::size_t kLogValueMax = 80;

/// Printable, bounded form of a header value for the log (no log injection through CR/LF).
std::string loggable(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, kLogValueMax)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  if (value.size() > kLogValueMax) out += "...";
  return out;
}

/// Runs over the whole expected token whatever the candidate is, so response time reveals
/// neither a matching prefix nor the token's content.
bool constant_time_equal(std::string_view candidate, std::string_view expected) {
  volatile unsigned char diff = candidate.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto c = i < candidate.size() ? static_cast<unsigned char>(candidate[i]) : 0;
    diff = diff | static_cast<unsigned char>(c ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

/// The value of `key` in a query string ("a=1&token=x"), decoded; nullopt when absent.
std::optional<std::string> query_param(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    return rfc3986::percent_decode(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
  }
  return std::nullopt;
}

/// What a client calls itself: its X-Hearth-Client header, kept when it is a short name of
/// letters, digits and ".-_" (it reaches logs and other clients' notifications), else empty.
template <class Request>
std::string client_name(const Request& req) {
  auto field = req.find("X-Hearth-Client");
  if (field == req.end()) return {};
  std::string_view name = field->value();
  if (name.empty() || name.size() > 64) return {};
  for (char c : name) {
    if (!ascii::is_alnum(c) && c != '.' && c != '-' && c != '_') return {};
  }
  return std::string(name);
}

/// The token of "Bearer <token>" (scheme case-insensitive), or nullopt.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !ascii::iequals(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  auto token = authorization.substr(kScheme.size());
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// One outgoing WebSocket item: a text message, or the close frame that ends the queue.
struct Outgoing {
  std::string text;
  std::optional<websocket::close_reason> close;
};

class Connection;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server::Impl: the policy derived from the options, the connections without the token; the
// listening socket and the connection set are its Listener's.

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  Impl(asio::io_context& ioc, ServerOptions options, const rpc::Dispatcher& dispatcher,
       Routes routes)
      : ioc_(ioc),
        options_(std::move(options)),
        dispatcher_(dispatcher),
        routes_(std::move(routes)),
        listener_(listener::Listener::make(
            ioc.get_executor(),
            listener::Options{options_.max_connections,
                              [this](std::string_view line) { log("{}", line); }})) {}

  Result<std::uint16_t> listen();
  void start();
  void stop();

  /// Host header check (DNS-rebinding defence): a local name, optionally with our port.
  bool host_allowed(std::string_view host) const;
  /// True for same-origin and configured origins. `cross` is set for a configured one.
  bool origin_allowed(std::string_view origin, bool& cross) const;
  bool token_valid(std::string_view candidate) const {
    return constant_time_equal(candidate, options_.token);
  }

  /// Adds a connection to the set closed by stop(), as not yet authenticated; returns its id, or 0
  /// when the server is already stopping.
  std::uint64_t add(const std::shared_ptr<Connection>& connection);
  void remove(std::uint64_t id);
  /// The connection sent a request with the token: it is no longer among the pending ones.
  void authenticated(std::uint64_t id);
  /// Closes the oldest connection that has not shown the token and is not about to: nothing of
  /// a request waits unread on its socket and none is being handled. An idle connection is
  /// closed whatever its age (a flood of new idle connections must not keep a client out),
  /// while a client whose request has arrived is never the one closed. False when there is
  /// none such.
  bool evict_oldest_pending();
  std::size_t pending_connections() {
    std::lock_guard lock(mu_);
    return pending_.size();
  }
  /// Takes a WebSocket slot; false when they are all taken.
  bool reserve_websocket() {
    if (websockets_.fetch_add(1) < websocket_cap_) return true;
    websockets_.fetch_sub(1);
    return false;
  }
  void release_websocket() { websockets_.fetch_sub(1); }

  /// The JSON-RPC sessions of open WebSocket connections, for broadcast().
  void add_push_session(const std::shared_ptr<rpc::Session>& session) {
    std::weak_ptr<Impl> weak = weak_from_this();
    {
      std::lock_guard lock(sessions_mu_);
      push_sessions_[session->id()] = session;
    }
    session->on_close([weak, id = session->id()] {
      if (auto self = weak.lock()) {
        std::lock_guard lock(self->sessions_mu_);
        self->push_sessions_.erase(id);
      }
    });
  }
  void broadcast(const std::string& message) {
    std::vector<std::shared_ptr<rpc::Session>> sessions;
    {
      std::lock_guard lock(sessions_mu_);
      sessions.reserve(push_sessions_.size());
      for (const auto& [id, weak] : push_sessions_) {
        if (auto session = weak.lock()) sessions.push_back(std::move(session));
      }
    }
    for (const auto& session : sessions) session->push(message);
  }

  template <class... Args>
  void log(fmt::format_string<Args...> format, Args&&... args) const {
    if (!options_.log && !spdlog::should_log(spdlog::level::debug)) return;
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (options_.log) {
      options_.log(line);
    } else {
      spdlog::debug("net: {}", line);
    }
  }

  const ServerOptions& options() const { return options_; }
  const rpc::Dispatcher& dispatcher() const { return dispatcher_; }
  const std::vector<ServerOptions::RpcService>& rpc_services() const {
    return options_.rpc_services;
  }
  const Routes& routes() const { return routes_; }
  asio::io_context& ioc() { return ioc_; }
  std::uint16_t port() const { return port_.load(); }
  std::size_t open_connections() const { return listener_->connection_count(); }

 private:
  /// At a limit (total, or connections without the token): room is made at the expense of a
  /// peer that has long not shown the token, never of a client.
  bool make_room(listener::Limit limit);
  std::string limit_text(listener::Limit limit) const;

  asio::io_context& ioc_;
  ServerOptions options_;
  const rpc::Dispatcher& dispatcher_;
  const Routes routes_;
  const std::shared_ptr<listener::Listener> listener_;
  std::atomic<std::uint16_t> port_{0};
  bool listening_ = false;
  // Fixed by listen(), read-only afterwards.
  std::vector<std::string> host_names_;    // lower case, IPv6 in brackets
  std::vector<std::string> same_origins_;  // "http://name:port"

  std::atomic<std::size_t> websockets_{0};
  std::size_t websocket_cap_ = 0;  // fixed by listen()
  std::mutex mu_;
  // Not yet authenticated, by id: the smallest id is the oldest.
  struct Pending {
    std::weak_ptr<Connection> connection;
  };
  std::map<std::uint64_t, Pending> pending_;
  std::size_t pending_cap_ = 64;  // fixed by listen()
  std::mutex sessions_mu_;
  std::map<std::uint64_t, std::weak_ptr<rpc::Session>> push_sessions_;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Connection: HTTP/1.1 keep-alive first; after an accepted upgrade, a WebSocket.

class Connection : public listener::Connection, public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<Server::Impl> server, tcp::socket socket)
      : server_(std::move(server)),
        strand_(socket.get_executor()),
        stream_(std::move(socket)),
        close_timer_(strand_),
        in_flight_timer_(strand_) {
    fd_ = stream_.socket().native_handle();
    beast::error_code ec;
    auto remote = stream_.socket().remote_endpoint(ec);
    peer_ =
        ec ? std::string("?") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  }

  /// Registers with the server and runs the connection on its strand.
  void start() {
    auto self = shared_from_this();
    id_ = server_->add(self);
    if (id_ == 0) {
      beast::error_code ec;
      stream_.socket().close(ec);
      return;
    }
    asio::co_spawn(strand_, run(std::move(self)), asio::detached);
  }

  /// Whether this connection may be closed to make room (evict_oldest_pending): it is not
  /// handling a request and no byte waits unread on its socket. Any thread. (The descriptor is
  /// read once at construction; FIONREAD on it is harmless even if the socket closed meanwhile.)
  bool idle() const {
    if (handling_.load()) return false;
    int waiting = 0;
    return ::ioctl(fd_, FIONREAD, &waiting) != 0 || waiting == 0;
  }

  /// Server shutdown, from any thread: closes this connection on its strand.
  void request_stop() override {
    asio::post(strand_, [self = shared_from_this()] { self->stop_on_strand(); });
  }

 private:
  enum class Phase { kHttp, kUpgrading, kWebSocket, kDone };

  const ServerOptions& options() const { return server_->options(); }

  static asio::awaitable<void> run(std::shared_ptr<Connection> self) {
    try {
      co_await self->run_http();
    } catch (const std::exception& e) {
      self->server_->log("{} connection error: {}", self->peer_, e.what());
    }
    self->finish();
  }

  /// Releases everything the connection holds, exactly once, whatever ended it.
  void finish() {
    if (phase_ == Phase::kDone) return;
    phase_ = Phase::kDone;
    close_timer_.cancel();
    in_flight_timer_.cancel();
    queue_.clear();
    queued_bytes_ = 0;
    close_socket();
    if (session_) session_->close();
    if (websocket_slot_) server_->release_websocket();
    websocket_slot_ = false;
    server_->remove(id_);
  }

  tcp::socket& socket() { return ws_ ? beast::get_lowest_layer(*ws_).socket() : stream_.socket(); }

  void close_socket() {
    in_flight_timer_.cancel();  // a read loop paused at the in-flight cap must see the end
    beast::error_code ec;
    socket().shutdown(tcp::socket::shutdown_both, ec);
    socket().close(ec);
  }

  void stop_on_strand() {
    stopping_ = true;
    if (body_stream_) body_stream_->cancel();
    switch (phase_) {
      case Phase::kHttp:
        close_socket();
        break;
      case Phase::kUpgrading:
        // The peer may already hold our 101: let the handshake finish so it gets a 1001 close
        // frame (run_websocket sends it), but do not wait on a handshake that hangs.
        arm_close_timer();
        break;
      case Phase::kWebSocket:
        begin_close(
            websocket::close_reason(websocket::close_code::going_away, "server shutting down"));
        break;
      case Phase::kDone:
        break;
    }
  }

  // ------------------------------------------------------------------------------------------
  // HTTP

  /// What every answer carries: the server's name, no caching, no sniffing, and the CORS headers
  /// of an allowed cross origin.
  template <class Message>
  void set_common_headers(Message& res) const {
    res.set(http::field::server, "hearth");
    res.set(http::field::cache_control, "no-store");
    res.set("X-Content-Type-Options", "nosniff");
    if (!cors_origin_.empty()) {
      res.set(http::field::access_control_allow_origin, cors_origin_);
      res.set(http::field::vary, "Origin");
    }
  }

  WireResponse make_response(http::status status, unsigned version, std::string body,
                             bool keep_alive) const {
    WireResponse res{status, version};
    set_common_headers(res);
    if (!body.empty()) res.set(http::field::content_type, "application/json");
    if (status != http::status::no_content) res.content_length(body.size());
    res.body() = std::move(body);
    res.keep_alive(keep_alive);
    return res;
  }

  static std::string error_body(std::string_view message) {
    return fmt::format(R"({{"error":"{}"}})", message);
  }

  static std::string problem_body(http::status status, std::string_view message) {
    json::object pd{{"type", "about:blank"},
                    {"title", std::string(http::obsolete_reason(status))},
                    {"status", static_cast<int>(status)},
                    {"detail", message}};
    return json::dump(pd);
  }

  /// Whether a comma-separated header has `token` (case-insensitive, parameters after ';' ignored).
  static bool header_has_token(const WireRequest& req, http::field field, std::string_view token) {
    auto [first, last] = req.equal_range(field);
    for (auto it = first; it != last; ++it) {
      std::string_view value = it->value();
      while (!value.empty()) {
        const std::size_t comma = value.find(',');
        std::string_view item = value.substr(0, comma);
        item = item.substr(0, item.find(';'));
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
          item.remove_prefix(1);
        }
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (ascii::iequals(item, token)) return true;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
      }
    }
    return false;
  }

  /// How long the next read or write may take: the idle timeout once the peer has shown the
  /// token, else what is left of the header deadline (never more than the idle timeout).
  std::chrono::steady_clock::duration io_budget() const {
    const std::chrono::steady_clock::duration idle = options().idle_timeout;
    if (authenticated_) return idle;
    const auto left = accepted_ + options().header_timeout - std::chrono::steady_clock::now();
    return std::clamp<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(1),
                                                           idle);
  }

  /// Writes `res`; false when the connection is unusable afterwards.
  asio::awaitable<bool> write(WireResponse res) {
    stream_.expires_after(io_budget());
    auto [ec, n] = co_await http::async_write(stream_, res, kUseTuple);
    (void)n;
    co_return !ec;
  }

  /// Sends an error. `close` ends the connection (refused peers, broken framing); otherwise an
  /// unread body within the size limit is read and dropped so that keep-alive can continue.
  asio::awaitable<bool> reply_error(http::request_parser<http::string_body>& parser,
                                    http::status status, std::string_view message,
                                    bool close = false, std::string allow = "POST, OPTIONS") {
    if (!close && !parser.is_done()) {
      close = !co_await discard_body(parser);
    }
    const auto& req = parser.get();
    bool keep_alive = req.keep_alive() && !close;
    auto res = make_response(status, req.version(), error_body(message), keep_alive);
    if (header_has_token(req, http::field::accept, "application/problem+json")) {
      // RFC 9457 problem details, for clients that ask for them.
      res.body() = problem_body(status, message);
      res.set(http::field::content_type, "application/problem+json");
      res.content_length(res.body().size());
    }
    if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer");
    if (status == http::status::method_not_allowed) res.set(http::field::allow, allow);
    if (status == http::status::upgrade_required) res.set(http::field::upgrade, "websocket");
    if (req.method() == http::verb::head) res.body().clear();  // Content-Length stays, body goes
    // The path only: a query may hold ?token=.
    std::string_view target = req.target();
    server_->log("{} {} {} -> {} {}", peer_, req.method_string(),
                 loggable(target.substr(0, target.find('?'))), static_cast<int>(status), message);
    if (!co_await write(std::move(res))) co_return false;
    if (keep_alive) co_return true;
    co_await linger_close();
    co_return false;
  }

  /// Reads and drops the rest of a request body; false when it is too large or unreadable.
  asio::awaitable<bool> discard_body(http::request_parser<http::string_body>& parser) {
    const std::size_t max = options().max_request_bytes;
    if (auto length = parser.content_length(); length && *length > max) co_return false;
    parser.body_limit(max);
    stream_.expires_after(io_budget());
    auto [ec, n] = co_await http::async_read(stream_, buffer_, parser, kUseTuple);
    (void)n;
    parser.get().body().clear();
    co_return !ec;
  }

  /// Half-closes and discards input for a moment, so the peer sees our response, not a reset.
  asio::awaitable<void> linger_close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) co_return;
    stream_.expires_after(kLingerTime);  // one deadline for the whole drain
    std::size_t drained = buffer_.size();
    buffer_.clear();
    std::array<char, std::size_t{16} * 1024> scratch{};
    while (drained < kLingerBytes) {
      auto [read_ec, n] = co_await stream_.async_read_some(asio::buffer(scratch), kUseTuple);
      if (read_ec) break;
      drained += n;
    }
  }

  asio::awaitable<void> run_http() {
    for (;;) {
      if (stopping_) co_return;
      http::request_parser<http::string_body> parser;
      parser.header_limit(kHeaderLimit);
      // The Content-Length limit is checked by hand after the security checks: the parser's own
      // check would fail the header read itself, before Host/Origin/token could be looked at.
      parser.body_limit(boost::none);
      stream_.expires_after(io_budget());
      auto [ec, n] = co_await http::async_read_header(stream_, buffer_, parser, kUseTuple);
      (void)n;
      // Cleared when the request has been handled, so that keep-alive waits count as idle.
      struct Handling {
        std::atomic<bool>& flag;
        ~Handling() { flag.store(false); }
      } handling{handling_};
      handling_.store(!ec);
      if (ec) {
        if (ec == http::error::header_limit) {
          co_await reply_error(parser, http::status::request_header_fields_too_large,
                               "request header too large", true);
        } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          co_await reply_error(parser, http::status::bad_request, "bad request", true);
        }
        co_return;  // end of stream, timeout, reset, stop()
      }
      if (!co_await handle_request(parser)) co_return;
    }
  }

  /// Handles one request whose header has been read; false ends the connection.
  asio::awaitable<bool> handle_request(http::request_parser<http::string_body>& parser) {
    auto& req = parser.get();
    cors_origin_.clear();
    std::string_view target = req.target();
    auto question = target.find('?');
    std::string_view path = target.substr(0, question);
    std::string_view query =
        question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);

    // Security, in the documented order: Host, Origin, token.
    // A second Host or Origin header would let a proxy and this check see different values.
    auto host = req.find(http::field::host);
    if (host == req.end() || req.count(http::field::host) != 1 ||
        !server_->host_allowed(host->value())) {
      server_->log("{} forbidden host '{}'", peer_,
                   host == req.end() ? "" : loggable(host->value()));
      co_return co_await reply_error(parser, http::status::forbidden, "forbidden host", true);
    }
    // Routes added to the table; /rpc and /ws are built in. A path no route serves asks for the
    // token like /rpc, so that its absence tells nothing to a peer without the token.
    // /rpc and /ws, or the paths of another JSON-RPC service (ServerOptions::rpc_services).
    bool rpc_path = path == "/rpc";
    bool ws_path = path == "/ws";
    dispatcher_ = &server_->dispatcher();
    for (const auto& service : server_->rpc_services()) {
      if (path == service.http_path || path == service.ws_path) {
        rpc_path = path == service.http_path;
        ws_path = !rpc_path;
        dispatcher_ = service.dispatcher;
      }
    }
    const Route* route = rpc_path || ws_path ? nullptr : server_->routes().find(path);
    auto origin = req.find(http::field::origin);
    if (origin != req.end()) {
      bool cross = false;
      const bool opaque = route != nullptr && route->opaque_origin &&
                          (req.method() == http::verb::get || req.method() == http::verb::head) &&
                          origin->value() == "null";
      if (req.count(http::field::origin) != 1 ||
          (!opaque && !server_->origin_allowed(origin->value(), cross))) {
        server_->log("{} forbidden origin '{}'", peer_, loggable(origin->value()));
        co_return co_await reply_error(parser, http::status::forbidden, "forbidden origin", true);
      }
      if (cross) cors_origin_ = std::string(origin->value());
    }
    if (req.method() == http::verb::options && (rpc_path || route != nullptr)) {
      // Named: GCC 12 frees a temporary argument of a co_awaited coroutine twice.
      std::string allow = route != nullptr ? allow_header(*route) : std::string("POST, OPTIONS");
      std::string headers = "Authorization, Content-Type";
      if (route != nullptr) {
        for (const auto& h : route->cors_request_headers) headers += ", " + h;
      }
      co_return co_await reply_preflight(parser, std::move(allow), std::move(headers));
    }
    const Access access = ws_path            ? Access::kTokenOrQuery
                          : route != nullptr ? route->access
                                             : Access::kToken;
    if (access == Access::kOpen) {
      co_return co_await handle_route(parser, *route, path, query);
    }
    if (!authorized(req, access == Access::kTokenOrQuery, query)) {
      co_return co_await reply_error(parser, http::status::unauthorized,
                                     "missing or invalid token");
    }
    if (!authenticated_) {
      authenticated_ = true;
      server_->authenticated(id_);
    }

    if (rpc_path) {
      if (req.method() != http::verb::post) {
        co_return co_await reply_error(parser, http::status::method_not_allowed,
                                       "method not allowed");
      }
      co_return co_await handle_rpc(parser);
    }
    if (ws_path) {
      if (!websocket::is_upgrade(req)) {
        co_return co_await reply_error(parser, http::status::upgrade_required,
                                       "websocket upgrade required");
      }
      if (!server_->reserve_websocket()) {
        // Subscribers filling their share must not take the room HTTP calls need.
        co_return co_await reply_error(parser, http::status::service_unavailable,
                                       "too many WebSocket connections", true);
      }
      websocket_slot_ = true;
      co_await run_websocket(parser.release());
      co_return false;
    }
    if (route != nullptr) {
      co_return co_await handle_route(parser, *route, path, query);
    }
    co_return co_await reply_error(parser, http::status::not_found, "not found");
  }

  bool authorized(const WireRequest& req, bool allow_query, std::string_view query) const {
    auto authorization = req.find(http::field::authorization);
    if (authorization != req.end()) {
      auto token = bearer_token(authorization->value());
      return token && server_->token_valid(*token);
    }
    // Browsers cannot set headers on a WebSocket, so the upgrade may carry ?token= instead.
    if (allow_query) {
      auto token = query_param(query, "token");
      return token && server_->token_valid(*token);
    }
    return false;
  }

  asio::awaitable<bool> reply_preflight(http::request_parser<http::string_body>& parser,
                                        std::string allow, std::string headers) {
    bool readable = parser.is_done() || co_await discard_body(parser);
    const auto& req = parser.get();
    bool keep_alive = req.keep_alive() && readable;
    auto res = make_response(http::status::no_content, req.version(), {}, keep_alive);
    res.set(http::field::allow, allow);
    if (!cors_origin_.empty()) {
      res.set(http::field::access_control_allow_methods, allow);
      res.set(http::field::access_control_allow_headers, headers);
      res.set(http::field::access_control_max_age, "600");
    }
    if (!co_await write(std::move(res))) co_return false;
    if (keep_alive) co_return true;
    co_await linger_close();
    co_return false;
  }

  /// Reads the request body within max_request_bytes (answering `Expect: 100-continue`).
  /// nullopt once it is read; else what handle_request returns (the body could not be had).
  asio::awaitable<std::optional<bool>> read_body(http::request_parser<http::string_body>& parser) {
    const std::size_t max = options().max_request_bytes;
    if (auto length = parser.content_length(); length && *length > max) {
      co_return co_await reply_error(parser, http::status::payload_too_large,
                                     "request body too large", true);
    }
    parser.body_limit(max);  // enforces the limit on chunked bodies
    if (auto expect = parser.get().find(http::field::expect);
        expect != parser.get().end() && ascii::iequals(expect->value(), "100-continue") &&
        !parser.is_done()) {
      http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
      stream_.expires_after(options().idle_timeout);
      auto [ec, n] = co_await http::async_write(stream_, go_on, kUseTuple);
      (void)n;
      if (ec) co_return false;
    }
    stream_.expires_after(options().idle_timeout);
    auto [ec, n] = co_await http::async_read(stream_, buffer_, parser, kUseTuple);
    (void)n;
    if (ec == http::error::body_limit) {
      co_return co_await reply_error(parser, http::status::payload_too_large,
                                     "request body too large", true);
    }
    if (ec) co_return false;
    stream_.expires_never();  // a handler may take long; the read/write deadlines cover the peer
    co_return std::nullopt;
  }

  /// A request for a route of the table: the method checked, the body read, the handler's
  /// answer written with the server's own headers.
  asio::awaitable<bool> handle_route(http::request_parser<http::string_body>& parser,
                                     const Route& route, std::string_view path,
                                     std::string_view query) {
    const std::string method(parser.get().method_string());
    if (!accepts(route, method)) {
      std::string allow = allow_header(route);  // named, as in handle_request
      co_return co_await reply_error(parser, http::status::method_not_allowed, "method not allowed",
                                     false, std::move(allow));
    }
    if (auto failed = co_await read_body(parser)) co_return *failed;
    auto& req = parser.get();
    HttpRequest in;
    in.method = method;
    in.path = std::string(path);
    in.query = std::string(query);
    for (const auto& field : req) {
      in.headers.emplace_back(ascii::lower(field.name_string()), std::string(field.value()));
    }
    in.body = std::move(req.body());
    std::optional<HttpResponse> out;
    try {
      out = co_await route.handler(std::move(in));
    } catch (const std::exception& e) {
      server_->log("{} route {} failed: {}", peer_, route.path, e.what());
    }
    if (stopping_) co_return false;  // stop() abandoned this request
    if (!out || out->status < 100 || out->status > 999) {
      co_return co_await reply_error(parser, http::status::internal_server_error, "internal error",
                                     true);
    }
    if (out->stream) {
      if (req.method() != http::verb::head) {
        co_return co_await write_stream(req.version(), *out, route);
      }
      out->stream->cancel();  // a HEAD request gets the head only: the producer ends
    }
    const bool keep_alive = req.keep_alive();
    auto res = make_response(http::status::ok, req.version(), std::move(out->body), keep_alive);
    res.result(static_cast<unsigned>(out->status));
    if (out->content_type.empty()) {
      res.erase(http::field::content_type);
    } else {
      res.set(http::field::content_type, out->content_type);
    }
    set_route_headers(res, *out, route.path);
    set_expose_headers(res, route);
    res.content_length(res.body().size());
    if (req.method() == http::verb::head) res.body().clear();  // Content-Length stays
    if (!co_await write(std::move(res))) co_return false;
    if (!keep_alive) {
      beast::error_code shutdown_ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, shutdown_ec);
    }
    co_return keep_alive;
  }

  /// A route's own headers; a value from a file or a manifest must not split the header block.
  template <class Message>
  void set_route_headers(Message& res, const HttpResponse& out, std::string_view route_path) {
    for (const auto& [name, value] : out.headers) {
      if (name.empty() || value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos ||
          name.find_first_of(std::string_view(":\r\n\0 ", 5)) != std::string::npos) {
        server_->log("{} route {} gave an invalid header '{}': not sent", peer_, route_path,
                     loggable(name));
        continue;
      }
      // A route that varies by a header of its own keeps the server's `Vary: Origin` too.
      if (auto vary = res.find(http::field::vary);
          vary != res.end() && ascii::iequals(name, "vary")) {
        res.set(http::field::vary, std::string(vary->value()) + ", " + value);
        continue;
      }
      res.set(name, value);
    }
  }

  /// The response headers a page of an allowed cross origin may read.
  template <class Message>
  void set_expose_headers(Message& res, const Route& route) const {
    if (cors_origin_.empty() || route.cors_expose_headers.empty()) return;
    std::string list;
    for (const auto& h : route.cors_expose_headers) list += (list.empty() ? "" : ", ") + h;
    res.set(http::field::access_control_expose_headers, list);
  }

  /// A streamed route answer: the head, then each piece as a chunk until the producer ends or the
  /// peer goes away; the connection ends with it (false).
  asio::awaitable<bool> write_stream(unsigned version, const HttpResponse& out,
                                     const Route& route) {
    http::response<http::empty_body> res{static_cast<http::status>(out.status), version};
    set_common_headers(res);
    if (!out.content_type.empty()) res.set(http::field::content_type, out.content_type);
    set_route_headers(res, out, route.path);
    set_expose_headers(res, route);
    res.keep_alive(false);
    res.chunked(true);
    body_stream_ = out.stream;
    if (stopping_) body_stream_->cancel();
    stream_.expires_never();  // the producer's own pace; a dead peer fails a write or the watch
    http::response_serializer<http::empty_body> head{res};
    auto [head_ec, head_n] = co_await http::async_write_header(stream_, head, kUseTuple);
    (void)head_n;
    if (!head_ec) {
      // Reading is how a peer's close is seen while the producer is silent.
      asio::co_spawn(strand_, watch_peer(shared_from_this(), out.stream), asio::detached);
      while (auto piece = co_await out.stream->next()) {
        if (piece->empty()) continue;
        auto [ec, n] =
            co_await asio::async_write(stream_, http::make_chunk(asio::buffer(*piece)), kUseTuple);
        (void)n;
        if (ec) break;
      }
      auto [last_ec, last_n] =
          co_await asio::async_write(stream_, http::make_chunk_last(), kUseTuple);
      (void)last_ec;
      (void)last_n;
    }
    out.stream->cancel();
    body_stream_.reset();
    beast::error_code shutdown_ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, shutdown_ec);
    co_return false;
  }

  /// Waits for the peer to send or close while a stream is written: either ends the stream.
  static asio::awaitable<void> watch_peer(std::shared_ptr<Connection> self,
                                          std::shared_ptr<BodyStream> stream) {
    std::array<char, 256> scratch{};
    auto [ec, n] =
        co_await self->stream_.socket().async_read_some(asio::buffer(scratch), kUseTuple);
    (void)ec;
    (void)n;
    stream->cancel();
  }

  asio::awaitable<bool> handle_rpc(http::request_parser<http::string_body>& parser) {
    if (auto failed = co_await read_body(parser)) co_return *failed;

    const auto& req = parser.get();
    // One session per connection, made on first use: HTTP cannot push, but methods may still key
    // state on the session and its close hooks.
    if (!session_) session_ = std::make_shared<rpc::Session>("http", nullptr);
    // Per request: requests on one connection are handled one after another, and what a call
    // needs of it is copied when the call starts.
    session_->set_client(client_name(req));
    std::optional<std::string> reply;
    bool failed = false;
    // `Prefer: lafs-envelope` (RFC 7240): every answer in this body as a LAFS envelope.
    const bool envelope = header_has_token(req, http::field::prefer, "lafs-envelope");
    try {
      reply = co_await dispatcher_->handle(req.body(), session_,
                                           rpc::CallOptions{.envelope = envelope});
    } catch (const std::exception& e) {
      server_->log("{} dispatcher failed: {}", peer_, e.what());
      failed = true;
    }
    if (failed) {
      co_return co_await reply_error(parser, http::status::internal_server_error, "internal error",
                                     true);
    }
    if (stopping_) co_return false;  // stop() abandoned this request
    bool keep_alive = req.keep_alive();
    auto res = reply ? make_response(http::status::ok, req.version(), std::move(*reply), keep_alive)
                     : make_response(http::status::no_content, req.version(), {}, keep_alive);
    if (envelope) res.set("Preference-Applied", "lafs-envelope");
    if (!co_await write(std::move(res))) co_return false;
    if (!keep_alive) {
      beast::error_code shutdown_ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, shutdown_ec);
    }
    co_return keep_alive;
  }

  // ------------------------------------------------------------------------------------------
  // WebSocket

  asio::awaitable<void> run_websocket(WireRequest req) {
    stream_.expires_never();  // the websocket timeout option takes over
    ws_.emplace(std::move(stream_));
    phase_ = Phase::kUpgrading;
    auto& ws = *ws_;
    auto timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
    timeouts.idle_timeout = options().idle_timeout;
    timeouts.keep_alive_pings = true;
    ws.set_option(timeouts);
    ws.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::server, "hearth");
      res.set(http::field::cache_control, "no-store");
      res.set("X-Content-Type-Options", "nosniff");
    }));
    ws.read_message_max(options().max_request_bytes);
    ws.text(true);

    // The session takes broadcasts before the 101 is written: a peer that holds our 101 may
    // at once do what makes the daemon broadcast (edit a watched manifest), and must get it.
    // What arrives during the handshake is queued, and written once it is done.
    std::weak_ptr<Connection> weak = weak_from_this();
    if (session_) session_->close();  // an HTTP session used before the upgrade ends with it
    session_ = std::make_shared<rpc::Session>("ws", [weak](std::string message) {
      if (auto self = weak.lock()) self->post_message(std::move(message));
    });
    session_->set_client(client_name(req));
    server_->add_push_session(session_);
    auto [accept_ec] = co_await ws.async_accept(req, kUseTuple);
    if (accept_ec) {
      server_->log("{} websocket handshake failed: {}", peer_, accept_ec.message());
      co_return;
    }
    phase_ = Phase::kWebSocket;
    start_writer();   // what was pushed during the handshake
    buffer_.clear();  // a peer may not send frames before our 101; anything here is not a frame
    server_->log("{} websocket open (session {})", peer_, session_->id());
    if (stopping_) {
      begin_close(
          websocket::close_reason(websocket::close_code::going_away, "server shutting down"));
    }

    for (;;) {
      auto [ec, n] = co_await ws.async_read(buffer_, kUseTuple);
      (void)n;
      if (ec) {
        if (ec == websocket::error::message_too_big) {
          server_->log("{} websocket message over {} bytes: closed 1009", peer_,
                       options().max_request_bytes);
        } else if (ec != websocket::error::closed) {
          server_->log("{} websocket ended: {}", peer_, ec.message());
        } else {
          server_->log("{} websocket closed ({})", peer_, ws.reason().code);
        }
        co_return;
      }
      if (closing_) {  // after our close frame nothing more is handled
        buffer_.clear();
        continue;
      }
      if (!ws.got_text()) {
        buffer_.clear();
        server_->log("{} binary websocket frame: closing 1003", peer_);
        begin_close(
            websocket::close_reason(websocket::close_code::unknown_data, "text frames only"));
        continue;  // keep reading so the peer's close frame completes the handshake
      }
      std::string text = beast::buffers_to_string(buffer_.data());
      buffer_.clear();
      // Each message runs on its own, so one slow handler does not hold up the others.
      ++in_flight_;
      asio::co_spawn(strand_, handle_message(shared_from_this(), std::move(text)), asio::detached);
      if (in_flight_ >= kMaxInFlight) {
        in_flight_timer_.expires_at(asio::steady_timer::time_point::max());
        auto [wait_ec] =
            co_await in_flight_timer_.async_wait(kUseTuple);  // cancelled when one finishes
        (void)wait_ec;
        if (phase_ != Phase::kWebSocket) co_return;
      }
    }
  }

  static asio::awaitable<void> handle_message(std::shared_ptr<Connection> self, std::string text) {
    std::optional<std::string> reply;
    rpc::AfterReply after;
    try {
      reply = co_await self->dispatcher_->handle(text, self->session_,
                                                 rpc::CallOptions{.after_reply = &after});
    } catch (const std::exception& e) {
      self->server_->log("{} dispatcher failed: {}", self->peer_, e.what());
    }
    // Back on the strand (the coroutine's executor): the counter and timer are strand-only.
    if (self->in_flight_-- == kMaxInFlight) self->in_flight_timer_.cancel();
    // On the strand, post_message enqueues at once: the answer goes before what follows it.
    if (reply) self->post_message(std::move(*reply));
    for (auto& work : after) work();
  }

  /// Thread-safe entry to the write queue (the Session push function and the handlers).
  void post_message(std::string message) {
    auto work = [self = shared_from_this(), message = std::move(message)]() mutable {
      self->enqueue(Outgoing{std::move(message), std::nullopt});
    };
    // From an I/O thread with the strand idle, dispatch writes here and now. In a fan-out to
    // many connections, with more than one I/O thread, every other one is posted instead, for
    // another I/O thread to write meanwhile. Either way the strand keeps this connection's messages
    // in order: from another thread a dispatch runs at once only when nothing is queued on the
    // strand. On the strand itself a dispatch runs at once whatever is queued, so there nothing is
    // ever posted.
    if (options().io_threads > 1 && !on_strand() && FanOut::hand_off()) {
      asio::post(strand_, std::move(work));
    } else {
      asio::dispatch(strand_, std::move(work));
    }
  }

  /// Whether the calling thread is running this connection's strand. The listener makes every
  /// connection's strand of one of these two types; any other counts as yes (never post).
  bool on_strand() const {
    if (const auto* s = strand_.target<asio::strand<asio::io_context::executor_type>>()) {
      return s->running_in_this_thread();
    }
    if (const auto* s = strand_.target<asio::strand<asio::any_io_executor>>()) {
      return s->running_in_this_thread();
    }
    return true;  // another executor: never post, dispatch keeps the order
  }

  void enqueue(Outgoing item) {
    // During the handshake a message waits in the queue (write_next writes nothing until it is
    // done); after the connection, or on a plain HTTP one, it goes nowhere.
    if ((phase_ != Phase::kWebSocket && phase_ != Phase::kUpgrading) || closing_) return;
    if (queued_bytes_ + item.text.size() > options().max_ws_queue_bytes) {
      server_->log("{} websocket reader too slow ({} bytes queued): disconnecting", peer_,
                   queued_bytes_);
      closing_ = true;
      close_socket();  // a close frame would queue behind the backlog; the read loop then ends
      return;
    }
    queued_bytes_ += item.text.size();
    queue_.push_back(std::move(item));
    start_writer();
  }

  void start_writer() {
    if (writing_) return;
    writing_ = true;
    write_next();
  }

  /// Writes the queue's next message (the strand). One chain of completion handlers, not a
  /// coroutine per burst: a push to a subscriber that is not writing costs one write call.
  void write_next() {
    if (queue_.empty() || phase_ != Phase::kWebSocket) {
      writing_ = false;
      return;
    }
    // Owned here while in flight: stop() may clear the queue meanwhile.
    writing_item_ = std::move(queue_.front());
    queue_.pop_front();
    auto& ws = *ws_;
    if (writing_item_.close) {
      ws.async_close(*writing_item_.close, [self = shared_from_this()](beast::error_code ec) {
        if (ec && ec != asio::error::operation_aborted) {
          self->server_->log("{} websocket close failed: {}", self->peer_, ec.message());
        }
        self->writing_ = false;
      });
      return;
    }
    ws.async_write(asio::buffer(writing_item_.text), WriteDone{shared_from_this()});
  }

  /// A queued message's write completed (the strand): the next one, if any.
  void on_written(beast::error_code ec) {
    queued_bytes_ -= std::min(queued_bytes_, writing_item_.text.size());
    writing_item_.text.clear();
    if (ec) {
      close_socket();  // the read loop sees it and finishes the connection
      writing_ = false;
      return;
    }
    write_next();
  }

  /// The write chain's completion handler. It declares itself a continuation of the handler
  /// that started the write, so a write the kernel takes at once completes on the same thread's
  /// own queue instead of waking another thread: a fan-out to many connections would otherwise
  /// pay a cross-thread wake-up for every subscriber.
  struct WriteDone {
    std::shared_ptr<Connection> self;
    void operator()(beast::error_code ec, std::size_t /*bytes*/) const { self->on_written(ec); }
    friend bool asio_handler_is_continuation(WriteDone* /*handler*/) { return true; }
  };

  /// Queues a close frame after the message being written; unsent messages are dropped.
  void begin_close(websocket::close_reason reason) {
    if (closing_ || phase_ != Phase::kWebSocket) return;
    closing_ = true;
    in_flight_timer_.cancel();  // the read loop must read the peer's close frame
    queue_.clear();
    queued_bytes_ = 0;
    queue_.push_back(Outgoing{{}, std::move(reason)});
    start_writer();
    arm_close_timer();
  }

  /// A peer that never answers the close frame (or never reads) must not hold the server.
  void arm_close_timer() {
    close_timer_.expires_after(kCloseGrace);
    close_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && self->phase_ != Phase::kDone) self->close_socket();
    });
  }

  std::shared_ptr<Server::Impl> server_;
  std::uint64_t id_ = 0;  // the listener's, set by start()
  asio::any_io_executor strand_;
  beast::tcp_stream stream_;                 // moved into ws_ on upgrade
  std::shared_ptr<BodyStream> body_stream_;  // a streamed route answer being written
  std::optional<websocket::stream<beast::tcp_stream>> ws_;
  beast::flat_buffer buffer_;
  asio::steady_timer close_timer_;
  asio::steady_timer in_flight_timer_;  // wakes the read loop when in_flight_ drops below the cap
  std::size_t in_flight_ = 0;
  std::string peer_;
  int fd_ = -1;                        ///< the socket's descriptor, for idle() (any thread)
  std::atomic<bool> handling_{false};  ///< a request's header is read and not yet answered
  std::string cors_origin_;            // allowed cross origin of the current request, else empty
  std::shared_ptr<rpc::Session> session_;
  /// The service of the current request (/rpc, /ws) or of the WebSocket (/app-server...).
  const rpc::Dispatcher* dispatcher_ = nullptr;
  Phase phase_ = Phase::kHttp;
  // Until a request carries the token, the connection lives on the header deadline counted
  // from its acceptance, not on the idle timeout.
  bool authenticated_ = false;
  bool websocket_slot_ = false;
  std::chrono::steady_clock::time_point accepted_ = std::chrono::steady_clock::now();
  bool stopping_ = false;
  bool closing_ = false;  // WebSocket: close frame queued or socket dropped
  bool writing_ = false;
  std::deque<Outgoing> queue_;
  Outgoing writing_item_;  ///< the message being written (write_next)
  std::size_t queued_bytes_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server::Impl

Result<std::uint16_t> Server::Impl::listen() {
  auto fail = [](std::string message) {
    return Error::make(ErrorCode::kInternalError, std::move(message));
  };
  if (listening_) return fail("server is already listening");
  if (options_.token.empty()) return fail("server token must not be empty");
  std::string address_text = options_.address == "localhost" ? "127.0.0.1" : options_.address;
  beast::error_code ec;
  auto address = asio::ip::make_address(address_text, ec);
  if (ec) return fail(fmt::format("invalid bind address '{}'", options_.address));
  tcp::endpoint endpoint{address, options_.port};
  auto bound = listener_->bind(endpoint, fmt::format("{}:{}", options_.address, options_.port));
  if (!bound.ok()) return std::move(bound).error();
  port_ = *bound;
  listening_ = true;
  pending_cap_ = options_.max_unauthenticated != 0
                     ? options_.max_unauthenticated
                     : std::max<std::size_t>(64, options_.max_connections / 4);
  websocket_cap_ = options_.max_websockets;
  if (websocket_cap_ == 0) {
    const std::size_t reserve = std::max<std::size_t>(8, options_.max_connections / 8);
    websocket_cap_ = options_.max_connections > reserve ? options_.max_connections - reserve : 1;
  }

  host_names_ = {"localhost", "127.0.0.1", "[::1]"};
  std::string bound_name = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  if (std::find(host_names_.begin(), host_names_.end(), bound_name) == host_names_.end()) {
    host_names_.push_back(ascii::lower(bound_name));
  }
  for (const auto& name : host_names_) {
    same_origins_.push_back(fmt::format("http://{}:{}", name, port_.load()));
  }
  log("listening on {}:{}", bound_name, port_.load());
  return port_.load();
}

void Server::Impl::start() {
  if (!listening_) {
    log("start() without a successful listen(): not accepting");
    return;
  }
  auto self = shared_from_this();
  listener::Handlers handlers;
  handlers.serve = [self](tcp::socket socket) {
    std::make_shared<Connection>(self, std::move(socket))->start();
  };
  handlers.owner_limit = [self] { return self->pending_connections() >= self->pending_cap_; };
  handlers.make_room = [self](listener::Limit limit) { return self->make_room(limit); };
  handlers.refuse = [self](tcp::socket&, listener::Limit limit) {
    self->log("{} reached: closing a new connection", self->limit_text(limit));
  };
  listener_->start(std::move(handlers));
}

std::string Server::Impl::limit_text(listener::Limit limit) const {
  return limit == listener::Limit::kConnections
             ? fmt::format("connection limit {}", options_.max_connections)
             : fmt::format("{} connections without a token", pending_cap_);
}

bool Server::Impl::make_room(listener::Limit limit) {
  if (!evict_oldest_pending()) return false;  // the new connection is the one refused
  log("{} reached: closed the oldest connection without a token", limit_text(limit));
  return true;
}

void Server::Impl::stop() {
  listener_->stop();
}

std::uint64_t Server::Impl::add(const std::shared_ptr<Connection>& connection) {
  const std::uint64_t id = listener_->add(connection);
  if (id == 0) return 0;
  std::lock_guard lock(mu_);
  pending_.emplace(id, Pending{connection});
  return id;
}

void Server::Impl::remove(std::uint64_t id) {
  listener_->remove(id);
  std::lock_guard lock(mu_);
  pending_.erase(id);
}

void Server::Impl::authenticated(std::uint64_t id) {
  std::lock_guard lock(mu_);
  pending_.erase(id);
}

bool Server::Impl::evict_oldest_pending() {
  std::shared_ptr<Connection> oldest;
  {
    std::lock_guard lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end() && !oldest;) {
      auto connection = it->second.connection.lock();
      if (!connection) {
        it = pending_.erase(it);
        continue;
      }
      if (!connection->idle()) {  // its request is here or being handled: spare it
        ++it;
        continue;
      }
      oldest = std::move(connection);
      pending_.erase(it);
    }
  }
  if (!oldest) return false;
  oldest->request_stop();
  return true;
}

bool Server::Impl::host_allowed(std::string_view host) const {
  std::string_view name = host;
  std::string_view port;
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    if (close == std::string_view::npos) return false;
    name = host.substr(0, close + 1);
    auto rest = host.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      if (port.empty()) return false;
    }
  } else if (auto colon = host.find(':'); colon != std::string_view::npos) {
    name = host.substr(0, colon);
    port = host.substr(colon + 1);
    if (port.empty()) return false;  // also rejects a second colon below via all_digits
  }
  if (!port.empty()) {
    if (!all_digits(port) || port.size() > 5) return false;
    unsigned long value = 0;
    for (char c : port) value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value != port_.load()) return false;
  }
  auto lower = ascii::lower(name);
  return std::find(host_names_.begin(), host_names_.end(), lower) != host_names_.end();
}

bool Server::Impl::origin_allowed(std::string_view origin, bool& cross) const {
  cross = false;
  if (std::find(same_origins_.begin(), same_origins_.end(), origin) != same_origins_.end()) {
    return true;
  }
  if (std::find(options_.allowed_origins.begin(), options_.allowed_origins.end(), origin) !=
      options_.allowed_origins.end()) {
    cross = true;
    return true;
  }
  return false;  // includes "null" (sandboxed frames, file: pages)
}

// ---------------------------------------------------------------------------------------------
// Server

Server::Server(boost::asio::io_context& ioc, ServerOptions options,
               const rpc::Dispatcher& dispatcher, Routes routes)
    : impl_(std::make_shared<Impl>(ioc, std::move(options), dispatcher, std::move(routes))) {}

Server::~Server() {
  impl_->stop();
}

Result<std::uint16_t> Server::listen() {
  return impl_->listen();
}
void Server::start() {
  impl_->start();
}
void Server::stop() {
  impl_->stop();
}
std::uint16_t Server::port() const {
  return impl_->port();
}
std::size_t Server::connection_count() const {
  return impl_->open_connections();
}
void Server::broadcast(const std::string& message) {
  impl_->broadcast(message);
}

}  // namespace hearth::net
