#include "agent/model.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <ctime>

#include "httpclient/sse.hpp"

namespace hearth::agent {
namespace asio = boost::asio;

// GCC 12: -Wmismatched-new-delete at the end of this file's largest coroutine, a false positive
// in Asio's frame allocation (see src/workspace/workspace.cpp).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

json::object Reply::message() const {
  json::object m;
  m["role"] = "assistant";
  m["content"] =
      content.empty() && !tool_calls.empty() ? json::value(nullptr) : json::value(content);
  if (!tool_calls.empty()) {
    json::array calls;
    for (const auto& c : tool_calls) {
      calls.push_back(
          json::object{{"id", c.id},
                       {"type", "function"},
                       {"function", json::object{{"name", c.name}, {"arguments", c.arguments}}}});
    }
    m["tool_calls"] = std::move(calls);
  }
  return m;
}

void Cancel::operator()() {
  state_->cancelled.store(true);
  std::lock_guard lock(state_->mu);
  state_->current();
}

httpclient::Abort Cancel::next_abort() {
  std::lock_guard lock(state_->mu);
  state_->current = httpclient::Abort();
  if (state_->cancelled.load()) state_->current();
  return state_->current;
}

namespace {

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

Error bad_reply(const std::string& why) {
  return Error::make(ErrorCode::kHandlerError,
                     "the model server's reply is not a chat completion: " + why);
}

}  // namespace

Result<Reply> parse_completion(std::string_view body) {
  auto parsed = json::parse_text(body);
  if (!parsed.ok() || !parsed->is_object()) return bad_reply("not a JSON object");
  const auto& o = parsed->get_object();
  const auto* choices = o.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty() ||
      !choices->get_array()[0].is_object()) {
    return bad_reply("no choices");
  }
  const auto& choice = choices->get_array()[0].get_object();
  Reply reply;
  reply.finish_reason = string_at(choice, "finish_reason");
  if (const auto* u = o.if_contains("usage")) reply.usage = *u;
  const auto* message = choice.if_contains("message");
  if (message == nullptr || !message->is_object()) return bad_reply("the choice has no message");
  const auto& m = message->get_object();
  reply.content = string_at(m, "content");
  if (const auto* calls = m.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (const auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      ToolCall call;
      call.id = string_at(c.get_object(), "id");
      if (const auto* f = c.get_object().if_contains("function"); f != nullptr && f->is_object()) {
        call.name = string_at(f->get_object(), "name");
        const auto* args = f->get_object().if_contains("arguments");
        if (args != nullptr) {
          call.arguments =
              args->is_string() ? std::string(args->get_string()) : json::serialize(*args);
        }
      }
      reply.tool_calls.push_back(std::move(call));
    }
  }
  return reply;
}

Result<std::string> StreamAccumulator::add(std::string_view data) {
  auto parsed = json::parse_text(data);
  if (!parsed.ok() || !parsed->is_object()) return bad_reply("a stream event is not a JSON object");
  const auto& o = parsed->get_object();
  if (const auto* e = o.if_contains("error")) {
    return Error::make(ErrorCode::kHandlerError,
                       "the model server reported: " + json::serialize(*e));
  }
  if (const auto* u = o.if_contains("usage"); u != nullptr && !u->is_null()) reply_.usage = *u;
  const auto* choices = o.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    return std::string();
  }
  const auto& choice = choices->get_array()[0];
  if (!choice.is_object()) return std::string();
  if (auto reason = string_at(choice.get_object(), "finish_reason"); !reason.empty()) {
    reply_.finish_reason = reason;
  }
  const auto* delta = choice.get_object().if_contains("delta");
  if (delta == nullptr || !delta->is_object()) return std::string();
  const auto& d = delta->get_object();
  std::string text = string_at(d, "content");
  reply_.content += text;
  if (const auto* calls = d.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
    for (const auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      const auto& co = c.get_object();
      std::size_t index = reply_.tool_calls.size();
      if (const auto* i = co.if_contains("index");
          i != nullptr && i->is_int64() && i->get_int64() >= 0) {
        index = static_cast<std::size_t>(i->get_int64());
      } else if (!reply_.tool_calls.empty() && string_at(co, "id").empty()) {
        index = reply_.tool_calls.size() - 1;  // a continuation without an index
      }
      if (index > 64) return bad_reply("a tool call index past 64");
      if (reply_.tool_calls.size() <= index) reply_.tool_calls.resize(index + 1);
      auto& call = reply_.tool_calls[index];
      if (auto id = string_at(co, "id"); !id.empty()) call.id = id;
      if (const auto* f = co.if_contains("function"); f != nullptr && f->is_object()) {
        call.name += string_at(f->get_object(), "name");
        call.arguments += string_at(f->get_object(), "arguments");
      }
    }
  }
  return text;
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  double seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && end == value.data() + value.size()) {
    if (seconds < 0) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  }
  std::tm tm{};
  const std::string text(value);
  if (::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) return std::nullopt;
  const std::time_t at = ::timegm(&tm);
  const std::time_t now = std::time(nullptr);
  return std::chrono::milliseconds(at > now ? (at - now) * 1000 : 0);
}

