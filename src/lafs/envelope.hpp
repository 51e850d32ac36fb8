#pragma once
/// The LAFS envelope (spec section 6): model, builder and the reading of an envelope back into
/// the model. What the builder produces is valid against the envelope schema by construction and
/// checked again before it is handed out (validate.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "lafs/registry.hpp"

namespace hearth::lafs {

/// Protocol versions hearth speaks (`_meta.specVersion`, `_meta.schemaVersion`).
inline constexpr std::string_view kSpecVersion = "1.0.0";
inline constexpr std::string_view kSchemaVersion = "1.0.0";

/// A non-fatal advisory in `_meta.warnings`.
struct Warning {
  std::string code;  ///< e.g. "E_MVI_BUDGET_TRUNCATED", "DEPRECATED_FIELD"
  std::string message;
  json::object extra;  ///< further members (deprecated, replacement, removeBy, ...)
};

/// `_meta`.
struct Meta {
  std::string spec_version{kSpecVersion};
  std::string schema_version{kSchemaVersion};
  std::string timestamp;   ///< RFC 3339; empty: the builder stamps the current time
  std::string operation;   ///< 1..128 characters, e.g. "todo-manager.addTodo"
  std::string request_id;  ///< 3..128 characters; empty: the builder makes one up
  Transport transport = Transport::kSdk;
  bool strict = true;
  Mvi mvi = Mvi::kStandard;
  std::uint64_t context_version = 0;
  std::optional<std::string> session_id;
  std::vector<Warning> warnings;
};

/// The `error` object (spec section 7).
struct ErrorInfo {
  std::string code;
  std::string message;
  Category category = Category::kInternal;
  bool retryable = false;
  std::optional<std::int64_t> retry_after_ms;
  json::object details;
  std::optional<AgentAction> agent_action;
  std::optional<bool> escalation_required;
  std::optional<std::string> suggested_action;
  std::optional<std::string> doc_url;

  /// An error of a registered code with the registry's category, retryability, agent action and
  /// documentation URL filled in. An unregistered code gets INTERNAL, not retryable, escalate.
  static ErrorInfo from_registry(std::string_view code, std::string message,
                                 json::object details = {});
};

/// `page` (spec section 9.4): one of three modes, each with its own members.
struct Page {
  enum class Mode { kOffset, kCursor, kNone };
  Mode mode = Mode::kNone;
  std::optional<std::int64_t> limit;       ///< 1..1000
  std::optional<std::int64_t> offset;      ///< offset mode only
  std::optional<std::string> next_cursor;  ///< cursor mode: null (absent here) on the last page
  bool has_more = false;
  std::optional<std::int64_t> total;

  static Page offset_page(std::int64_t limit, std::int64_t offset, bool has_more,
                          std::optional<std::int64_t> total = std::nullopt);
  static Page cursor_page(std::optional<std::string> next_cursor, bool has_more,
                          std::optional<std::int64_t> limit = std::nullopt,
                          std::optional<std::int64_t> total = std::nullopt);
  static Page none() { return Page{}; }
};

std::string_view to_string(Page::Mode mode);

/// A whole envelope.
struct Envelope {
  Meta meta;
  bool success = true;
  json::value result = nullptr;  ///< object, array or null
  std::optional<ErrorInfo> error;
  std::optional<Page> page;
  json::object extensions;  ///< `_extensions`; omitted when empty
};

/// Serialises an envelope. In strict mode absent optional members are omitted (spec 6.1: "SHOULD
/// omit rather than set to null"); in lenient mode `error` and `page` are written as null when
/// absent, as older clients expect.
json::object to_json(const Envelope& envelope);
json::object to_json(const ErrorInfo& error);
json::object to_json(const Page& page);

/// Reads a schema-valid envelope back into the model; kInvalidParams (E_VALIDATION_SCHEMA) with
/// every schema error otherwise.
Result<Envelope> from_json(const json::value& envelope);

/// The current time as RFC 3339 UTC with milliseconds ("2026-11-21T19:43:00.123Z").
std::string now_rfc3339();

/// An error value carrying a LAFS code: the JSON-RPC code the mapping table gives for it, the
/// message, and `data.lafs = {code, details}` so that envelope mode reports the exact LAFS code.
Error make_error(std::string_view lafs_code, std::string message, json::object details = {});

/// Builds envelopes. Fills what the caller leaves out (timestamp, request id), keeps `_extensions`
/// keys to the `x-` convention, and refuses to hand out an envelope that breaks the schema or the
/// invariants (a programming error, reported as a value: E_INTERNAL_UNEXPECTED).
class Builder {
 public:
  explicit Builder(std::string operation);

  Builder& request_id(std::string id);
  Builder& transport(Transport t);
  Builder& strict(bool on);
  Builder& mvi(Mvi level);
  Builder& context_version(std::uint64_t version);
  Builder& session_id(std::string id);
  Builder& timestamp(std::string rfc3339);
  Builder& warning(Warning w);
  Builder& page(Page p);

  /// Adds `_extensions[key]`. Keys must start with "x-" (spec 6.2.2); other keys are
  /// E_VALIDATION_SCHEMA. The context keys the conformance runner reads (`context`,
  /// `contextLedger`) are set through set_context_extension instead.
  Status extension(std::string_view key, json::value value);
  /// Sets a protocol-defined context extension (`context` or `contextLedger`), see context.hpp.
  Builder& set_context_extension(std::string_view key, json::value value);

  const Meta& meta() const { return envelope_.meta; }

  /// A success envelope. A result that is not an object, an array or null (a string, a number)
  /// is wrapped as {"value": result}: the schema allows only those three.
  Result<json::object> success(json::value result);
  /// A failure envelope. `result` may carry actionable data alongside the error (allowed by the
  /// schema and the reference since LAFS 1.8.0; see docs/lafs.md).
  Result<json::object> failure(ErrorInfo error, json::value result = nullptr);

 private:
  Result<json::object> finish();
  Envelope envelope_;
};

}  // namespace hearth::lafs
