#include "mcpserver/http.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <deque>
#include <map>
#include <mutex>

#include "common/ascii.hpp"
#include "net/event_stream.hpp"

namespace hearth::mcpserver {

namespace asio = boost::asio;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Where a session's notifications go: its GET stream when one is open, else a bounded backlog.
struct Mailbox {
  std::mutex mu;
  /// Keeps the session alive between requests; reset when the session ends (the session's push
  /// refers to this mailbox).
  std::shared_ptr<Session> session;
  std::shared_ptr<net::EventStream> stream;
  std::deque<std::string> backlog;
  std::size_t max_backlog = 256;
  std::chrono::steady_clock::time_point used = std::chrono::steady_clock::now();

  void push(std::string message) {
    std::lock_guard lock(mu);
    if (stream) {
      stream->send(message);
      return;
    }
    if (backlog.size() >= max_backlog) backlog.pop_front();
    backlog.push_back(std::move(message));
  }
};

net::HttpResponse json_response(int status, std::string body) {
  net::HttpResponse res;
  res.status = status;
  res.content_type = "application/json";
  res.body = std::move(body);
  return res;
}

net::HttpResponse rpc_error(int status, int code, std::string_view message) {
  json::object body{{"jsonrpc", "2.0"},
                    {"error", json::object{{"code", code}, {"message", message}}},
                    {"id", nullptr}};
  return json_response(status, json::dump(body));
}

bool accepts_type(const net::HttpRequest& req, std::string_view type) {
  auto accept = req.header("accept");
  if (!accept) return true;  // no Accept: anything
  std::string lower = ascii::lower(*accept);
  return lower.find(type) != std::string::npos || lower.find("*/*") != std::string::npos;
}

/// Whether `message` holds a request (something that is answered).
bool has_request(const json::value& message) {
  auto is_request = [](const json::value& m) {
    return m.is_object() && m.get_object().contains("method") && m.get_object().contains("id");
  };
  if (message.is_array()) {
    for (const auto& m : message.get_array()) {
      if (is_request(m)) return true;
    }
    return false;
  }
  return is_request(message);
}

bool wants_progress(const json::value& message) {
  const auto* params = json::member(message, "params");
  const auto* meta = params ? json::member(*params, "_meta") : nullptr;
  return meta != nullptr && json::member(*meta, "progressToken") != nullptr;
}

}  // namespace

class HttpTransport : public std::enable_shared_from_this<HttpTransport> {
 public:
  HttpTransport(Server& server, HttpOptions options)
      : server_(server), options_(std::move(options)) {}

  asio::awaitable<net::HttpResponse> handle(net::HttpRequest req) {
    if (auto version = req.header("mcp-protocol-version");
        version && !supported_version(trim(*version))) {
      co_return rpc_error(400, -32600,
                          "Bad Request: unsupported MCP-Protocol-Version " + std::string(*version));
    }
    if (req.method == "POST") {
      co_return co_await post(std::move(req));
    }
    if (req.method == "GET" || req.method == "HEAD") {
      co_return co_await get(req);
    }
    co_return remove(req);
  }

 private:
  std::shared_ptr<Session> session_for(const net::HttpRequest& req, bool& unknown) {
    unknown = false;
    auto id = req.header("mcp-session-id");
    if (!id) return nullptr;
    auto session = server_.find(std::string(trim(*id)));
    if (!session) {
      unknown = true;
      return nullptr;
    }
    std::lock_guard lock(mu_);
    if (auto it = mailboxes_.find(session->id()); it != mailboxes_.end()) {
      std::lock_guard box_lock(it->second->mu);
      it->second->used = std::chrono::steady_clock::now();
    }
    return session;
  }

