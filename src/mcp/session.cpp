#include "mcp/session.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>

#include "common/on_strand.hpp"

namespace hearth::mcp {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kMaxToolPages = 100;
constexpr std::string_view kClientName = "hearth";
#ifndef HEARTH_VERSION
#define HEARTH_VERSION "0"
#endif

json::object rpc(std::string_view method) {
  json::object message;
  message["jsonrpc"] = "2.0";
  message["method"] = method;
  return message;
}

std::string ms_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

}  // namespace

struct Session::State : std::enable_shared_from_this<Session::State> {
  struct Pending {
    explicit Pending(const asio::any_io_executor& executor) : timer(executor) {}
    std::optional<json::object> response;
    std::optional<Error> failure;
    asio::steady_timer timer;
    std::string progress_token;
    Clock::time_point deadline;
    Clock::time_point hard_deadline = Clock::time_point::max();
    std::chrono::milliseconds window{0};
  };

  State(const asio::any_io_executor& executor, std::unique_ptr<Transport> t, std::string name)
      : strand(asio::make_strand(executor)), transport(std::move(t)), server(std::move(name)) {}

  asio::strand<asio::any_io_executor> strand;
  std::unique_ptr<Transport> transport;
  std::string server;
  std::string label() const { return server_label(server); }

  // Strand state.
  std::map<std::int64_t, std::shared_ptr<Pending>> pending;
  std::int64_t next_id = 0;
  std::optional<Error> closed_reason;
  std::uint64_t tools_generation = 0;  ///< +1 at each list_changed
  /// Shared, never modified: a call looks its tool up without copying the list.
  std::shared_ptr<const std::vector<Tool>> tools_cache;
  std::uint64_t tools_cache_generation = 0;

  // Read from any thread.
  std::atomic<bool> alive{false};
  std::atomic<std::uint64_t> tools_requests{0};
  mutable std::mutex info_mutex;
  std::string protocol_version;
  json::object server_info;

  // --- incoming --------------------------------------------------------------------------------

  /// On the strand.
  void on_message(json::value message) {
    for (auto& in : classify(std::move(message))) {
      switch (in.kind) {
        case Incoming::Kind::kResponse: {
          auto it = pending.find(in.id);
          if (it == pending.end()) break;  // late: abandoned after a timeout
          it->second->response = std::move(in.message);
          it->second->timer.cancel();
          pending.erase(it);
          break;
        }
        case Incoming::Kind::kRequest:
          if (!closed_reason) transport->send(answer(in));
          break;
        case Incoming::Kind::kNotification:
          on_notification(in);
          break;
      }
    }
  }

  void on_notification(const Incoming& in) {
    if (in.method == "notifications/tools/list_changed") {
      ++tools_generation;
    } else if (in.method == "notifications/progress") {
      const auto key = progress_key(in);
      if (!key) return;
      for (auto& [_, p] : pending) {
        if (!p->progress_token.empty() && p->progress_token == *key) {
          p->deadline = Clock::now() + p->window;
          p->timer.cancel();
        }
      }
    } else if (in.method == "notifications/message") {
      const auto* params = in.message.if_contains("params");
      spdlog::debug("{} says: {}", label(), params != nullptr ? json::serialize(*params) : "");
    }
  }

  /// On the strand.
  void on_closed(const Error& reason) {
    if (closed_reason) return;
    alive = false;
    closed_reason = reason;
    for (auto& [_, p] : pending) {
      p->failure = reason;
      p->timer.cancel();
    }
    pending.clear();
  }

  Error closed_error() const {
    return closed_reason ? *closed_reason
                         : Error::make(ErrorCode::kHandlerError, label() + " is not running");
  }

  // --- outgoing --------------------------------------------------------------------------------

