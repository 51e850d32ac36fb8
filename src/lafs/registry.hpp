#pragma once
/// The LAFS error registry (schemas/v1/error-registry.json, version 1.0.0): the 13 registered
/// codes with their category, retryability, agent action and HTTP / gRPC / CLI-exit mappings, and
/// the closed vocabularies of the envelope (categories, agent actions, MVI levels, transports).
/// Built into hearth: nothing here is read from disk.

#include <optional>
#include <span>
#include <string_view>

namespace hearth::lafs {

/// `error.category`.
enum class Category {
  kValidation,
  kAuth,
  kPermission,
  kNotFound,
  kConflict,
  kRateLimit,
  kTransient,
  kInternal,
  kContract,
  kMigration,
};

/// `error.agentAction` (spec section 7.3).
enum class AgentAction {
  kRetry,
  kRetryModified,
  kWait,
  kEscalate,
  kStop,
  kRefreshContext,
  kAuthenticate
};

/// `_meta.mvi` (spec section 9.1). kCustom is set by the server only, after `_fields`.
enum class Mvi { kMinimal, kStandard, kFull, kCustom };

/// `_meta.transport`.
enum class Transport { kCli, kHttp, kGrpc, kSdk };

std::string_view to_string(Category c);
std::string_view to_string(AgentAction a);
std::string_view to_string(Mvi m);
std::string_view to_string(Transport t);
std::optional<Category> parse_category(std::string_view s);
std::optional<AgentAction> parse_agent_action(std::string_view s);
std::optional<Mvi> parse_mvi(std::string_view s);
std::optional<Transport> parse_transport(std::string_view s);

/// One registered code.
struct RegisteredCode {
  std::string_view code;  ///< "E_VALIDATION_SCHEMA"
  Category category;
  std::string_view description;
  bool retryable;
  int http_status;
  std::string_view grpc_status;  ///< "INVALID_ARGUMENT"
  int cli_exit;
  AgentAction agent_action;  ///< the registry's default action for the code
  std::string_view type_uri;
  std::string_view doc_url;
};

/// Registry version the table follows.
inline constexpr std::string_view kRegistryVersion = "1.0.0";

/// Codes hearth refers to by name.
inline constexpr std::string_view kFormatConflict = "E_FORMAT_CONFLICT";
inline constexpr std::string_view kValidationSchema = "E_VALIDATION_SCHEMA";
inline constexpr std::string_view kNotFoundResource = "E_NOT_FOUND_RESOURCE";
inline constexpr std::string_view kConflictVersion = "E_CONFLICT_VERSION";
inline constexpr std::string_view kRateLimited = "E_RATE_LIMITED";
inline constexpr std::string_view kTransientUpstream = "E_TRANSIENT_UPSTREAM";
inline constexpr std::string_view kInternalUnexpected = "E_INTERNAL_UNEXPECTED";
inline constexpr std::string_view kContextMissing = "E_CONTEXT_MISSING";
inline constexpr std::string_view kContextStale = "E_CONTEXT_STALE";
inline constexpr std::string_view kMigrationUnsupportedVersion = "E_MIGRATION_UNSUPPORTED_VERSION";
inline constexpr std::string_view kDisclosureUnknownField = "E_DISCLOSURE_UNKNOWN_FIELD";
inline constexpr std::string_view kMviBudgetExceeded = "E_MVI_BUDGET_EXCEEDED";
inline constexpr std::string_view kFieldConflict = "E_FIELD_CONFLICT";

/// All registered codes, in registry order.
std::span<const RegisteredCode> registered_codes();

/// The entry of `code`, or nullptr when it is not registered.
const RegisteredCode* find_code(std::string_view code);

/// True when `code` matches the naming rule `^E_[A-Z0-9]+_[A-Z0-9_]+$` (spec section 7.1).
bool valid_code_name(std::string_view code);

/// The transport status of a registered code: HTTP status, gRPC status name or CLI exit code as
/// text ("400", "INVALID_ARGUMENT", "2"); nullopt for unregistered codes and for `sdk`, which has
/// no external status (the reference runner exempts it).
std::optional<std::string> transport_status(std::string_view code, Transport transport);

}  // namespace hearth::lafs