  /// A new stateful session, after closing idle ones (and the least recently used past the cap).
  std::shared_ptr<Session> open_session() {
    auto box = std::make_shared<Mailbox>();
    box->max_backlog = options_.backlog;
    auto session = server_.open("http", [weak = std::weak_ptr<Mailbox>(box)](std::string message) {
      if (auto b = weak.lock()) b->push(std::move(message));
    });
    box->session = session;
    std::vector<std::shared_ptr<Session>> expired;
    {
      std::lock_guard lock(mu_);
      const auto now = std::chrono::steady_clock::now();
      for (auto it = mailboxes_.begin(); it != mailboxes_.end();) {
        bool idle = false;
        {
          std::lock_guard box_lock(it->second->mu);
          idle = !it->second->stream && now - it->second->used > options_.session_idle;
        }
        if (idle || !server_.find(it->first)) {
          if (auto s = server_.find(it->first)) expired.push_back(std::move(s));
          std::lock_guard box_lock(it->second->mu);
          it->second->session.reset();
          it = mailboxes_.erase(it);
        } else {
          ++it;
        }
      }
      while (mailboxes_.size() >= options_.max_sessions) {
        auto oldest = mailboxes_.begin();
        for (auto it = mailboxes_.begin(); it != mailboxes_.end(); ++it) {
          if (it->second->used < oldest->second->used) oldest = it;
        }
        if (auto s = server_.find(oldest->first)) expired.push_back(std::move(s));
        {
          std::lock_guard box_lock(oldest->second->mu);
          oldest->second->session.reset();
        }
        mailboxes_.erase(oldest);
      }
      mailboxes_[session->id()] = box;
    }
    for (const auto& s : expired) server_.close(s);
    return session;
  }

  asio::awaitable<net::HttpResponse> post(net::HttpRequest req) {
    auto type = req.header("content-type");
    if (!type || ascii::lower(*type).find("application/json") == std::string::npos) {
      co_return rpc_error(415, -32600, "Unsupported Media Type: send application/json");
    }
    if (!accepts_type(req, "application/json") && !accepts_type(req, "text/event-stream")) {
      co_return rpc_error(406, -32600,
                          "Not Acceptable: accept application/json and text/event-stream");
    }
    auto parsed = json::parse_text(req.body);
    if (!parsed.ok()) co_return rpc_error(400, -32700, "Parse error: " + parsed.error().message);
    json::value message = std::move(parsed).value();
    if (!message.is_object() && !message.is_array()) {
      co_return rpc_error(400, -32600, "Invalid Request: not a JSON-RPC message");
    }
    bool unknown = false;
    auto session = session_for(req, unknown);
    if (unknown) co_return rpc_error(404, -32001, "Session not found: initialize again");
    bool stateless = false;
    std::vector<std::pair<std::string, std::string>> headers;
    if (!session) {
      if (Server::is_initialize(message)) {
        session = open_session();
        headers.emplace_back("Mcp-Session-Id", session->id());
      } else {
        session = Server::stateless("http");
        stateless = true;
      }
    }
    if (!has_request(message)) {
      co_await server_.handle(session, std::move(message), {}, stateless);
      if (stateless) server_.close(session);
      net::HttpResponse res;
      res.status = 202;
      co_return res;
    }
    if (message.is_object() && wants_progress(message) && accepts_type(req, "text/event-stream")) {
      // Progress notifications, then the answer, as server-sent events.
      auto stream = std::make_shared<net::EventStream>(server_executor(), options_.keep_alive);
      asio::co_spawn(
          server_executor(),
          stream_answer(this->shared_from_this(), session, std::move(message), stream, stateless),
          asio::detached);
      net::HttpResponse res;
      res.status = 200;
      res.content_type = "text/event-stream";
      res.headers = std::move(headers);
      res.stream = stream;
      co_return res;
    }
    auto answer = co_await server_.handle(session, std::move(message), {}, stateless);
    if (stateless) server_.close(session);
    if (!answer) {
      net::HttpResponse res;
      res.status = 202;
      res.headers = std::move(headers);
      co_return res;
    }
    auto res = json_response(200, json::dump(*answer));
    res.headers = std::move(headers);
    co_return res;
  }

