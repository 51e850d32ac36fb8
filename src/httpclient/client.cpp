// The daemon's HTTP/1.1 client: connections, the keep-alive pool, one exchange, redirects, and
// cancellation (deadline, Abort, shutdown). Responses are parsed by ResponseReader.
//
// Each request runs as its own coroutine on a strand of the client's executor. Everything that
// may stop it (the deadline timer, Abort, shutdown) is posted to that strand and works by
// closing the connection in use (or cancelling the resolver), so the pending operation completes
// with an error and the coroutine reads why from Exchange::stop. Connections in the idle pool have
// no operation pending and belong to the pool (under its mutex) until a request takes one.

#include "httpclient/client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <deque>
#include <map>
#include <mutex>

#include "common/ascii.hpp"
#include "httpclient/response_reader.hpp"

namespace hearth::httpclient {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);

/// Size of each read from a connection.
constexpr std::size_t kReadChunk = std::size_t{16} * 1024;
/// A redirect's own body is read and dropped so the connection can be reused, up to this much;
/// a longer one closes the connection instead.
constexpr std::size_t kMaxDrainBytes = std::size_t{64} * 1024;

Error failure(std::string message) {
  return Error::make(ErrorCode::kHandlerError, std::move(message));
}

/// No connection could be made: the name does not resolve, or nothing accepts at its addresses
/// (data.reason "unreachable", which callers may tell apart from a failure mid-exchange).
Error unreachable(std::string message) {
  return Error::make(ErrorCode::kHandlerError, std::move(message),
                     boost::json::object{{"reason", "unreachable"}});
}

using ascii::lower;

bool idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS" || method == "TRACE";
}

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/// Refuses what the client sets itself or what would corrupt the request.
Status check_request(const Request& request) {
  if (!is_token(request.method)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "not a valid HTTP method: '" + request.method + "'");
  }
  for (const auto& [name, value] : request.headers) {
    if (!is_token(name)) {
      return Error::make(ErrorCode::kInvalidParams, "not a valid header name: '" + name + "'");
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return Error::make(ErrorCode::kInvalidParams,
                         "the value of header " + name + " contains CR, LF or NUL");
    }
    const auto key = lower(name);
    if (key == "host" || key == "content-length" || key == "connection" ||
        key == "transfer-encoding") {
      return Error::make(ErrorCode::kInvalidParams,
                         "header " + name + " is set by the HTTP client and may not be given");
    }
  }
  return {};
}

/// A reason for a failed TLS handshake: OpenSSL's verification result when there is one
/// ("self-signed certificate", "hostname mismatch"), which says more than the error code.
std::string tls_reason(const error_code& ec, SSL* ssl) {
  std::string reason = ec.message();
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    reason += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  }
  return reason;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Connections

namespace {

struct Connection {
  Connection(const asio::any_io_executor& executor, std::string origin_key)
      : origin(std::move(origin_key)), socket(executor) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { close(); }

