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

#include "agent/reply.hpp"
#include "common/result.hpp"
#include "httpclient/client.hpp"
#include "json/json.hpp"

namespace hearth::agent {

/// How tools reach the model: as the API's `tools` (native), described in the system prompt with
/// calls read from the text (prompt: servers or models without tool support), or native until
/// the server says it cannot, then prompt for the rest of the client's life (auto).
enum class ToolMode : std::uint8_t { kAuto, kNative, kPrompt };
std::string_view to_string(ToolMode mode);
std::optional<ToolMode> parse_tool_mode(std::string_view text);

struct ModelConfig {
  std::string base_url;  ///< e.g. "http://127.0.0.1:11434/v1"
  std::string model;
  std::string api_key;  ///< empty: no Authorization header
  bool stream = false;
  std::chrono::milliseconds timeout{120000};  ///< per request
  int max_retries = 4;                        ///< on 429, 5xx and connection failures
  std::chrono::milliseconds max_retry_wait{60000};
  std::optional<double> temperature;
  /// What one answer may hold: the response body when not streamed, the text and tool calls
  /// accumulated from a stream. Past it the request is stopped and fails (a server that never
  /// stops talking must not grow the daemon).
  std::size_t max_answer_bytes = std::size_t{8} << 20;
  /// A server the run named itself rather than one the daemon was configured with: it may not
  /// resolve to this machine or a private network (the rule of A2S domains and the egress
  /// proxy), and redirects are not followed (none ever are).
  bool public_only = false;
  ToolMode tools = ToolMode::kAuto;
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
  /// `messages` and `tools` are in the API's native form whatever the mode; in prompt mode they
  /// are rewritten (to_prompt_format) on the way out. `on_notice` is told when auto mode falls
  /// back to prompt mode, and why. A server's non-2xx answer is -32003 with data {status}, and
  /// reason "tools-unsupported" when its text says that it cannot take tools.
  boost::asio::awaitable<Result<Reply>> complete(
      json::array messages, json::array tools, Cancel cancel,
      std::function<void(std::string_view text)> on_delta,
      std::function<void(int status, std::chrono::milliseconds wait)> on_retry,
      std::function<void(std::string_view notice)> on_notice = nullptr);

  /// The mode requests use now (auto becomes native or prompt once the server has answered).
  ToolMode tool_mode() const { return mode_.load(); }

  const ModelConfig& config() const { return config_; }
  void shutdown() { client_.shutdown(); }

 private:
  boost::asio::awaitable<Result<Reply>> once(const std::string& body, Cancel& cancel,
                                             const std::function<void(std::string_view)>& on_delta,
                                             int& status, std::chrono::milliseconds& retry_after);

  boost::asio::any_io_executor executor_;
  ModelConfig config_;
  httpclient::Client client_;
  std::atomic<ToolMode> mode_;
  /// Whether the server ever answered: until then, a connection refused is not retried.
  std::atomic<bool> answered_{false};
};

/// The connection check of a `public_only` server: every address its name resolved to must be
/// public (egress::is_local_address and is_private_address refuse it), else kPermissionDenied.
std::optional<Error> check_public(const httpclient::Url& url,
                                  const std::vector<std::string>& addresses);

/// The wait a Retry-After header asks for (delta-seconds or an HTTP date); nullopt: none.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

}  // namespace hearth::agent