  static asio::awaitable<void> stream_answer(std::shared_ptr<HttpTransport> self,
                                             std::shared_ptr<Session> session, json::value message,
                                             std::shared_ptr<net::EventStream> stream,
                                             bool stateless) {
    RequestSink sink = [stream](const std::string& text) { stream->send(text); };
    auto answer = co_await self->server_.handle(session, std::move(message), sink, stateless);
    if (answer) stream->send(json::dump(*answer));
    stream->end();
    if (stateless) self->server_.close(session);
  }

  asio::awaitable<net::HttpResponse> get(const net::HttpRequest& req) {
    if (!accepts_type(req, "text/event-stream")) {
      co_return rpc_error(406, -32600, "Not Acceptable: the stream is text/event-stream");
    }
    bool unknown = false;
    auto session = session_for(req, unknown);
    if (unknown) co_return rpc_error(404, -32001, "Session not found: initialize again");
    if (!session) {
      net::HttpResponse res =
          rpc_error(405, -32600, "Method Not Allowed: a GET stream needs an Mcp-Session-Id");
      res.headers.emplace_back("Allow", "POST, DELETE");
      co_return res;
    }
    std::shared_ptr<Mailbox> box;
    {
      std::lock_guard lock(mu_);
      if (auto it = mailboxes_.find(session->id()); it != mailboxes_.end()) box = it->second;
    }
    if (!box) co_return rpc_error(404, -32001, "Session not found: initialize again");
    if (req.method == "HEAD") {
      net::HttpResponse head;
      head.content_type = "text/event-stream";
      co_return head;
    }
    auto stream = std::make_shared<net::EventStream>(server_executor(), options_.keep_alive);
    {
      std::lock_guard lock(box->mu);
      if (box->stream) co_return rpc_error(409, -32600, "Conflict: the session's stream is open");
      box->stream = stream;
      for (auto& m : box->backlog) stream->send(m);
      box->backlog.clear();
    }
    stream->on_cancel([box, weak = std::weak_ptr<net::EventStream>(stream)] {
      std::lock_guard lock(box->mu);
      if (box->stream == weak.lock()) box->stream.reset();
      box->used = std::chrono::steady_clock::now();
    });
    net::HttpResponse res;
    res.status = 200;
    res.content_type = "text/event-stream";
    res.stream = stream;
    co_return res;
  }

  net::HttpResponse remove(const net::HttpRequest& req) {
    bool unknown = false;
    auto session = session_for(req, unknown);
    if (unknown) return rpc_error(404, -32001, "Session not found");
    if (!session) return rpc_error(400, -32600, "Bad Request: DELETE needs an Mcp-Session-Id");
    std::shared_ptr<Mailbox> box;
    {
      std::lock_guard lock(mu_);
      if (auto it = mailboxes_.find(session->id()); it != mailboxes_.end()) {
        box = it->second;
        mailboxes_.erase(it);
      }
    }
    if (box) {
      std::lock_guard lock(box->mu);
      if (box->stream) box->stream->end();
      box->session.reset();
    }
    server_.close(session);
    net::HttpResponse res;
    res.status = 204;
    return res;
  }

  asio::any_io_executor server_executor() const { return server_.executor(); }

  Server& server_;
  HttpOptions options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Mailbox>> mailboxes_;
};

Result<std::shared_ptr<HttpTransport>> add_http_route(net::Routes& routes, Server& server,
                                                      const HttpOptions& options) {
  auto transport = std::make_shared<HttpTransport>(server, options);
  net::Route route;
  route.path = options.path;
  route.methods = {"POST", "GET", "DELETE"};
  route.access = net::Access::kTokenOrQuery;
  // A browser client on an --allow-origin page sends and reads the session headers.
  route.cors_request_headers = {"Accept", "Mcp-Session-Id", "MCP-Protocol-Version",
                                "Last-Event-ID"};
  route.cors_expose_headers = {"Mcp-Session-Id"};
  route.handler = [transport](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    co_return co_await transport->handle(std::move(req));
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(route)));
  return transport;
}

}  // namespace hearth::mcpserver
