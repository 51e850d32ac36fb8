#pragma once
/// What every Kind::create() starts with, in one place.

#include <filesystem>

#include "handlers/handler.hpp"

namespace hearth::handlers {

/// The handler object must pass the kind's own check(): create() may be reached without the
/// manifest loader (tests, embeddings). kInternalError naming the first problem otherwise.
inline Status check_before_create(const Kind& kind, const json::object& handler) {
  Problems problems;
  kind.check(handler, "handler", problems);
  if (!problems.empty()) return Error::make(ErrorCode::kInternalError, problems.front().to_string());
  return {};
}

/// The service folder as handlers use it (jail plans, keys of shared processes): canonical when
/// it exists, else normalised.
inline std::filesystem::path service_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir.lexically_normal() : real;
}

}  // namespace hearth::handlers
