#pragma once
/// What a kind's parse() is written with. Each kind declares its handler object once, as a typed
/// configuration (a struct derived from manifest::HandlerConfig), and parses it in one function
/// that both reports every problem with its exact path and fills that struct:
///
///   std::shared_ptr<const Config> parse_config(const json::object& h, const std::string& path,
///                                              Problems& problems) {
///     ConfigReader in(h, path, problems);
///     auto config = std::make_shared<Config>();
///     if (const auto* v = in.get("command")) { ... in.add("command", "must be ..."); ... }
///     config->timeout = in.milliseconds("timeout");
///     return in.result(std::move(config));  // null when a problem was found
///   }
///
/// The manifest loader keeps the result on the endpoint; create() reads it with config_of()
/// (handlers/create.hpp) and never reads the JSON again.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/problem.hpp"
#include "json/json.hpp"

namespace hearth::handlers {

class ConfigReader {
 public:
  ConfigReader(const json::object& handler, const std::string& path, Problems& problems)
      : handler_(handler), path_(path), problems_(problems), before_(problems.size()) {}

  /// The member `key`, or null when absent.
  const json::value* get(std::string_view key) const { return handler_.if_contains(key); }

  /// A problem at `field` below the handler ("command", "args[1]", "env.HOME").
  void add(std::string_view field, std::string message) {
    problems_.push_back({join_path(path_, field), std::move(message)});
  }

  /// A time member in milliseconds (`timeout`, and the like): a non-negative number, rounded up
  /// and capped at 1e9 ms; 0 or absent means "none of its own". A problem otherwise.
  std::chrono::milliseconds milliseconds(std::string_view key) {
    const json::value* v = get(key);
    if (v == nullptr) return std::chrono::milliseconds(0);
    if (!v->is_number() || v->to_number<double>() < 0) {
      add(key, "must be a non-negative number (milliseconds)");
      return std::chrono::milliseconds(0);
    }
    const double ms = std::min(std::ceil(v->to_number<double>()), 1e9);
    return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
  }

  /// True while no problem has been added since the reader was made.
  bool ok() const { return problems_.size() == before_; }

  /// `config` when the handler object had no problem, else null.
  template <class Config>
  std::shared_ptr<const Config> result(std::shared_ptr<Config> config) const {
    if (!ok()) return nullptr;
    return config;
  }

 private:
  const json::object& handler_;
  const std::string& path_;
  Problems& problems_;
  std::size_t before_;
};

}  // namespace hearth::handlers
