#pragma once
/// LAVS permissions (lavs-spec-v1 4.6) as the manifest loader parses them: the one value that
/// whatever enforces them shares - the jail's plan (confine), the JS workers' pools (jsworker),
/// the handler kinds - without knowing the manifest they came from.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "egress/network_policy.hpp"
#include "json/json.hpp"

namespace hearth::permissions {

/// Every field is optional; endpoint values override the manifest's field by field (see
/// effective()).
struct Permissions {
  std::optional<std::vector<std::string>> file_access;  ///< glob patterns, "!" negates
  /// false: none; true: all; list: allowed hosts (parsed when the manifest loads: a list that
  /// does not parse is a load problem, so every holder of a Permissions has a valid one).
  std::optional<egress::NetworkPolicy> network_access;
  /// Fractions rounded up; 0 in the document means "no limit of its own" and is left absent;
  /// clamped to about 100 years so that adding it to a clock's time point cannot overflow.
  std::optional<std::chrono::milliseconds> max_execution_time;
  std::optional<std::uint64_t> max_memory;  ///< bytes, rounded up; 0 is left absent, as above

  /// `endpoint` over `service`: each field the endpoint sets replaces the service's.
  static Permissions effective(const Permissions& service, const Permissions& endpoint);
  json::object to_json() const;
};

}  // namespace hearth::permissions
