#pragma once
/// The set-up shared by the tests of the handler kinds: the headers they use, a service folder
/// with a manifest model built in code (no loader involved), the kind under test, and the ways
/// they parse handler objects, make endpoints and run calls. A test file adds only its own.

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "handlers/handler.hpp"

namespace hearth::handlers::testing {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// hearth ignores SIGPIPE process-wide (see proc/process.hpp); so must every binary running
/// children. Call once, e.g. from a namespace-scope initialiser.
inline bool ignore_sigpipe() {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}

inline json::value parse(std::string_view text) {
  auto v = json::parse_text(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? std::move(v).value() : json::value(nullptr);
}

/// One problem a line, "path: message\n" each: what a failed expectation shows best.
inline std::string problem_list(const Problems& problems) {
  std::string out;
  for (const auto& p : problems) out += p.to_string() + "\n";
  return out;
}

/// Records what a handler publishes; knows one subscription endpoint, "updates".
class FakePublisher final : public Publisher {
 public:
  bool publish(std::string_view subscription, json::value data) override {
    std::lock_guard lock(mutex_);
    if (subscription != "updates") return false;
    published_.push_back(std::move(data));
    return true;
  }
  std::vector<json::value> published() {
    std::lock_guard lock(mutex_);
    return published_;
  }

 private:
  std::mutex mutex_;
  std::vector<json::value> published_;
};

/// Pids of the processes whose working directory is `dir` and that `ours` accepts, given their
/// /proc/<pid> folder (the helpers a kind starts for a service: JS workers, MCP servers).
inline std::vector<pid_t> processes_in(const fs::path& dir,
                                       const std::function<bool(const fs::path&)>& ours) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!ours(entry.path())) continue;
    std::error_code ec;
    const auto cwd = fs::read_symlink(entry.path() / "cwd", ec);
    if (!ec && cwd == dir) out.push_back(std::stoi(name));
  }
  return out;
}

/// Runs `call` of `handler` on `executor`; the future holds its result (in an optional: a future
/// needs a default-constructible value).
inline std::future<std::optional<Result<json::value>>> start_call(
    const asio::any_io_executor& executor, Handler& handler, Call call) {
  return asio::co_spawn(
      executor,
      [&handler,
       call = std::move(call)]() mutable -> asio::awaitable<std::optional<Result<json::value>>> {
        co_return co_await handler.call(std::move(call));
      },
      asio::use_future);
}

/// The fixture of a kind's tests. A test class sets `kind_` (and `handler_path_`, where its
/// problems are reported) in its set-up, usually after make_service().
class KindTest : public ::testing::Test {
 protected:
  /// A fresh folder "hearth-<prefix>-XXXXXX" in the temporary folder becomes the folder of
  /// `service_` ("svc"); remove_service() deletes it.
  void make_service(const std::string& prefix) {
    std::string pattern = (fs::temp_directory_path() / ("hearth-" + prefix + "-XXXXXX")).string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    service_.dir = fs::canonical(pattern);
    service_.name = "svc";
    service_.file = service_.dir / "lavs.json";
  }
  void remove_service() {
    std::error_code ec;
    fs::remove_all(service_.dir, ec);
  }

  /// Writes a file of the service; `executable`: read, write and execute for the owner only.
  void write(const std::string& name, const std::string& content, bool executable = false) {
    std::ofstream(service_.dir / name) << content;
    if (executable) fs::permissions(service_.dir / name, fs::perms::owner_all);
  }

  /// The problems the kind finds in a handler object (JSON text), reported under handler_path_.
  Problems check(std::string_view handler_json) {
    Problems problems;
    auto config = kind_->parse(parse(handler_json).as_object(), handler_path_, problems);
    // A configuration exactly when there is no problem.
    EXPECT_EQ(config == nullptr, !problems.empty()) << handler_json;
    return problems;
  }

  /// A new endpoint of `service_`, kept until the end of the test (handlers and calls point at
  /// it), built as the tests of a kind need it: without the manifest loader.
  manifest::Endpoint& add_endpoint(std::string id, json::object handler,
                                   manifest::Permissions effective = {},
                                   manifest::Method method = manifest::Method::kQuery) {
    auto endpoint = std::make_unique<manifest::Endpoint>();
    endpoint->id = std::move(id);
    endpoint->method = method;
    endpoint->handler = std::move(handler);
    if (const auto* type = endpoint->handler.if_contains("type"); type && type->is_string()) {
      endpoint->handler_type = std::string(type->get_string());
    }
    endpoint->effective = std::move(effective);
    endpoints_.push_back(std::move(endpoint));
    return *endpoints_.back();
  }
  manifest::Endpoint& add_endpoint(std::string id, std::string_view handler_json,
                                   manifest::Permissions effective = {},
                                   manifest::Method method = manifest::Method::kQuery) {
    return add_endpoint(std::move(id), parse(handler_json).as_object(), std::move(effective),
                        method);
  }

  /// A call of `service_` publishing to `publisher_`.
  Call make_call(json::value input, std::chrono::milliseconds timeout,
                 asio::any_io_executor executor, const manifest::Endpoint* endpoint = nullptr) {
    Call call;
    call.service = &service_;
    call.endpoint = endpoint;
    call.input = std::move(input);
    call.timeout = timeout;
    call.publisher = &publisher_;
    call.executor = std::move(executor);
    return call;
  }

  std::string handler_path_ = "endpoints[0].handler";
  KindOptions options_;
  std::unique_ptr<Kind> kind_;
  manifest::Manifest service_;
  std::vector<std::unique_ptr<manifest::Endpoint>> endpoints_;
  FakePublisher publisher_;
};

}  // namespace hearth::handlers::testing
