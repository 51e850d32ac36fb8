#include "lafs/problem_details.hpp"

namespace hearth::lafs {

int http_status(const ErrorInfo& error) {
  const RegisteredCode* entry = find_code(error.code);
  return entry != nullptr ? entry->http_status : 500;
}

json::object problem_details(const ErrorInfo& error, std::string_view request_id) {
  const RegisteredCode* entry = find_code(error.code);
  json::object pd;
  pd["type"] = entry != nullptr ? entry->type_uri : std::string_view("about:blank");
  pd["title"] = entry != nullptr ? entry->description : std::string_view(error.code);
  pd["status"] = http_status(error);
  pd["detail"] = error.message;
  if (!request_id.empty()) pd["instance"] = request_id;
  pd["code"] = error.code;
  pd["category"] = to_string(error.category);
  pd["retryable"] = error.retryable;
  if (error.retry_after_ms) pd["retryAfterMs"] = *error.retry_after_ms;
  if (error.agent_action) pd["agentAction"] = to_string(*error.agent_action);
  if (error.escalation_required) pd["escalationRequired"] = *error.escalation_required;
  if (error.suggested_action) pd["suggestedAction"] = *error.suggested_action;
  if (error.doc_url) pd["docUrl"] = *error.doc_url;
  for (const auto& kv : error.details) {
    if (!pd.contains(kv.key())) pd[kv.key()] = kv.value();
  }
  return pd;
}

}  // namespace hearth::lafs