  void close() {
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  /// For a connection taken from the pool: still open, and the peer has neither closed it nor
  /// sent anything unasked (both mean it cannot carry another exchange).
  bool looks_alive() {
    if (!socket.is_open()) return false;
    if (tls && SSL_pending(tls->native_handle()) > 0) return false;
    char byte = 0;
    const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  std::string origin;
  tcp::socket socket;
  std::optional<ssl::stream<tcp::socket&>> tls;  ///< over `socket` for https
  boost::beast::flat_buffer buffer;              ///< read-ahead; empty between exchanges
  std::string peer;                              ///< the address connected to
  Clock::time_point idle_since;
  bool reused = false;  ///< taken from the pool (a failure may mean it had gone stale)
};

// Both stream types through one set of calls.
template <class Stream, class Message>
asio::awaitable<std::tuple<error_code, std::size_t>> write_on(Stream& stream, Message& message) {
  co_return co_await http::async_write(stream, message, kUseTuple);
}
asio::awaitable<std::tuple<error_code, std::size_t>> write_request(
    Connection& c, http::request<http::string_body>& request) {
  if (c.tls) {
    co_return co_await write_on(*c.tls, request);
  }
  co_return co_await write_on(c.socket, request);
}
asio::awaitable<std::tuple<error_code, std::size_t>> read_some(Connection& c,
                                                               asio::mutable_buffer into) {
  if (c.tls) {
    co_return co_await c.tls->async_read_some(into, kUseTuple);
  }
  co_return co_await c.socket.async_read_some(into, kUseTuple);
}

/// One request in flight: its strand, deadline timer, resolver and the connection it is using,
/// which is what cancel() closes.
struct Exchange {
  enum class Stop { kNone, kTimeout, kAbort, kShutdown };

  explicit Exchange(asio::strand<asio::any_io_executor> s)
      : strand(std::move(s)), timer(strand), resolver(strand) {}

  /// On the strand only.
  void cancel(Stop why) {
    if (stop != Stop::kNone) return;
    stop = why;
    resolver.cancel();
    timer.cancel();
    if (current != nullptr) current->close();
  }

  /// The error for a stopped exchange, or nullopt while it may go on.
  std::optional<Error> stopped() const {
    switch (stop) {
      case Stop::kNone:
        return std::nullopt;
      case Stop::kTimeout:
        return Error::make(ErrorCode::kTimeout, "no complete response within " +
                                                    std::to_string(timeout.count()) + " ms");
      case Stop::kAbort:
        return failure("aborted");
      case Stop::kShutdown:
        return failure("the daemon is stopping");
    }
    return std::nullopt;
  }

  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;
  tcp::resolver resolver;
  Connection* current = nullptr;
  Stop stop = Stop::kNone;
  std::chrono::milliseconds timeout{0};
};

/// Marks the connection cancel() must close while an exchange uses it.
class Using {
 public:
  Using(Exchange& ex, Connection* c) : ex_(ex) { ex_.current = c; }
  ~Using() { ex_.current = nullptr; }
  Using(const Using&) = delete;
  Using& operator=(const Using&) = delete;

 private:
  Exchange& ex_;
};

/// What one exchange produced: the response, and where to go next when it is a redirect to
/// follow.
struct Outcome {
  Response response;
  std::optional<std::string> location;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Abort

struct Abort::State {
  std::mutex mutex;
  bool fired = false;
  std::function<void()> hook;  ///< stops the request using this handle
};

Abort::Abort() : state(std::make_shared<State>()) {}

void Abort::operator()() const {
  std::function<void()> hook;
  {
    std::lock_guard lock(state->mutex);
    if (state->fired) return;
    state->fired = true;
    hook = std::move(state->hook);
  }
  if (hook) hook();
}

// ---------------------------------------------------------------------------------------------
// Client state: the TLS context, the idle pool and the requests in flight.

struct Client::State : std::enable_shared_from_this<Client::State> {
  State(asio::any_io_executor ex, Options opts)
      : executor(std::move(ex)), options(opts), sweep(executor) {}

  /// The TLS context, made for the first https request: reading the system CA store costs
  /// start-up time and memory that a daemon calling only plain-HTTP services never needs. Null,
  /// with `error` saying why, when the store cannot be read.
  ssl::context* tls_context(std::string& error) {
    std::lock_guard lock(tls_mutex);
    if (!tls) {
      try {
        auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
        context->set_default_verify_paths();
        context->set_verify_mode(ssl::verify_peer);
        SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
        tls = std::move(context);
      } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
      }
    }
    return tls.get();
  }

  /// The most recently used idle connection to `origin` that is still usable, or null.
  std::unique_ptr<Connection> take_idle(const std::string& origin) {
    std::vector<std::unique_ptr<Connection>> dead;
    std::unique_ptr<Connection> found;
    {
      std::lock_guard lock(mutex);
      auto it = idle.find(origin);
      const auto now = Clock::now();
      while (it != idle.end() && !it->second.empty() && !found) {
        auto c = std::move(it->second.back());
        it->second.pop_back();
        if (now - c->idle_since < options.idle_timeout && c->looks_alive()) {
          found = std::move(c);
        } else {
          dead.push_back(std::move(c));
        }
      }
      if (it != idle.end() && it->second.empty()) idle.erase(it);
    }
    if (found) found->reused = true;
    return found;  // `dead` closes as it goes
  }

  /// Keeps a connection whose exchange completed cleanly, or closes it.
  void put_idle(std::unique_ptr<Connection> c) {
    std::lock_guard lock(mutex);
    auto& list = idle[c->origin];
    if (stopped || list.size() >= options.max_idle_per_origin || options.max_idle_per_origin == 0) {
      if (list.empty()) idle.erase(c->origin);
      return;  // `c` closes
    }
    c->idle_since = Clock::now();
    list.push_back(std::move(c));
    arm_sweep();
  }

  /// Under the mutex: closes idle connections at their idle timeout.
  void arm_sweep() {
    if (sweep_armed || stopped) return;
    sweep_armed = true;
    sweep.expires_after(options.idle_timeout);
    sweep.async_wait([weak = weak_from_this()](const error_code& ec) {
      if (ec) return;
      if (auto self = weak.lock()) self->on_sweep();
    });
  }

  void on_sweep() {
    std::vector<std::unique_ptr<Connection>> dead;
    std::lock_guard lock(mutex);
    sweep_armed = false;
    if (stopped) return;
    const auto now = Clock::now();
    for (auto it = idle.begin(); it != idle.end();) {
      auto& list = it->second;
      for (auto c = list.begin(); c != list.end();) {
        if (now - (*c)->idle_since >= options.idle_timeout) {
          dead.push_back(std::move(*c));
          c = list.erase(c);
        } else {
          ++c;
        }
      }
      it = list.empty() ? idle.erase(it) : std::next(it);
    }
    if (!idle.empty()) arm_sweep();
  }

  /// Registers a request so shutdown() can stop it; false once stopped.
  bool enter(std::uint64_t id, const std::shared_ptr<Exchange>& ex) {
    std::lock_guard lock(mutex);
    if (stopped) return false;
    active[id] = ex;
    return true;
  }
  void leave(std::uint64_t id) {
    std::lock_guard lock(mutex);
    active.erase(id);
  }

  void shutdown() {
    std::map<std::string, std::deque<std::unique_ptr<Connection>>> closing;
    std::vector<std::weak_ptr<Exchange>> running;
    {
      std::lock_guard lock(mutex);
      if (stopped) return;
      stopped = true;
      closing.swap(idle);
      for (auto& [id, ex] : active) running.push_back(ex);
      sweep.cancel();
    }
    for (auto& weak : running) {
      if (auto ex = weak.lock()) {
        asio::post(ex->strand, [ex] { ex->cancel(Exchange::Stop::kShutdown); });
      }
    }
  }

  asio::any_io_executor executor;
  Options options;
  std::mutex tls_mutex;
  std::unique_ptr<ssl::context> tls;  ///< made by tls_context()
  std::atomic<std::uint64_t> opened{0};
  std::atomic<std::uint64_t> next_id{0};

  std::mutex mutex;  ///< guards everything below
  bool stopped = false;
  std::map<std::string, std::deque<std::unique_ptr<Connection>>> idle;
  std::map<std::uint64_t, std::weak_ptr<Exchange>> active;
  asio::steady_timer sweep;
  bool sweep_armed = false;
};

// ---------------------------------------------------------------------------------------------
// One request

namespace {

using State = Client::State;

/// Resolves the URL's host, asks `allow`, connects and (https) completes the TLS handshake.
asio::awaitable<Result<std::unique_ptr<Connection>>> open(State& state, Exchange& ex,
                                                          const Request& request, const Url& url) {
  std::vector<asio::ip::address> addresses;
  error_code literal_ec;
  const auto literal = asio::ip::make_address(url.host, literal_ec);
  if (!literal_ec) {
    addresses.push_back(literal);
  } else {
    if (auto e = ex.stopped()) co_return std::move(*e);
    auto [ec, results] = co_await ex.resolver.async_resolve(
        url.host, std::to_string(url.port), tcp::resolver::numeric_service, kUseTuple);
    if (auto e = ex.stopped()) co_return std::move(*e);
    if (ec) co_return unreachable("cannot resolve " + url.host + ": " + ec.message());
    for (const auto& entry : results) {
      const auto address = entry.endpoint().address();
      if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
        addresses.push_back(address);
      }
    }
    if (addresses.empty()) co_return unreachable("cannot resolve " + url.host + ": no addresses");
  }
  if (request.allow) {
    std::vector<std::string> texts;
    texts.reserve(addresses.size());
    for (const auto& a : addresses) texts.push_back(a.to_string());
    if (auto refused = request.allow(url, texts)) co_return std::move(*refused);
  }

  auto conn = std::make_unique<Connection>(state.executor, url.origin());
  Using in_use(ex, conn.get());
  error_code last;
  bool connected = false;
  for (const auto& address : addresses) {
    if (auto e = ex.stopped()) co_return std::move(*e);
    auto [ec] = co_await conn->socket.async_connect(tcp::endpoint(address, url.port), kUseTuple);
    if (auto e = ex.stopped()) co_return std::move(*e);
    if (!ec) {
      connected = true;
      conn->peer = address.to_string();
      break;
    }
    last = ec;
    conn->close();
  }
  if (!connected) {
    co_return unreachable("cannot connect to " + url.authority() + ": " + last.message());
  }
  state.opened.fetch_add(1, std::memory_order_relaxed);
  error_code ignored;
  conn->socket.set_option(tcp::no_delay(true), ignored);

  if (url.tls) {
    std::string tls_error;
    ssl::context* context = state.tls_context(tls_error);
    if (context == nullptr) {
      co_return failure("cannot set up TLS (the system CA store): " + tls_error);
    }
    conn->tls.emplace(conn->socket, *context);
    SSL* ssl = conn->tls->native_handle();
    if (literal_ec) {
      // A name: sent as SNI (never an address, RFC 6066) and checked against the certificate.
      SSL_set_tlsext_host_name(ssl, url.host.c_str());
      SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      if (SSL_set1_host(ssl, url.host.c_str()) != 1) {
        co_return failure("cannot set up TLS host name verification for " + url.host);
      }
    } else if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str()) != 1) {
      co_return failure("cannot set up TLS address verification for " + url.host);
    }
    if (auto e = ex.stopped()) co_return std::move(*e);
    auto [ec] = co_await conn->tls->async_handshake(ssl::stream_base::client, kUseTuple);
    if (auto e = ex.stopped()) co_return std::move(*e);
    if (ec) {
      co_return failure("TLS handshake with " + url.authority() +
                        " failed: " + tls_reason(ec, ssl));
    }
  }
  co_return conn;
}

/// What a response body is for.
enum class Sink { kCollect, kStream, kDrain };

/// Feeds `reader` the connection's buffered bytes, reading more while they do not complete the
/// head (or, with `body`, the whole response). `received` is set once any byte arrives.
asio::awaitable<Status> feed(Exchange& ex, Connection& conn, ResponseReader& reader,
                             const ResponseReader::BodySink& sink, bool body, const Url& url,
                             bool& received) {
  auto& buffer = conn.buffer;
  const auto finished = [&] {
    return body ? reader.done() || reader.stopped() : reader.head_done();
  };
  const auto cannot_read = [&](const std::string& why) {
    return failure("cannot read the response from " + url.authority() + ": " + why);
  };
  bool closed = false;
  while (!finished()) {
    if (buffer.size() > 0) {
      const std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
      auto used = reader.put(data, sink);
      if (!used.ok()) {
        if (reader.too_large()) co_return std::move(used).error();
        co_return cannot_read(used.error().message);
      }
      buffer.consume(*used);
      if (finished()) break;
      if (*used > 0 && buffer.size() > 0) continue;  // the reader stopped at a boundary
    }
    if (closed) {
      auto end = reader.close();
      if (!end.ok()) co_return cannot_read(end.error().message);
      break;
    }
    if (auto e = ex.stopped()) co_return std::move(*e);
    auto [ec, n] = co_await read_some(conn, buffer.prepare(kReadChunk));
    if (auto e = ex.stopped()) co_return std::move(*e);
    buffer.commit(n);
    received = received || n > 0;
    // The server closing the connection (on TLS also without close_notify: a body that ends with
    // the connection promised no length either way) is for the reader to judge.
    if (ec == asio::error::eof || ec == ssl::error::stream_truncated) {
      closed = true;
    } else if (ec) {
      co_return cannot_read(ec.message());
    }
  }
  co_return Status{};
}

/// One request/response on `conn`. The connection goes back to the pool when the exchange ended
/// cleanly and it can carry another, else it is closed. `received` tells the caller whether any
/// byte of a response arrived (a reused connection that failed before is worth one retry).
asio::awaitable<Result<Outcome>> exchange(State& state, Exchange& ex,
                                          std::unique_ptr<Connection> conn, const Request& request,
                                          const Url& url, const std::string& method,
                                          const Headers& headers,
                                          const std::optional<std::string>& body, bool& sent,
                                          bool& received) {
  Using in_use(ex, conn.get());
  sent = false;
  received = false;
  http::request<http::string_body> req;
  req.version(11);
  req.method_string(method);
  req.target(url.target);
  req.set(http::field::host, url.host_header());
  for (const auto& [name, value] : headers) req.insert(name, value);
  if (body) {
    req.body() = *body;
    req.content_length(body->size());
  } else if (method == "POST" || method == "PUT" || method == "PATCH") {
    req.content_length(0);
  }

  if (auto e = ex.stopped()) co_return std::move(*e);
  auto [write_ec, written] = co_await write_request(*conn, req);
  sent = written > 0;
  if (auto e = ex.stopped()) co_return std::move(*e);
  if (write_ec) {
    co_return failure("cannot send the request to " + url.authority() + ": " + write_ec.message());
  }

  const bool follow = request.max_redirects > 0;
  const bool streaming = static_cast<bool>(request.on_body);
  // A streamed body is bounded by its consumer, a collected one here (a redirect's, drained,
  // stops at kMaxDrainBytes either way).
  ResponseReader reader(
      {.max_body = streaming ? std::nullopt : std::optional(request.max_response_bytes),
       .head_request = method == "HEAD"});
  Sink sink = Sink::kCollect;
  std::string collected;
  bool overflow = false;
  const ResponseReader::BodySink deliver = [&](std::string_view piece) {
    switch (sink) {
      case Sink::kStream:
        return request.on_body(piece);
      case Sink::kCollect:
        if (collected.size() + piece.size() > request.max_response_bytes) {
          overflow = true;
          return false;
        }
        collected.append(piece);
        return true;
      case Sink::kDrain:
        if (collected.size() + piece.size() > kMaxDrainBytes) return false;  // not worth keeping
        collected.append(piece);
        return true;
    }
    return false;
  };
  HEARTH_CO_RETURN_IF_ERROR(co_await feed(ex, *conn, reader, deliver, false, url, received));

  Outcome outcome;
  Response& response = outcome.response;
  response.status = reader.status();
  response.url = url.origin() + url.target;
  response.headers = reader.headers();
  sink = streaming ? Sink::kStream : Sink::kCollect;
  if (follow && is_redirect(response.status)) {
    if (auto location = response.header("location")) {
      outcome.location = std::string(*location);
      sink = Sink::kDrain;
    }
  }
  if (sink != Sink::kDrain && request.on_headers) {
    request.on_headers(response.status, response.headers);
  }

  HEARTH_CO_RETURN_IF_ERROR(co_await feed(ex, *conn, reader, deliver, true, url, received));
  if (overflow) {
    co_return failure("response larger than " + std::to_string(request.max_response_bytes) +
                      " bytes");
  }
  if (reader.stopped()) co_return outcome;  // the consumer stopped: the connection closes
  if (sink == Sink::kCollect) response.body = std::move(collected);
  if (reader.keep_alive() && conn->buffer.size() == 0 && !ex.stopped()) {
    ex.current = nullptr;
    state.put_idle(std::move(conn));
  }
  co_return outcome;
}

/// One URL: a pooled connection when there is one (and a fresh one if that turns out stale),
/// else a new connection.
asio::awaitable<Result<Outcome>> one_hop(State& state, Exchange& ex, const Request& request,
                                         const Url& url, const std::string& method,
                                         const Headers& headers,
                                         const std::optional<std::string>& body) {
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn;
    if (attempt == 0) conn = state.take_idle(url.origin());
    if (conn) {
      if (request.allow) {
        if (auto refused = request.allow(url, {conn->peer})) {
          state.put_idle(std::move(conn));
          co_return std::move(*refused);
        }
      }
    } else {
      auto opened = co_await open(state, ex, request, url);
      if (!opened.ok()) co_return std::move(opened).error();
      conn = std::move(opened).value();
    }
    const bool reused = conn->reused;
    bool sent = false;
    bool received = false;
    auto result = co_await exchange(state, ex, std::move(conn), request, url, method, headers, body,
                                    sent, received);
    // A reused connection the server had already given up on fails before any response byte;
    // the request then never reached the application, or is safe to send again.
    if (!result.ok() && reused && attempt == 0 && !received && !ex.stopped() &&
        (idempotent(method) || !sent)) {
      continue;
    }
    co_return result;
  }
}

