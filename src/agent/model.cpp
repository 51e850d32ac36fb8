#include "agent/model.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <ctime>

#include "agent/interpret.hpp"
#include "common/ascii.hpp"
#include "egress/host.hpp"
#include "httpclient/sse.hpp"

namespace hearth::agent {
namespace asio = boost::asio;

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

std::optional<Error> check_public(const httpclient::Url& url,
                                  const std::vector<std::string>& addresses) {
  for (const auto& text : addresses) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(text, ec);
    if (ec || egress::is_local_address(address) || egress::is_private_address(address)) {
      return Error::make(
          ErrorCode::kPermissionDenied,
          url.host + " resolves to " + text +
              ", an address of this machine or a private network: a model server "
              "there must be configured on the daemon (--model-url, "
              "--model-server)",
          json::object{
              {"reason", "model-server-not-public"}, {"host", url.host}, {"address", text}});
    }
  }
  return std::nullopt;
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

std::string_view to_string(ToolMode mode) {
  switch (mode) {
    case ToolMode::kAuto:
      return "auto";
    case ToolMode::kNative:
      return "native";
    case ToolMode::kPrompt:
      return "prompt";
  }
  return "auto";
}

std::optional<ToolMode> parse_tool_mode(std::string_view text) {
  for (auto mode : {ToolMode::kAuto, ToolMode::kNative, ToolMode::kPrompt}) {
    if (text == to_string(mode)) return mode;
  }
  return std::nullopt;
}

namespace {

/// Whether a server's error answer (status and body) says that it, or the model it serves,
/// cannot take tools: Ollama's "... does not support tools" (400), vLLM's "\"auto\" tool choice
/// requires --enable-auto-tool-choice" (400), llama.cpp's "tools param requires --jinja flag"
/// (500), and the like. Servers give no code for it: their own text is all there is. A request
/// that fails for another reason is not retried without tools.
bool says_no_tools(int status, std::string_view body) {
  if (status != 400 && status != 404 && status != 422 && status != 500 && status != 501) {
    return false;
  }
  const std::string text = ascii::lower(body);
  return text.find("tool") != std::string::npos || text.find("function call") != std::string::npos;
}

}  // namespace

ModelClient::ModelClient(const asio::any_io_executor& executor, ModelConfig config)
    : executor_(executor), config_(std::move(config)), client_(executor), mode_(config_.tools) {}

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
  if (config_.public_only) {
    request.allow = [](const httpclient::Url& url,
                       const std::vector<std::string>& addresses) -> std::optional<Error> {
      return check_public(url, addresses);
    };
  }