  /// On the strand: sends a request and waits for its response, within the limits.
  asio::awaitable<Result<json::value>> exchange(std::string method, json::object params,
                                                Limits limits, bool progress) {
    auto self = shared_from_this();
    if (closed_reason) co_return closed_error();
    const std::int64_t id = ++next_id;
    auto p = std::make_shared<Pending>(strand);
    const auto now = Clock::now();
    p->window = limits.timeout;
    p->deadline = limits.timeout.count() > 0 ? now + limits.timeout : Clock::time_point::max();
    if (limits.total.count() > 0) p->hard_deadline = now + limits.total;
    if (progress) {
      p->progress_token = "hearth-" + std::to_string(id);
      params["_meta"].emplace_object()["progressToken"] = p->progress_token;
    }
    json::object message = rpc(method);
    message["id"] = id;
    message["params"] = std::move(params);
    pending.emplace(id, p);
    transport->send(std::move(message));

    while (!p->response && !p->failure) {
      const auto limit = std::min(p->deadline, p->hard_deadline);
      if (Clock::now() >= limit) {
        pending.erase(id);
        json::object cancelled = rpc("notifications/cancelled");
        json::object cp;
        cp["requestId"] = id;
        cp["reason"] = "timed out in hearth";
        cancelled["params"] = std::move(cp);
        if (!closed_reason) transport->send(std::move(cancelled));
        const bool total = p->hard_deadline <= p->deadline;
        json::object data;
        data["server"] = server;
        data["method"] = method;
        data["timeoutMs"] = (total ? limits.total : limits.timeout).count();
        co_return Error::make(
            ErrorCode::kTimeout,
            label() + " did not answer " + method + " within " +
                (total ? ms_text(limits.total) + " in all" : ms_text(limits.timeout)) +
                " (the request was cancelled)",
            std::move(data));
      }
      p->timer.expires_at(limit);
      co_await p->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (p->failure) co_return *p->failure;
    co_return response_result(server, method, std::move(*p->response));
  }

  asio::awaitable<Status> start(std::chrono::milliseconds timeout) {
    auto self = shared_from_this();
    std::weak_ptr<State> weak = self;
    Transport::Handlers handlers;
    handlers.on_message = [weak](json::value message) {
      if (auto s = weak.lock()) {
        asio::post(s->strand,
                   [s, m = std::move(message)]() mutable { s->on_message(std::move(m)); });
      }
    };
    handlers.on_closed = [weak](Error reason) {
      if (auto s = weak.lock()) {
        asio::post(s->strand, [s, r = std::move(reason)]() mutable { s->on_closed(std::move(r)); });
      }
    };
    alive = true;
    if (auto opened = transport->open(std::move(handlers)); !opened.ok()) {
      on_closed(opened.error());
      co_return std::move(opened).error();
    }
    json::object params;
    params["protocolVersion"] = kSupportedVersions[0];
    params["capabilities"] = json::object();
    json::object client;
    client["name"] = kClientName;
    client["version"] = HEARTH_VERSION;
    params["clientInfo"] = std::move(client);
    auto result = co_await exchange("initialize", std::move(params), Limits{timeout, {}}, false);
    if (!result.ok()) {
      close_now();
      co_return std::move(result).error();
    }
    auto version = negotiated_version(server, result.value());
    if (!version.ok()) {
      close_now();
      co_return std::move(version).error();
    }
    const std::string v = std::move(version).value();
    {
      std::lock_guard lock(info_mutex);
      protocol_version = v;
      if (const auto* info = json::member(result.value(), "serverInfo");
          info && info->is_object()) {
        server_info = info->get_object();
      }
    }
    transport->initialized(v);
    transport->send(rpc("notifications/initialized"));
    co_return Status{};
  }

  /// The cached list, fetched first when there is none, it is stale, or `refresh`.
  asio::awaitable<Result<std::shared_ptr<const std::vector<Tool>>>> tool_list(
      std::chrono::milliseconds timeout, bool refresh) {
    auto self = shared_from_this();
    if (!refresh && tools_cache && tools_cache_generation == tools_generation) {
      co_return tools_cache;
    }
    const std::uint64_t generation = tools_generation;
    std::vector<Tool> out;
    std::optional<std::string> cursor;
    for (std::size_t page = 0; page < kMaxToolPages; ++page) {
      json::object params;
      if (cursor) params["cursor"] = *cursor;
      ++tools_requests;
      auto result = co_await exchange("tools/list", std::move(params), Limits{timeout, {}}, false);
      if (!result.ok()) co_return std::move(result).error();
      auto listed = tool_page(server, result.value());
      if (!listed.ok()) co_return std::move(listed).error();
      std::move(listed->tools.begin(), listed->tools.end(), std::back_inserter(out));
      cursor = std::move(listed->next_cursor);
      if (!cursor) break;
    }
    if (cursor) {
      co_return Error::make(
          ErrorCode::kHandlerError,
          label() + " listed more than " + std::to_string(kMaxToolPages) + " pages of tools");
    }
    tools_cache = std::make_shared<const std::vector<Tool>>(std::move(out));
    tools_cache_generation = generation;
    co_return tools_cache;
  }

  asio::awaitable<Result<json::object>> call_tool(std::string tool, json::value arguments,
                                                  Limits limits) {
    auto self = shared_from_this();
    auto listed = co_await tool_list(limits.timeout, false);
    if (!listed.ok()) co_return std::move(listed).error();
    auto has = [&](const std::shared_ptr<const std::vector<Tool>>& tools) {
      const auto& list = *tools;
      return std::any_of(list.begin(), list.end(), [&](const Tool& t) { return t.name == tool; });
    };
    if (!has(listed.value())) {
      // A server may change its tools without telling; ask once more before refusing.
      listed = co_await tool_list(limits.timeout, true);
      if (!listed.ok()) co_return std::move(listed).error();
      if (!has(listed.value())) {
        std::string names;
        json::array available;
        for (const auto& t : *listed.value()) {
          if (!names.empty()) names += ", ";
          names += t.name;
          available.emplace_back(t.name);
        }
        json::object data;
        data["server"] = server;
        data["tool"] = tool;
        data["available"] = std::move(available);
        co_return Error::make(ErrorCode::kHandlerError,
                              label() + " has no tool '" + tool +
                                  "' (it offers: " + (names.empty() ? "none" : names) + ")",
                              std::move(data));
      }
    }
    json::object params;
    params["name"] = tool;
    params["arguments"] = arguments.is_null() ? json::value(json::object()) : std::move(arguments);
    auto result = co_await exchange("tools/call", std::move(params), limits, true);
    if (!result.ok()) co_return std::move(result).error();
    if (!result.value().is_object()) {
      co_return Error::make(ErrorCode::kHandlerError,
                            label() + " answered tools/call with a result that is not an object");
    }
    co_return std::move(result.value().get_object());
  }

  /// On the strand.
  void close_now() {
    on_closed(Error::make(ErrorCode::kHandlerError, label() + " was stopped"));
    transport->close();
  }
};

std::shared_ptr<Session> Session::create(asio::any_io_executor executor,
                                         std::unique_ptr<Transport> transport, std::string server) {
  auto session = std::shared_ptr<Session>(new Session());
  session->state_ =
      std::make_shared<State>(std::move(executor), std::move(transport), std::move(server));
  return session;
}

Session::~Session() {
  close();
}

asio::awaitable<Status> Session::start(std::chrono::milliseconds timeout) {
  auto s = state_;
  co_return co_await on(s->strand, s->start(timeout));
}

asio::awaitable<Result<std::vector<Tool>>> Session::tools(std::chrono::milliseconds timeout,
                                                          bool refresh) {
  auto s = state_;
  auto list = co_await on(s->strand, s->tool_list(timeout, refresh));
  if (!list.ok()) co_return std::move(list).error();
  co_return *list.value();  // a copy for the caller; calls use the shared list
}

asio::awaitable<Result<json::object>> Session::call_tool(std::string tool, json::value arguments,
                                                         Limits limits) {
  auto s = state_;
  co_return co_await on(s->strand, s->call_tool(std::move(tool), std::move(arguments), limits));
}

asio::awaitable<Result<json::value>> Session::request(std::string method, json::object params,
                                                      Limits limits) {
  auto s = state_;
  co_return co_await on(s->strand,
                        s->exchange(std::move(method), std::move(params), limits, false));
}

bool Session::alive() const {
  return state_->alive;
}

void Session::close() {
  auto s = state_;
  if (!s) return;
  // The transport is closed here, synchronously, so that no process outlives the call; waiting
  // requests are failed on the strand.
  s->alive = false;
  s->transport->close();
  asio::post(s->strand, [s] {
    s->on_closed(Error::make(ErrorCode::kHandlerError, s->label() + " was stopped"));
  });
}

std::string Session::protocol_version() const {
  std::lock_guard lock(state_->info_mutex);
  return state_->protocol_version;
}

json::object Session::server_info() const {
  std::lock_guard lock(state_->info_mutex);
  return state_->server_info;
}

std::uint64_t Session::tools_list_requests() const {
  return state_->tools_requests;
}

}  // namespace hearth::mcp
