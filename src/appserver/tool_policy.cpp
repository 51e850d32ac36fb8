#include "appserver/tool_policy.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "common/sha256.hpp"

namespace hearth::appserver {

namespace {

/// The side effects of the format's operations contract (app-operations.schema.json).
constexpr std::array<std::string_view, 9> kSideEffects = {
    "none",           "local_file_write", "app_storage_write", "artifact_create",
    "external_write", "external_publish", "external_delete",   "bulk_update",
    "draftbox_write"};

/// The side effects that must not auto-execute and should require approval (the format's
/// rule for publish, delete and bulk update).
bool never_automatic(std::string_view side_effect) {
  return side_effect == "external_publish" || side_effect == "external_delete" ||
         side_effect == "bulk_update";
}

/// A boolean member of an operation, camelCase or the snake_case alias the reference CLI
/// accepts; nullopt when absent or not a boolean.
std::optional<bool> flag(const json::object& op, std::string_view camel, std::string_view snake) {
  for (const auto name : {camel, snake}) {
    const auto* v = op.if_contains(name);
    if (v != nullptr && v->is_bool()) return v->get_bool();
  }
  return std::nullopt;
}

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), valid_name_char);
}

std::string sanitized(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 64)) out += valid_name_char(c) ? c : '_';
  return out;
}

}  // namespace

json::object ToolPolicy::to_json() const {
  return json::object{
      {"operation", operation.empty() ? json::value(nullptr) : json::value(operation)},
      {"sideEffect", side_effect},
      {"approvalRequired", approval},
      {"dryRunRequired", dry_run},
      {"evidenceRequired", evidence},
      {"reason", why}};
}

ToolPolicy policy_for(const json::object* operation) {
  ToolPolicy p;
  if (operation == nullptr) {
    p.side_effect = "unknown";
    p.why =
        "no operation of the app declares this tool, so what it changes is unknown: each call "
        "waits for the person";
    return p;
  }
  const auto& op = *operation;
  p.operation = json::string_member(op, "key");
  p.side_effect = json::string_member(op, "sideEffect");
  if (p.side_effect.empty()) p.side_effect = json::string_member(op, "side_effect");
  const bool known =
      std::find(kSideEffects.begin(), kSideEffects.end(), p.side_effect) != kSideEffects.end();
  if (!known) p.side_effect = p.side_effect.empty() ? "unknown" : p.side_effect;
  const auto approval = flag(op, "approvalRequired", "approval_required");
  const auto automatic = flag(op, "autoExecute", "auto_execute");
  const std::string declared = "the app's operation " + p.operation;
  if (approval.value_or(false)) {
    p.approval = true;
    p.why = declared + " requires approval";
  } else if (!known || never_automatic(p.side_effect)) {
    p.approval = true;
    p.why = declared + " has the side effect " + p.side_effect +
            (known ? ", which never runs without the person's approval"
                   : ", which is not one the format defines: it waits for the person");
    if (automatic.value_or(false)) p.why += " (its autoExecute is not honoured)";
  } else if (automatic.value_or(false)) {
    p.approval = false;
    p.why = declared + " runs without approval (autoExecute)";
  } else if (approval.has_value()) {
    p.approval = false;
    p.why = declared + " says it needs no approval";
  } else if (p.side_effect == "none") {
    p.approval = false;
    p.why = declared + " changes nothing (side effect none)";
  } else {
    p.approval = true;
    p.why = declared + " has the side effect " + p.side_effect +
            " and does not say it may run on its own (autoExecute): it waits for the person";
  }
  p.dry_run = flag(op, "dryRunRequired", "dry_run_required").value_or(false);
  p.evidence =
      flag(op, "evidenceRequired", "evidence_required").value_or(false) || p.side_effect != "none";
  return p;
}

ToolPolicy policy_of_binding(bool writes) {
  ToolPolicy p;
  p.side_effect = writes ? "unknown" : "none";
  p.approval = writes;
  p.evidence = writes;  // a side effect other than none leaves evidence
  p.why = writes ? "it changes what it is bound to: it waits for the person"
                 : "it only reads what it is bound to";
  return p;
}

const json::object* find_operation(const json::array& operations, std::string_view key) {
  for (const auto& item : operations) {
    const auto* op = item.if_object();
    if (op != nullptr && json::string_member(*op, "key") == key) return op;
  }
  return nullptr;
}

bool takes_dry_run(const json::value& input_schema) {
  const auto* schema = input_schema.if_object();
  const auto* properties = schema != nullptr ? schema->if_contains("properties") : nullptr;
  return properties != nullptr && properties->is_object() &&
         properties->get_object().contains("dryRun");
}

std::vector<std::string> backend_tool_names(
    const std::vector<std::pair<std::string, std::string>>& tools,
    const std::set<std::string>& reserved) {
  std::map<std::string, int> listed;
  for (const auto& [service, name] : tools) ++listed[name];
  std::vector<std::string> out(tools.size());
  std::set<std::string> used;
  // Own names first, so that a prefixed name never takes one a tool could keep.
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const auto& name = tools[i].second;
    if (valid_name(name) && listed[name] == 1 && !reserved.contains(name)) {
      out[i] = name;
      used.insert(name);
    }
  }
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (!out[i].empty()) continue;
    const std::string base = sanitized(tools[i].first + "__" + tools[i].second);
    std::string candidate = base;
    for (int n = 2; reserved.contains(candidate) || used.contains(candidate); ++n) {
      const std::string suffix = "_" + std::to_string(n);
      candidate = base.substr(0, 64 - suffix.size()) + suffix;
    }
    out[i] = candidate;
    used.insert(candidate);
  }
  return out;
}

Result<json::value> read_tool_result(const json::value& result) {
  const auto* o = result.if_object();
  if (o == nullptr) return result;
  std::string text;
  bool only_text = true;
  const auto* content = o->if_contains("content");
  if (content != nullptr && content->is_array()) {
    for (const auto& block : content->get_array()) {
      if (json::string_member(block, "type") == "text") {
        if (!text.empty()) text += "\n";
        text += json::string_member(block, "text");
      } else {
        only_text = false;
      }
    }
  }
  const auto* is_error = o->if_contains("isError");
  if (is_error != nullptr && is_error->is_bool() && is_error->get_bool()) {
    json::object data;
    if (content != nullptr) data["content"] = *content;
    return Error::make(ErrorCode::kHandlerError,
                       text.empty() ? std::string("the tool reported an error") : text,
                       std::move(data));
  }
  if (const auto* structured = o->if_contains("structuredContent");
      structured != nullptr && !structured->is_null()) {
    return *structured;
  }
  if (content != nullptr && content->is_array()) {
    if (only_text) return json::value(text);
    return *content;
  }
  return result;
}

json::value bounded(const json::value& value, std::size_t limit) {
  const std::string text = json::serialize(value);
  if (text.size() <= limit) return value;
  return json::object{{"elided", true},
                      {"bytes", static_cast<std::int64_t>(text.size())},
                      {"sha256", "sha256:" + sha256_hex(text)}};
}

}  // namespace hearth::appserver