  // The body is read as it comes, streamed or not, so that an answer past its limit is
  // stopped there (and not retried: the same request would bring the same answer); a non-2xx
  // answer is kept as text for its error.
  auto stream = std::make_shared<StreamAccumulator>(config_.max_answer_bytes);
  auto parser = std::make_shared<httpclient::SseParser>(std::size_t{4} << 20);
  auto collected = std::make_shared<std::string>();
  auto error_text = std::make_shared<std::string>();
  auto stream_error = std::make_shared<std::optional<Error>>();
  auto ok_status = std::make_shared<bool>(false);
  const bool streamed = config_.stream;
  const std::size_t limit = config_.max_answer_bytes;
  request.max_response_bytes = limit;
  request.on_headers = [ok_status](int s, const auto&) { *ok_status = s / 100 == 2; };
  request.on_body = [=](std::string_view chunk) {
    if (!*ok_status) {
      if (error_text->size() < 65536) error_text->append(chunk.substr(0, 65536));
      return true;
    }
    if (!streamed) {
      if (collected->size() + chunk.size() > limit) {
        *stream_error = answer_too_large(limit);
        return false;
      }
      collected->append(chunk);
      return true;
    }
    std::vector<httpclient::SseEvent> events;
    if (!parser->feed(chunk, events)) {
      *stream_error = not_a_completion("a stream event past 4 MiB");
      return false;
    }
    for (const auto& e : events) {
      if (e.data == "[DONE]") return false;
      auto text = stream->add(e.data);
      if (!text.ok()) {
        *stream_error = text.error();
        return false;
      }
      if (!text->empty() && on_delta) on_delta(*text);
    }
    return true;
  };
  httpclient::Abort abort = cancel.next_abort();
  auto response = co_await client_.request(std::move(request), abort);
  if (cancel.cancelled()) co_return Error::make(ErrorCode::kHandlerError, "cancelled");
  if (*stream_error) {
    status = -1;  // not retried
    co_return **stream_error;
  }
  if (!response.ok()) {
    status = response.error().code == ErrorCode::kPermissionDenied ? -1 : 0;
    if (json::string_member(response.error().data, "reason") == "unreachable" &&
        !answered_.load()) {
      // A server that never answered is not running (or the URL is wrong): say so now rather
      // than retry for seconds. One that answered before is waited for, as for a restart.
      status = -1;
      co_return Error::make(
          ErrorCode::kHandlerError,
          "the model server at " + base + " cannot be reached (" + response.error().message +
              "): is it running? Start it (Ollama: `ollama serve`; llama.cpp: `llama-server -m "
              "MODEL.gguf --port 8080`; vLLM: `vllm serve MODEL`) or point --model-url at it",
          json::object{{"reason", "unreachable"}, {"url", base}});
    }
    co_return Error::make(response.error().code == ErrorCode::kPermissionDenied
                              ? ErrorCode::kPermissionDenied
                              : ErrorCode::kHandlerError,
                          "the model server cannot be reached: " + response.error().message);
  }
  answered_.store(true);
  status = response->status;
  if (auto h = response->header("retry-after")) {
    if (auto wait = parse_retry_after(*h)) retry_after = *wait;
  }
  if (status / 100 != 2) {
    std::string text = *error_text;
    if (text.size() > 2000) text.resize(2000);
    json::object data{{"status", status}};
    if (says_no_tools(status, text)) data["reason"] = "tools-unsupported";
    co_return Error::make(ErrorCode::kHandlerError,
                          "the model server answered HTTP " + std::to_string(status) +
                              (text.empty() ? "" : ": " + text),
                          std::move(data));
  }
  if (!streamed) co_return parse_completion(*collected);
  // A stream that ends without [DONE] still gives what it sent.
  co_return stream->take();
}

asio::awaitable<Result<Reply>> ModelClient::complete(
    json::array messages, json::array tools, Cancel cancel,
    std::function<void(std::string_view text)> on_delta,
    std::function<void(int status, std::chrono::milliseconds wait)> on_retry,
    std::function<void(std::string_view notice)> on_notice) {
  auto body_for = [&](bool prompt) {
    json::object body;
    body["model"] = config_.model;
    body["messages"] = prompt ? to_prompt_format(messages, tools) : messages;
    if (!prompt && !tools.empty()) {
      body["tools"] = tools;
      body["tool_choice"] = "auto";
      body["parallel_tool_calls"] = false;
    }
    if (config_.temperature) body["temperature"] = *config_.temperature;
    if (config_.stream) {
      body["stream"] = true;
      body["stream_options"] = json::object{{"include_usage", true}};
    }
    return json::serialize(body);
  };
  std::string text = body_for(mode_.load() == ToolMode::kPrompt && !tools.empty());
  std::chrono::milliseconds backoff{500};
  for (int attempt = 0;; ++attempt) {
    int status = 0;
    std::chrono::milliseconds retry_after{-1};
    auto reply = co_await once(text, cancel, on_delta, status, retry_after);
    if (reply.ok() && mode_.load() == ToolMode::kAuto) mode_.store(ToolMode::kNative);
    if (reply.ok() || cancel.cancelled()) co_return reply;
    if (mode_.load() == ToolMode::kAuto && !tools.empty() &&
        json::string_member(reply.error().data, "reason") == "tools-unsupported") {
      // The server cannot take tools: describe them in the prompt from now on, and ask again.
      mode_.store(ToolMode::kPrompt);
      if (on_notice) {
        on_notice("the model server does not take tools (" + reply.error().message.substr(0, 300) +
                  "): they are described in the prompt from now on");
      }
      text = body_for(true);
      --attempt;
      continue;
    }
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
