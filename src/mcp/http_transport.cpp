#include "mcp/http_transport.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <mutex>

#include "common/ascii.hpp"
#include "httpclient/sse.hpp"

namespace hearth::mcp {

namespace asio = boost::asio;

namespace {

using ascii::lower;

std::string excerpt(std::string_view body) {
  std::string out(body.substr(0, 300));
  for (auto& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

struct HttpTransport::State : std::enable_shared_from_this<HttpTransport::State> {
  asio::any_io_executor executor;
  std::shared_ptr<httpclient::Client> client;
  HttpServer server;
  std::string label;
  Allow allow;
  std::size_t max_message = 0;

  std::mutex mutex;
  Handlers handlers;
  bool open = false;
  bool closed = false;
  std::string session_id;
  std::string protocol_version;
  std::map<std::int64_t, httpclient::Abort> in_flight;  ///< POSTs of requests, by id
  httpclient::Abort listen_abort;
  /// The GET stream's retry timer, used only on its strand (cancelled through a post).
  std::shared_ptr<asio::strand<asio::any_io_executor>> listen_strand;
  std::shared_ptr<asio::steady_timer> listen_timer;

  void cancel_listen_timer() {
    if (listen_strand) {
      asio::post(*listen_strand, [t = listen_timer] {
        if (t) t->cancel();
      });
    }
  }

  void deliver(json::value message) {
    std::function<void(json::value)> cb;
    {
      std::lock_guard lock(mutex);
      if (closed) return;
      cb = handlers.on_message;
    }
    if (cb) cb(std::move(message));
  }

  void deliver_closed(Error reason) {
    std::function<void(Error)> cb;
    {
      std::lock_guard lock(mutex);
      if (closed) return;
      closed = true;
      cb = std::move(handlers.on_closed);
      handlers = {};
      for (auto& [_, abort] : in_flight) abort();
      in_flight.clear();
      listen_abort();
      cancel_listen_timer();
    }
    if (cb) cb(std::move(reason));
  }

  /// A JSON-RPC error response to request `id`, as if the server had sent it.
  void fail_request(const json::value& id, const std::string& message, json::object data = {},
                    ErrorCode code = ErrorCode::kHandlerError) {
    json::object error;
    error["code"] = static_cast<int>(code);
    error["message"] = message;
    data["origin"] = "hearth";  // the session reports it as it is (see session.hpp)
    error["data"] = std::move(data);
    json::object response;
    response["jsonrpc"] = "2.0";
    response["id"] = id;
    response["error"] = std::move(error);
    deliver(std::move(response));
  }

  httpclient::Request base_request(std::string method) {
    httpclient::Request r;
    r.method = std::move(method);
    r.url = server.url;
    r.timeout = std::chrono::milliseconds(0);
    r.max_response_bytes = max_message;
    r.allow = allow;
    for (const auto& h : server.headers) r.headers.push_back(h);
    std::lock_guard lock(mutex);
    if (!session_id.empty()) r.headers.emplace_back("Mcp-Session-Id", session_id);
    if (!protocol_version.empty()) r.headers.emplace_back("MCP-Protocol-Version", protocol_version);
    return r;
  }

  /// Reads a response body that is JSON or an event stream, delivering every message in it.
  struct Reader {
    std::shared_ptr<State> state;
    bool sse = false;
    int status = 0;
    std::string content_type;
    std::string body;
    httpclient::SseParser parser;
    bool broken = false;

    explicit Reader(std::shared_ptr<State> s) : state(std::move(s)), parser(state->max_message) {}

    void headers(int code, const std::vector<std::pair<std::string, std::string>>& list) {
      status = code;
      for (const auto& [name, value] : list) {
        if (name == "content-type") content_type = lower(value);
        if (name == "mcp-session-id" && code / 100 == 2) {
          std::lock_guard lock(state->mutex);
          if (state->session_id.empty()) state->session_id = value;
        }
      }
      sse = content_type.starts_with("text/event-stream");
    }

    bool chunk(std::string_view data) {
      if (status / 100 != 2 || !sse) {
        if (body.size() + data.size() > state->max_message) {
          broken = true;
          return false;
        }
        body.append(data);
        return true;
      }
      std::vector<httpclient::SseEvent> events;
      if (!parser.feed(data, events)) {
        broken = true;
        return false;
      }
      for (auto& e : events) {
        if (e.event != "message" || e.data.empty()) continue;
        auto message = json::parse_text(e.data);
        if (message.ok()) {
          state->deliver(std::move(message).value());
        } else {
          spdlog::warn("{} sent an event that is not JSON", state->label);
        }
      }
      return true;
    }
  };

  /// POSTs one message; for a request (`id` not null), makes sure a response reaches the session.
  asio::awaitable<void> post(json::value message, json::value id) {
    auto self = shared_from_this();
    httpclient::Request request = base_request("POST");
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json, text/event-stream");
    request.body = json::serialize(message);
    const bool is_request = !id.is_null();
    const bool carried_session = [&] {
      std::lock_guard lock(mutex);
      return !session_id.empty();
    }();
    if (!is_request) request.timeout = std::chrono::milliseconds(30000);
    auto reader = std::make_shared<Reader>(self);
    request.on_headers = [reader](int status, const auto& headers) {
      reader->headers(status, headers);
    };
    request.on_body = [reader](std::string_view data) { return reader->chunk(data); };
    httpclient::Abort abort;
    if (is_request && id.is_int64()) {
      std::lock_guard lock(mutex);
      if (closed) co_return;
      in_flight[id.get_int64()] = abort;
    }
    auto response = co_await client->request(std::move(request), abort);
    if (is_request && id.is_int64()) {
      std::lock_guard lock(mutex);
      in_flight.erase(id.get_int64());
    }
    {
      std::lock_guard lock(mutex);
      if (closed) co_return;
    }
    if (!response.ok()) {
      if (is_request) {
        const auto& e = response.error();
        json::object data;
        if (e.data.is_object()) data = e.data.get_object();
        if (e.code == ErrorCode::kPermissionDenied) {
          fail_request(id, e.message, std::move(data), e.code);
        } else {
          fail_request(id, label + " could not be reached: " + e.message, std::move(data));
        }
      } else {
        spdlog::warn("{}: a notification was not delivered: {}", label, response.error().message);
      }
      co_return;
    }
    const int status = response.value().status;
    if (status == 404 && carried_session) {
      deliver_closed(Error::make(ErrorCode::kHandlerError,
                                 label + " ended the session (HTTP 404); a new one starts at the "
                                         "next call"));
      co_return;
    }
    if (status / 100 != 2) {
      json::object data;
      data["status"] = status;
      data["body"] = excerpt(reader->body);
      if (is_request) {
        fail_request(id,
                     label + " answered HTTP " + std::to_string(status) +
                         (reader->body.empty() ? "" : ": " + excerpt(reader->body)),
                     std::move(data));
      } else {
        spdlog::warn("{} answered HTTP {} to a notification", label, status);
      }
      co_return;
    }
    if (reader->broken) {
      if (is_request) {
        fail_request(
            id, label + " sent a message larger than " + std::to_string(max_message) + " bytes");
      }
      co_return;
    }
    if (!reader->sse && !reader->body.empty() &&
        reader->content_type.starts_with("application/json")) {
      auto parsed = json::parse_text(reader->body);
      if (!parsed.ok()) {
        if (is_request) fail_request(id, label + " answered with invalid JSON");
        co_return;
      }
      deliver(std::move(parsed).value());
      co_return;
    }
    // 202 for notifications; a stream that ended: if it ended without our response (the
    // server dropped it), the session's time limit reports it.
  }

  /// The GET stream for what the server sends on its own.
  asio::awaitable<void> listen() {
    auto self = shared_from_this();
    std::chrono::milliseconds backoff(1000);
    for (;;) {
      httpclient::Request request = base_request("GET");
      request.headers.emplace_back("Accept", "text/event-stream");
      auto reader = std::make_shared<Reader>(self);
      request.on_headers = [reader](int status, const auto& headers) {
        reader->headers(status, headers);
      };
      request.on_body = [reader](std::string_view data) { return reader->chunk(data); };
      httpclient::Abort abort;
      {
        std::lock_guard lock(mutex);
        if (closed) co_return;
        listen_abort = abort;
      }
      auto response = co_await client->request(std::move(request), abort);
      {
        std::lock_guard lock(mutex);
        if (closed) co_return;
      }
      if (response.ok()) {
        const int status = response.value().status;
        if (status == 405 || status == 404) co_return;  // no such stream (or session gone)
        if (status / 100 == 2 && reader->sse) backoff = std::chrono::milliseconds(1000);
      }
      {
        std::lock_guard lock(mutex);
        if (closed) co_return;
      }
      // On the listen strand: a close() after the check above cancels this wait.
      listen_timer->expires_after(backoff);
      co_await listen_timer->async_wait(asio::as_tuple(asio::use_awaitable));
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
    }
  }
};

HttpTransport::HttpTransport(asio::any_io_executor executor,
                             std::shared_ptr<httpclient::Client> client, HttpServer server,
                             std::string label, Allow allow, std::size_t max_message)
    : state_(std::make_shared<State>()) {
  state_->executor = std::move(executor);
  state_->client = std::move(client);
  state_->server = std::move(server);
  state_->label = std::move(label);
  state_->allow = std::move(allow);
  state_->max_message = max_message;
}

HttpTransport::~HttpTransport() {
  close();
}

Status HttpTransport::open(Handlers handlers) {
  std::lock_guard lock(state_->mutex);
  state_->handlers = std::move(handlers);
  state_->open = true;
  return {};
}

void HttpTransport::send(json::value message) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
  }
  json::value id = nullptr;
  if (const auto* o = message.if_object()) {
    if (o->contains("method") && o->contains("id")) id = o->at("id");
    // Abandoning a request: stop reading its stream too.
    if (const auto* method = o->if_contains("method");
        method && method->is_string() && method->get_string() == "notifications/cancelled") {
      const auto* rid = json::member(o->at("params"), "requestId");
      if (rid && rid->is_int64()) {
        std::lock_guard lock(state_->mutex);
        if (auto it = state_->in_flight.find(rid->get_int64()); it != state_->in_flight.end()) {
          it->second();
          state_->in_flight.erase(it);
        }
      }
    }
  }
  asio::co_spawn(state_->executor, state_->post(std::move(message), std::move(id)), asio::detached);
}

void HttpTransport::initialized(std::string_view protocol_version) {
  {
    std::lock_guard lock(state_->mutex);
    state_->protocol_version = std::string(protocol_version);
    if (state_->listen_strand) return;  // already listening
    state_->listen_strand =
        std::make_shared<asio::strand<asio::any_io_executor>>(asio::make_strand(state_->executor));
    state_->listen_timer = std::make_shared<asio::steady_timer>(*state_->listen_strand);
  }
  asio::co_spawn(*state_->listen_strand, state_->listen(), asio::detached);
}

void HttpTransport::close() {
  std::string session;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed && !state_->open) return;
    state_->closed = true;
    state_->open = false;
    state_->handlers = {};
    for (auto& [_, abort] : state_->in_flight) abort();
    state_->in_flight.clear();
    state_->listen_abort();
    state_->cancel_listen_timer();
    session = state_->session_id;
  }
  if (session.empty()) return;
  // End the session on the server; nobody waits for the answer.
  auto state = state_;
  asio::co_spawn(
      state->executor,
      [state]() -> asio::awaitable<void> {
        httpclient::Request request = state->base_request("DELETE");
        request.timeout = std::chrono::milliseconds(2000);
        (void)co_await state->client->request(std::move(request));
      },
      asio::detached);
}

}  // namespace hearth::mcp
