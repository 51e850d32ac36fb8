#include "lafs/registry.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "common/ascii.hpp"

namespace hearth::lafs {

namespace {

constexpr std::array<std::string_view, 10> kCategoryNames = {
    "VALIDATION", "AUTH",      "PERMISSION", "NOT_FOUND", "CONFLICT",
    "RATE_LIMIT", "TRANSIENT", "INTERNAL",   "CONTRACT",  "MIGRATION"};
constexpr std::array<std::string_view, 7> kActionNames = {
    "retry", "retry_modified", "wait", "escalate", "stop", "refresh_context", "authenticate"};
constexpr std::array<std::string_view, 4> kMviNames = {"minimal", "standard", "full", "custom"};
constexpr std::array<std::string_view, 4> kTransportNames = {"cli", "http", "grpc", "sdk"};

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

using C = Category;
using A = AgentAction;

// Transcribed from error-registry.json 1.0.0; the unit tests compare it with that file.
constexpr std::array<RegisteredCode, 13> kCodes = {{
    {kFormatConflict, C::kContract, "Mutually exclusive format flags requested", false, 400,
     "INVALID_ARGUMENT", 2, A::kStop, "https://lafs.dev/errors/v1/format-conflict",
     "https://lafs.dev/docs/errors/format-conflict"},
    {kValidationSchema, C::kValidation, "Input failed schema validation", false, 400,
     "INVALID_ARGUMENT", 2, A::kRetryModified, "https://lafs.dev/errors/v1/validation-schema",
     "https://lafs.dev/docs/errors/validation-schema"},
    {kNotFoundResource, C::kNotFound, "Referenced resource was not found", false, 404, "NOT_FOUND",
     4, A::kStop, "https://lafs.dev/errors/v1/not-found-resource",
     "https://lafs.dev/docs/errors/not-found-resource"},
    {kConflictVersion, C::kConflict, "Version or concurrency conflict", true, 409, "ABORTED", 7,
     A::kRefreshContext, "https://lafs.dev/errors/v1/conflict-version",
     "https://lafs.dev/docs/errors/conflict-version"},
    {kRateLimited, C::kRateLimit, "Rate limit exceeded", true, 429, "RESOURCE_EXHAUSTED", 8,
     A::kWait, "https://lafs.dev/errors/v1/rate-limited",
     "https://lafs.dev/docs/errors/rate-limited"},
    {kTransientUpstream, C::kTransient, "Upstream dependency temporary failure", true, 503,
     "UNAVAILABLE", 9, A::kRetry, "https://lafs.dev/errors/v1/transient-upstream",
     "https://lafs.dev/docs/errors/transient-upstream"},
    {kInternalUnexpected, C::kInternal, "Unexpected internal failure", false, 500, "INTERNAL", 1,
     A::kEscalate, "https://lafs.dev/errors/v1/internal-unexpected",
     "https://lafs.dev/docs/errors/internal-unexpected"},
    {kContextMissing, C::kContract, "Required context ledger fields are missing", false, 400,
     "FAILED_PRECONDITION", 6, A::kRetryModified, "https://lafs.dev/errors/v1/context-missing",
     "https://lafs.dev/docs/errors/context-missing"},
    {kContextStale, C::kConflict, "Context ledger or references are stale", true, 409, "ABORTED", 7,
     A::kRefreshContext, "https://lafs.dev/errors/v1/context-stale",
     "https://lafs.dev/docs/errors/context-stale"},
    {kMigrationUnsupportedVersion, C::kMigration, "Requested protocol/schema version unsupported",
     false, 426, "FAILED_PRECONDITION", 10, A::kStop,
     "https://lafs.dev/errors/v1/migration-unsupported-version",
     "https://lafs.dev/docs/errors/migration-unsupported-version"},
    {kDisclosureUnknownField, C::kValidation, "Unrecognized expansion field in _expand parameter",
     false, 400, "INVALID_ARGUMENT", 2, A::kRetryModified,
     "https://lafs.dev/errors/v1/disclosure-unknown-field",
     "https://lafs.dev/docs/errors/disclosure-unknown-field"},
    // The spec text (9.5.3) calls this retryable; the registry says false: the registry wins
    // (docs/lafs.md, "Decisions").
    {kMviBudgetExceeded, C::kValidation,
     "Response exceeds declared MVI budget (token, byte, or item limit)", false, 413,
     "RESOURCE_EXHAUSTED", 2, A::kRetryModified, "https://lafs.dev/errors/v1/mvi-budget-exceeded",
     "https://lafs.dev/docs/errors/mvi-budget-exceeded"},
    {kFieldConflict, C::kContract,
     "Mutually exclusive field selection modes (single-field extraction and multi-field "
     "filtering cannot be combined)",
     false, 400, "INVALID_ARGUMENT", 2, A::kStop, "https://lafs.dev/errors/v1/field-conflict",
     "https://lafs.dev/docs/errors/field-conflict"},
}};

bool upper_or_digit(char c) {
  return ascii::is_upper(c) || ascii::is_digit(c);
}

}  // namespace

std::string_view to_string(Category c) {
  return kCategoryNames.at(static_cast<std::size_t>(c));
}
std::string_view to_string(AgentAction a) {
  return kActionNames.at(static_cast<std::size_t>(a));
}
std::string_view to_string(Mvi m) {
  return kMviNames.at(static_cast<std::size_t>(m));
}
std::string_view to_string(Transport t) {
  return kTransportNames.at(static_cast<std::size_t>(t));
}

std::optional<Category> parse_category(std::string_view s) {
  return parse_name<Category>(kCategoryNames, s);
}
std::optional<AgentAction> parse_agent_action(std::string_view s) {
  return parse_name<AgentAction>(kActionNames, s);
}
std::optional<Mvi> parse_mvi(std::string_view s) {
  return parse_name<Mvi>(kMviNames, s);
}
std::optional<Transport> parse_transport(std::string_view s) {
  return parse_name<Transport>(kTransportNames, s);
}

std::span<const RegisteredCode> registered_codes() {
  return kCodes;
}

const RegisteredCode* find_code(std::string_view code) {
  auto it = std::find_if(kCodes.begin(), kCodes.end(),
                         [&](const RegisteredCode& c) { return c.code == code; });
  return it == kCodes.end() ? nullptr : &*it;
}

bool valid_code_name(std::string_view code) {
  // E_ then [A-Z0-9]+ then _ then [A-Z0-9_]+; the first group cannot hold '_', so the first '_'
  // after "E_" ends it.
  if (code.size() < 5 || code.substr(0, 2) != "E_") return false;
  std::size_t i = 2;
  while (i < code.size() && upper_or_digit(code[i])) ++i;
  if (i == 2 || i >= code.size() || code[i] != '_') return false;
  ++i;
  if (i == code.size()) return false;
  for (; i < code.size(); ++i) {
    if (!upper_or_digit(code[i]) && code[i] != '_') return false;
  }
  return true;
}

std::optional<std::string> transport_status(std::string_view code, Transport transport) {
  const RegisteredCode* entry = find_code(code);
  if (entry == nullptr) return std::nullopt;
  switch (transport) {
    case Transport::kHttp:
      return std::to_string(entry->http_status);
    case Transport::kGrpc:
      return std::string(entry->grpc_status);
    case Transport::kCli:
      return std::to_string(entry->cli_exit);
    case Transport::kSdk:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace hearth::lafs