ModelClient::ModelClient(const asio::any_io_executor& executor, ModelConfig config)
    : executor_(executor), config_(std::move(config)), client_(executor) {}

asio::awaitable<Result<Reply>> ModelClient::once(
    const std::string& body, Cancel& cancel, const std::function<void(std::string_view)>& on_delta,
    int& status, std::chrono::milliseconds& retry_after) {
  httpclient::Request request;
  request.method = "POST";
  std::string base = config_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  request.url = base + "/chat/completions";
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", config_.stream ? "text/event-stream" : "application/json");
  if (!config_.api_key.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + config_.api_key);
  }
  request.body = body;
  request.timeout = config_.timeout;
  request.max_response_bytes = std::size_t{8} << 20;

  // Streamed: events are parsed as they come; a non-2xx answer is kept as text for its error.
  auto stream = std::make_shared<StreamAccumulator>();
  auto parser = std::make_shared<httpclient::SseParser>(std::size_t{4} << 20);
  auto error_text = std::make_shared<std::string>();
  auto stream_error = std::make_shared<std::optional<Error>>();
  auto ok_status = std::make_shared<bool>(false);
  auto done = std::make_shared<bool>(false);
  if (config_.stream) {
    request.on_headers = [ok_status](int s, const auto&) { *ok_status = s / 100 == 2; };
    request.on_body = [=](std::string_view chunk) {
      if (!*ok_status) {
        if (error_text->size() < 65536) error_text->append(chunk.substr(0, 65536));
        return true;
      }
      std::vector<httpclient::SseEvent> events;
      if (!parser->feed(chunk, events)) {
        *stream_error = bad_reply("a stream event past 4 MiB");
        return false;
      }
      for (const auto& e : events) {
        if (e.data == "[DONE]") {
          *done = true;
          return false;
        }
        auto text = stream->add(e.data);
        if (!text.ok()) {
          *stream_error = text.error();
          return false;
        }
        if (!text->empty() && on_delta) on_delta(*text);
      }
      return true;
    };
  }
  httpclient::Abort abort = cancel.next_abort();
  auto response = co_await client_.request(std::move(request), abort);
  if (cancel.cancelled()) co_return Error::make(ErrorCode::kHandlerError, "cancelled");
  if (!response.ok()) {
    status = 0;
    co_return Error::make(ErrorCode::kHandlerError,
                          "the model server cannot be reached: " + response.error().message);
  }
  status = response->status;
  if (auto h = response->header("retry-after")) {
    if (auto wait = parse_retry_after(*h)) retry_after = *wait;
  }
  if (status / 100 != 2) {
    std::string text = config_.stream ? *error_text : response->body;
    if (text.size() > 2000) text.resize(2000);
    co_return Error::make(ErrorCode::kHandlerError,
                          "the model server answered HTTP " + std::to_string(status) +
                              (text.empty() ? "" : ": " + text),
                          json::object{{"status", status}});
  }
  if (!config_.stream) co_return parse_completion(response->body);
  if (*stream_error) co_return **stream_error;
  (void)done;  // a stream that ends without [DONE] still gives what it sent
  co_return stream->take();
}

asio::awaitable<Result<Reply>> ModelClient::complete(
    json::array messages, json::array tools, Cancel cancel,
    std::function<void(std::string_view text)> on_delta,
    std::function<void(int status, std::chrono::milliseconds wait)> on_retry) {
  json::object body;
  body["model"] = config_.model;
  body["messages"] = std::move(messages);
  if (!tools.empty()) {
    body["tools"] = std::move(tools);
    body["tool_choice"] = "auto";
    body["parallel_tool_calls"] = false;
  }
  if (config_.temperature) body["temperature"] = *config_.temperature;
  if (config_.stream) {
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};
  }
  const std::string text = json::serialize(body);
  std::chrono::milliseconds backoff{500};
  for (int attempt = 0;; ++attempt) {
    int status = 0;
    std::chrono::milliseconds retry_after{-1};
    auto reply = co_await once(text, cancel, on_delta, status, retry_after);
    if (reply.ok() || cancel.cancelled()) co_return reply;
    const bool retryable = status == 0 || status == 429 || status == 408 || status / 100 == 5;
    if (!retryable || attempt >= config_.max_retries) co_return reply;
    std::chrono::milliseconds wait = retry_after.count() >= 0 ? retry_after : backoff;
    if (wait > config_.max_retry_wait) {
      co_return Error::make(ErrorCode::kHandlerError,
                            reply.error().message + " (it asks to wait " +
                                std::to_string(wait.count() / 1000) + " s, over the limit of " +
                                std::to_string(config_.max_retry_wait.count() / 1000) + " s)");
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(8000));
    if (on_retry) on_retry(status, wait);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto until = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < until && !cancel.cancelled()) {
      timer.expires_after(std::min<std::chrono::steady_clock::duration>(
          until - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (cancel.cancelled()) co_return Error::make(ErrorCode::kHandlerError, "cancelled");
  }
}

}  // namespace hearth::agent