asio::awaitable<Result<Response>> perform(State& state, Exchange& ex, const Request& request) {
  HEARTH_CO_RETURN_IF_ERROR(check_request(request));
  auto parsed = parse_url(request.url);
  if (!parsed.ok()) co_return std::move(parsed).error();
  Url url = std::move(parsed).value();
  std::string method = request.method;
  Headers headers = request.headers;
  std::optional<std::string> body = request.body;

  for (int hop = 0;; ++hop) {
    auto outcome = co_await one_hop(state, ex, request, url, method, headers, body);
    if (!outcome.ok()) co_return std::move(outcome).error();
    if (!outcome->location) co_return std::move(outcome->response);
    if (hop >= request.max_redirects) {
      co_return failure("too many redirects (more than " + std::to_string(request.max_redirects) +
                        ")");
    }
    auto next = resolve_location(url, *outcome->location);
    if (!next.ok()) {
      co_return failure("cannot follow the redirect to '" + *outcome->location +
                        "': " + next.error().message);
    }
    if (url.tls && !next->tls) {
      co_return failure("refusing to follow a redirect from https to http (" + next->origin() +
                        ")");
    }
    const int status = outcome->response.status;
    if (status == 303 ? method != "HEAD" : ((status == 301 || status == 302) && method == "POST")) {
      method = "GET";
      body.reset();
      std::erase_if(headers, [](const auto& h) { return lower(h.first).starts_with("content-"); });
    }
    if (next->origin() != url.origin()) {
      // Credentials meant for one origin are not handed to another.
      std::erase_if(headers, [](const auto& h) {
        const auto key = lower(h.first);
        return key == "authorization" || key == "cookie" || key == "proxy-authorization";
      });
    }
    url = std::move(next).value();
  }
}

