#pragma once
/// What every Kind::create() starts with, in one place.

#include <filesystem>
#include <memory>
#include <string>

#include "handlers/handler.hpp"

namespace hearth::handlers {

/// The parsed handler object of `endpoint`, of the `Config` type `kind` parses into: the one the
/// manifest loader kept (Endpoint::handler_config), else parsed now, for endpoints built without
/// the loader (tests, embeddings). kInternalError naming the first problem when it does not parse.
template <class Config>
Result<std::shared_ptr<const Config>> config_of(const Kind& kind,
                                                const manifest::Endpoint& endpoint) {
  if (auto loaded = std::dynamic_pointer_cast<const Config>(endpoint.handler_config)) {
    return loaded;
  }
  Problems problems;
  auto parsed = kind.parse(endpoint.handler, "handler", problems);
  if (!problems.empty()) {
    return Error::make(ErrorCode::kInternalError, problems.front().to_string());
  }
  auto typed = std::dynamic_pointer_cast<const Config>(parsed);
  if (!typed) {
    return Error::make(ErrorCode::kInternalError,
                       "handler: not parsed as a '" + std::string(kind.name()) + "' handler");
  }
  return typed;
}

/// The service folder as handlers use it (jail plans, keys of shared processes): canonical when
/// it exists, else normalised.
inline std::filesystem::path service_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir.lexically_normal() : real;
}

}  // namespace hearth::handlers
