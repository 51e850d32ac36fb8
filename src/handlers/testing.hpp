#pragma once
/// Test helpers shared by the tests of the handler kinds.

#include <gtest/gtest.h>

#include <csignal>
#include <mutex>
#include <string_view>
#include <vector>

#include "handlers/handler.hpp"

namespace hearth::handlers::testing {

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

}  // namespace hearth::handlers::testing