asio::awaitable<std::optional<Result<Response>>> run(std::shared_ptr<State> state,
                                                     std::shared_ptr<Exchange> ex, Request request,
                                                     Abort abort) {
  const auto id = state->next_id.fetch_add(1);
  if (!state->enter(id, ex)) co_return Result<Response>(failure("the daemon is stopping"));
  {
    std::lock_guard lock(abort.state->mutex);
    if (abort.state->fired) {
      state->leave(id);
      co_return Result<Response>(failure("aborted"));
    }
    abort.state->hook = [weak = std::weak_ptr<Exchange>(ex)] {
      if (auto e = weak.lock()) {
        asio::post(e->strand, [e] { e->cancel(Exchange::Stop::kAbort); });
      }
    };
  }
  if (request.timeout.count() > 0) {
    ex->timeout = request.timeout;
    ex->timer.expires_after(request.timeout);
    ex->timer.async_wait([weak = std::weak_ptr<Exchange>(ex)](const error_code& ec) {
      if (ec) return;
      if (auto e = weak.lock()) e->cancel(Exchange::Stop::kTimeout);
    });
  }
  auto result = co_await perform(*state, *ex, request);
  {
    std::lock_guard lock(abort.state->mutex);
    abort.state->hook = nullptr;
  }
  state->leave(id);
  ex->timer.cancel();
  // A failure is reported as the stop that caused it, whatever error the I/O saw first.
  if (!result.ok()) {
    if (auto e = ex->stopped()) co_return Result<Response>(std::move(*e));
  }
  co_return std::move(result);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Client::Client(asio::any_io_executor executor) : Client(std::move(executor), Options{}) {}

Client::Client(asio::any_io_executor executor, Options options)
    : state_(std::make_shared<State>(std::move(executor), options)) {}

Client::~Client() {
  shutdown();
}

asio::awaitable<Result<Response>> Client::request(Request request, Abort abort) {
  auto state = state_;
  auto ex = std::make_shared<Exchange>(asio::make_strand(state->executor));
  auto result = co_await asio::co_spawn(
      ex->strand, run(state, ex, std::move(request), std::move(abort)), asio::use_awaitable);
  co_return std::move(*result);
}

void Client::shutdown() {
  state_->shutdown();
}

std::uint64_t Client::connections_opened() const {
  return state_->opened.load(std::memory_order_relaxed);
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (ascii::iequals(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

}  // namespace hearth::httpclient
