#pragma once
/// A client of an OpenAI-compatible chat-completions server (`POST {baseUrl}/chat/completions`:
/// Ollama, llama.cpp's server, vLLM, hosted APIs), plain or streamed (server-sent events), with
/// retries on 429 and 5xx that honour Retry-After. The key goes in the Authorization header and
/// nowhere else.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "httpclient/client.hpp"
#include "json/json.hpp"

namespace hearth::agent {

struct ModelConfig {
  std::string base_url;  ///< e.g. "http://127.0.0.1:11434/v1"
  std::string model;
  std::string api_key;  ///< empty: no Authorization header
  bool stream = false;
  std::chrono::milliseconds timeout{120000};  ///< per request
  int max_retries = 4;                        ///< on 429, 5xx and connection failures
  std::chrono::milliseconds max_retry_wait{60000};
  std::optional<double> temperature;
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  ///< JSON text, as the model wrote it
};

struct Reply {
  std::string content;
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  json::value usage;  ///< as the server reported it, or null
  /// The assistant message to append to the conversation.
  json::object message() const;
};

/// Cancels a completion in flight (and any wait before a retry). Copies share the state.
class Cancel {
 public:
  void operator()();
  bool cancelled() const { return state_->cancelled.load(); }
  /// A fresh abort handle for the next request, fired already when cancelled.
  httpclient::Abort next_abort();

 private:
  struct State {
    std::atomic<bool> cancelled{false};
    std::mutex mu;
    httpclient::Abort current;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

class ModelClient {
 public:
  ModelClient(const boost::asio::any_io_executor& executor, ModelConfig config);

  /// One completion of `messages` with `tools`. `on_delta` gets streamed text as it comes;
  /// `on_retry` is told of each retry and how long it waits.
  boost::asio::awaitable<Result<Reply>> complete(
      json::array messages, json::array tools, Cancel cancel,
      std::function<void(std::string_view text)> on_delta,
      std::function<void(int status, std::chrono::milliseconds wait)> on_retry);

  const ModelConfig& config() const { return config_; }
  void shutdown() { client_.shutdown(); }

 private:
  boost::asio::awaitable<Result<Reply>> once(const std::string& body, Cancel& cancel,
                                             const std::function<void(std::string_view)>& on_delta,
                                             int& status, std::chrono::milliseconds& retry_after);

  boost::asio::any_io_executor executor_;
  ModelConfig config_;
  httpclient::Client client_;
};

/// Reads a non-streamed chat.completion response body.
Result<Reply> parse_completion(std::string_view body);

/// Accumulates streamed chat.completion.chunk events into a Reply.
class StreamAccumulator {
 public:
  /// One event's data (not "[DONE]"); the text it added (for on_delta), or an error.
  Result<std::string> add(std::string_view data);
  Reply take() { return std::move(reply_); }

 private:
  Reply reply_;
};

/// The wait a Retry-After header asks for (delta-seconds or an HTTP date); nullopt: none.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

}  // namespace hearth::agent
