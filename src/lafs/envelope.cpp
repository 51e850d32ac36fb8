#include "lafs/envelope.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/random.hpp"
#include "lafs/formats.hpp"
#include "lafs/rpc_map.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {

namespace {

std::optional<std::int64_t> opt_int(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !is_integer(*v)) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  return static_cast<std::int64_t>(v->get_double());
}

std::string str_or_empty(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

ErrorInfo ErrorInfo::from_registry(std::string_view code, std::string message,
                                   json::object details) {
  ErrorInfo e;
  e.code = std::string(code);
  e.message = std::move(message);
  e.details = std::move(details);
  if (const RegisteredCode* entry = find_code(code)) {
    e.category = entry->category;
    e.retryable = entry->retryable;
    e.agent_action = entry->agent_action;
    e.doc_url = std::string(entry->doc_url);
    if (e.message.empty()) e.message = std::string(entry->description);
  } else {
    e.category = Category::kInternal;
    e.retryable = false;
    e.agent_action = AgentAction::kEscalate;
  }
  // The schema asks for 1..1024 characters.
  if (e.message.empty()) e.message = e.code;
  if (code_point_count(e.message) > 1024) e.message = truncate_code_points(e.message, 1021) + "...";
  return e;
}

Page Page::offset_page(std::int64_t limit, std::int64_t offset, bool has_more,
                       std::optional<std::int64_t> total) {
  Page p;
  p.mode = Mode::kOffset;
  p.limit = limit;
  p.offset = offset;
  p.has_more = has_more;
  p.total = total;
  return p;
}

Page Page::cursor_page(std::optional<std::string> next_cursor, bool has_more,
                       std::optional<std::int64_t> limit, std::optional<std::int64_t> total) {
  Page p;
  p.mode = Mode::kCursor;
  p.next_cursor = std::move(next_cursor);
  p.has_more = has_more;
  p.limit = limit;
  p.total = total;
  return p;
}

std::string_view to_string(Page::Mode mode) {
  switch (mode) {
    case Page::Mode::kOffset:
      return "offset";
    case Page::Mode::kCursor:
      return "cursor";
    case Page::Mode::kNone:
      return "none";
  }
  return "none";
}

json::object to_json(const ErrorInfo& e) {
  json::object o;
  o["code"] = e.code;
  o["message"] = e.message.empty() ? std::string("Error") : e.message;
  o["category"] = to_string(e.category);
  o["retryable"] = e.retryable;
  if (e.retry_after_ms) {
    o["retryAfterMs"] = *e.retry_after_ms;
  } else {
    o["retryAfterMs"] = nullptr;
  }
  o["details"] = e.details;
  if (e.agent_action) o["agentAction"] = to_string(*e.agent_action);
  if (e.escalation_required) o["escalationRequired"] = *e.escalation_required;
  if (e.suggested_action) o["suggestedAction"] = *e.suggested_action;
  if (e.doc_url) o["docUrl"] = *e.doc_url;
  return o;
}

json::object to_json(const Page& p) {
  json::object o;
  o["mode"] = to_string(p.mode);
  switch (p.mode) {
    case Page::Mode::kOffset:
      o["limit"] = p.limit.value_or(1);
      o["offset"] = p.offset.value_or(0);
      o["hasMore"] = p.has_more;
      break;
    case Page::Mode::kCursor:
      if (p.next_cursor) {
        o["nextCursor"] = *p.next_cursor;
      } else {
        o["nextCursor"] = nullptr;
      }
      o["hasMore"] = p.has_more;
      if (p.limit) o["limit"] = *p.limit;
      break;
    case Page::Mode::kNone:
      return o;  // "none" carries the mode alone (pagination_mode_consistent)
  }
  if (p.total) o["total"] = *p.total;
  return o;
}

json::object to_json(const Envelope& env) {
  json::object o;
  o["$schema"] = kEnvelopeSchemaId;
  json::object meta;
  meta["specVersion"] = env.meta.spec_version;
  meta["schemaVersion"] = env.meta.schema_version;
  meta["timestamp"] = env.meta.timestamp;
  meta["operation"] = env.meta.operation;
  meta["requestId"] = env.meta.request_id;
  meta["transport"] = to_string(env.meta.transport);
  meta["strict"] = env.meta.strict;
  meta["mvi"] = to_string(env.meta.mvi);
  meta["contextVersion"] = env.meta.context_version;
  if (env.meta.session_id) meta["sessionId"] = *env.meta.session_id;
  if (!env.meta.warnings.empty()) {
    json::array warnings;
    for (const auto& w : env.meta.warnings) {
      json::object wo = w.extra;
      wo["code"] = w.code;
      wo["message"] = w.message;
      warnings.push_back(std::move(wo));
    }
    meta["warnings"] = std::move(warnings);
  }
  o["_meta"] = std::move(meta);
  o["success"] = env.success;
  o["result"] = env.result;
  if (env.error) {
    o["error"] = to_json(*env.error);
  } else if (!env.meta.strict) {
    o["error"] = nullptr;
  }
  if (env.page) {
    o["page"] = to_json(*env.page);
  } else if (!env.meta.strict) {
    o["page"] = nullptr;
  }
  if (!env.extensions.empty()) o["_extensions"] = env.extensions;
  return o;
}

Result<Envelope> from_json(const json::value& v) {
  auto errors = validate_envelope_schema(v);
  if (!errors.empty()) {
    json::array list;
    for (const auto& e : errors) list.push_back(json::value(e.to_string()));
    json::object details;
    details["errors"] = std::move(list);
    return make_error(kValidationSchema, "not a LAFS envelope: " + errors.front().to_string(),
                      std::move(details));
  }
  const auto& o = v.get_object();
  const auto& m = o.at("_meta").get_object();
  Envelope env;
  env.meta.spec_version = str_or_empty(m, "specVersion");
  env.meta.schema_version = str_or_empty(m, "schemaVersion");
  env.meta.timestamp = str_or_empty(m, "timestamp");
  env.meta.operation = str_or_empty(m, "operation");
  env.meta.request_id = str_or_empty(m, "requestId");
  env.meta.transport = parse_transport(m.at("transport").get_string()).value_or(Transport::kSdk);
  env.meta.strict = m.at("strict").get_bool();
  env.meta.mvi = parse_mvi(m.at("mvi").get_string()).value_or(Mvi::kStandard);
  env.meta.context_version = static_cast<std::uint64_t>(opt_int(m, "contextVersion").value_or(0));
  if (const json::value* s = m.if_contains("sessionId")) {
    env.meta.session_id = std::string(s->get_string());
  }
  if (const json::value* ws = m.if_contains("warnings")) {
    for (const auto& item : ws->get_array()) {
      Warning w;
      for (const auto& kv : item.get_object()) {
        if (kv.key() == "code") {
          w.code = std::string(kv.value().get_string());
        } else if (kv.key() == "message") {
          w.message = std::string(kv.value().get_string());
        } else {
          w.extra[kv.key()] = kv.value();
        }
      }
      env.meta.warnings.push_back(std::move(w));
    }
  }
  env.success = o.at("success").get_bool();
  env.result = o.at("result");
  if (const json::value* e = o.if_contains("error"); e != nullptr && e->is_object()) {
    const auto& eo = e->get_object();
    ErrorInfo info;
    info.code = str_or_empty(eo, "code");
    info.message = str_or_empty(eo, "message");
    info.category = parse_category(eo.at("category").get_string()).value_or(Category::kInternal);
    info.retryable = eo.at("retryable").get_bool();
    info.retry_after_ms = opt_int(eo, "retryAfterMs");
    info.details = eo.at("details").get_object();
    if (const json::value* a = eo.if_contains("agentAction")) {
      info.agent_action = parse_agent_action(a->get_string());
    }
    if (const json::value* x = eo.if_contains("escalationRequired")) {
      info.escalation_required = x->get_bool();
    }
    if (const json::value* x = eo.if_contains("suggestedAction")) {
      info.suggested_action = std::string(x->get_string());
    }
    if (const json::value* x = eo.if_contains("docUrl")) {
      info.doc_url = std::string(x->get_string());
    }
    env.error = std::move(info);
  }
  if (const json::value* p = o.if_contains("page"); p != nullptr && p->is_object()) {
    const auto& po = p->get_object();
    Page page;
    const auto mode = po.at("mode").get_string();
    page.mode = mode == "offset"   ? Page::Mode::kOffset
                : mode == "cursor" ? Page::Mode::kCursor
                                   : Page::Mode::kNone;
    page.limit = opt_int(po, "limit");
    page.offset = opt_int(po, "offset");
    if (const json::value* c = po.if_contains("nextCursor"); c != nullptr && c->is_string()) {
      page.next_cursor = std::string(c->get_string());
    }
    if (const json::value* h = po.if_contains("hasMore")) page.has_more = h->get_bool();
    page.total = opt_int(po, "total");
    env.page = std::move(page);
  }
  if (const json::value* x = o.if_contains("_extensions")) env.extensions = x->get_object();
  return env;
}

std::string now_rfc3339() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

Error make_error(std::string_view lafs_code, std::string message, json::object details) {
  json::object lafs;
  lafs["code"] = lafs_code;
  lafs["details"] = std::move(details);
  json::object data;
  data["lafs"] = std::move(lafs);
  return Error::make(jsonrpc_code_for(lafs_code), std::move(message), std::move(data));
}

Builder::Builder(std::string operation) {
  envelope_.meta.operation = std::move(operation);
}

Builder& Builder::request_id(std::string id) {
  envelope_.meta.request_id = std::move(id);
  return *this;
}
Builder& Builder::transport(Transport t) {
  envelope_.meta.transport = t;
  return *this;
}
Builder& Builder::strict(bool on) {
  envelope_.meta.strict = on;
  return *this;
}
Builder& Builder::mvi(Mvi level) {
  envelope_.meta.mvi = level;
  return *this;
}
Builder& Builder::context_version(std::uint64_t version) {
  envelope_.meta.context_version = version;
  return *this;
}
Builder& Builder::session_id(std::string id) {
  envelope_.meta.session_id = std::move(id);
  return *this;
}
Builder& Builder::timestamp(std::string rfc3339) {
  envelope_.meta.timestamp = std::move(rfc3339);
  return *this;
}
Builder& Builder::warning(Warning w) {
  envelope_.meta.warnings.push_back(std::move(w));
  return *this;
}
Builder& Builder::page(Page p) {
  envelope_.page = std::move(p);
  return *this;
}

Status Builder::extension(std::string_view key, json::value value) {
  if (key.size() < 3 || key.substr(0, 2) != "x-") {
    json::object details;
    details["field"] = std::string("_extensions.") + std::string(key);
    return make_error(kValidationSchema,
                      "extension keys must start with \"x-\": '" + std::string(key) + "'",
                      std::move(details));
  }
  envelope_.extensions[key] = std::move(value);
  return {};
}

Builder& Builder::set_context_extension(std::string_view key, json::value value) {
  envelope_.extensions[key] = std::move(value);
  return *this;
}

Result<json::object> Builder::success(json::value result) {
  envelope_.success = true;
  envelope_.error.reset();
  if (result.is_object() || result.is_array() || result.is_null()) {
    envelope_.result = std::move(result);
  } else {
    envelope_.result = json::object{{"value", std::move(result)}};
  }
  return finish();
}

Result<json::object> Builder::failure(ErrorInfo error, json::value result) {
  envelope_.success = false;
  envelope_.error = std::move(error);
  if (result.is_object() || result.is_array() || result.is_null()) {
    envelope_.result = std::move(result);
  } else {
    envelope_.result = json::object{{"value", std::move(result)}};
  }
  return finish();
}

Result<json::object> Builder::finish() {
  if (envelope_.meta.timestamp.empty()) envelope_.meta.timestamp = now_rfc3339();
  if (envelope_.meta.request_id.empty()) envelope_.meta.request_id = "req_" + random_hex(8);
  json::object out = to_json(envelope_);
  json::value as_value = out;
  auto errors = validate_envelope_schema(as_value);
  if (!errors.empty()) {
    json::array list;
    for (const auto& e : errors) list.push_back(json::value(e.to_string()));
    json::object details;
    details["errors"] = std::move(list);
    return make_error(kInternalUnexpected,
                      "the envelope built for '" + envelope_.meta.operation +
                          "' breaks the schema: " + errors.front().to_string(),
                      std::move(details));
  }
  return out;
}

}  // namespace hearth::lafs
