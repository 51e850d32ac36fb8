#include "lafs/conformance.hpp"

#include <algorithm>
#include <array>

#include "lafs/flags.hpp"
#include "lafs/registry.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {

namespace {

constexpr std::array<std::string_view, 3> kCore = {"envelope_schema_valid", "envelope_invariants",
                                                   "error_code_registered"};
constexpr std::array<std::string_view, 11> kStandard = {
    "envelope_schema_valid",      "envelope_invariants",         "error_code_registered",
    "agent_action_valid",         "error_registry_agent_action", "transport_mapping_consistent",
    "meta_mvi_present",           "meta_strict_present",         "strict_mode_behavior",
    "pagination_mode_consistent", "strict_mode_enforced"};
constexpr std::array<std::string_view, 13> kComplete = {
    "envelope_schema_valid",    "envelope_invariants",         "error_code_registered",
    "agent_action_valid",       "error_registry_agent_action", "transport_mapping_consistent",
    "context_mutation_failure", "context_preservation_valid",  "meta_mvi_present",
    "meta_strict_present",      "strict_mode_behavior",        "pagination_mode_consistent",
    "strict_mode_enforced"};
constexpr std::array<std::string_view, 13> kAllEnvelopeChecks = {
    "envelope_schema_valid",       "envelope_invariants",
    "error_code_registered",       "agent_action_valid",
    "error_registry_agent_action", "transport_mapping_consistent",
    "context_mutation_failure",    "meta_mvi_present",
    "meta_strict_present",         "strict_mode_behavior",
    "pagination_mode_consistent",  "strict_mode_enforced",
    "context_preservation_valid"};

void push(std::vector<Check>& checks, std::string_view name, bool pass, std::string detail = {},
          bool advisory = false) {
  checks.push_back(Check{std::string(name), pass, std::move(detail), {}, advisory});
}

const json::object& object_or_empty(const json::value* v) {
  static const json::object kEmpty;
  return v != nullptr && v->is_object() ? v->get_object() : kEmpty;
}

bool is_true(const json::value* v) {
  return v != nullptr && v->is_bool() && v->get_bool();
}

// A number as the checks compare it (the schema has made sure it is one where it matters).
std::optional<double> number_of(const json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  if (v->is_double()) return v->get_double();
  return std::nullopt;
}

std::string number_text(const json::value* v) {
  return v == nullptr ? "undefined" : json::dump(*v);
}

bool ok_of(const std::vector<Check>& checks) {
  return std::all_of(checks.begin(), checks.end(),
                     [](const Check& c) { return c.pass || c.advisory; });
}

std::vector<Check> filter_tier(std::vector<Check> checks, std::optional<Tier> tier) {
  if (!tier) return checks;
  auto allowed = checks_for_tier(*tier);
  std::vector<Check> out;
  for (auto& c : checks) {
    if (std::find(allowed.begin(), allowed.end(), c.name) != allowed.end()) {
      out.push_back(std::move(c));
    }
  }
  return out;
}

/// What the checks read from an envelope that passed the schema.
struct EnvelopeFacts {
  explicit EnvelopeFacts(const json::value& envelope)
      : env(envelope.get_object()),
        meta(env.at("_meta").get_object()),
        success(env.at("success").get_bool()),
        error_v(env.if_contains("error")),
        has_error(error_v != nullptr && !error_v->is_null()),
        error(object_or_empty(error_v)),
        code(error.contains("code") ? std::string_view(error.at("code").get_string())
                                    : std::string_view()),
        transport(meta.at("transport").get_string()),
        strict(meta.at("strict").get_bool()),
        ext(object_or_empty(env.if_contains("_extensions"))) {}

  const json::object& env;
  const json::object& meta;
  const bool success;
  const json::value* error_v;
  const bool has_error;
  const json::object& error;
  const std::string_view code;
  const std::string_view transport;
  const bool strict;
  const json::object& ext;
};

/// envelope_invariants, error_code_registered, agent_action_valid,
/// error_registry_agent_action and transport_mapping_consistent: the error member.
void check_error_members(std::vector<Check>& checks, const EnvelopeFacts& e) {
  // envelope_invariants: success=true allows error null or absent; success=false needs an error.
  // A failure may carry a result (LAFS 1.8.0).
  const bool invariant = e.success ? !e.has_error : e.has_error;
  push(checks, "envelope_invariants", invariant,
       invariant   ? ""
       : e.success ? "success=true but error is present and non-null"
                   : "success=false requires error to be a non-null object");

  if (e.has_error) {
    const bool registered = find_code(e.code) != nullptr;
    push(checks, "error_code_registered", registered,
         registered ? "" : "unregistered code: " + std::string(e.code));
  } else {
    push(checks, "error_code_registered", true,
         "error absent or null: skipped (optional when success=true)");
  }

  const json::value* action = e.has_error ? e.error.if_contains("agentAction") : nullptr;
  if (action != nullptr) {
    const bool valid = action->is_string() && parse_agent_action(action->get_string()).has_value();
    push(checks, "agent_action_valid", valid,
         valid ? "" : "invalid agentAction: " + json::dump(*action));
  } else {
    push(checks, "agent_action_valid", true, "agentAction absent: skipped");
  }

  if (action != nullptr && find_code(e.code) != nullptr) {
    const RegisteredCode* entry = find_code(e.code);
    const std::string_view registry_action = to_string(entry->agent_action);
    const bool matches = action->is_string() && action->get_string() == registry_action;
    push(checks, "error_registry_agent_action", true,
         matches
             ? ""
             : "agentAction " + json::dump(*action) + " differs from the registry default \"" +
                   std::string(registry_action) + "\" for " + std::string(e.code) + " (advisory)",
         true);
  } else {
    push(checks, "error_registry_agent_action", true,
         e.has_error ? "agentAction absent or code unregistered: skipped"
                     : "no error present: skipped",
         true);
  }

  if (e.has_error) {
    if (e.transport == "sdk") {
      push(checks, "transport_mapping_consistent", true,
           "sdk transport does not require external status-code mapping");
    } else {
      const bool mapped = find_code(e.code) != nullptr;
      push(checks, "transport_mapping_consistent", mapped,
           mapped ? ""
                  : "no " + std::string(e.transport) + " mapping found for code " +
                        std::string(e.code));
    }
  } else {
    push(checks, "transport_mapping_consistent", true, "no error present: mapping check skipped");
  }
}

/// context_mutation_failure: an envelope whose context is required carries its identity, or
/// fails with E_CONTEXT_MISSING or E_CONTEXT_STALE.
void check_context_mutation(std::vector<Check>& checks, const EnvelopeFacts& e) {
  const json::object& context = object_or_empty(e.ext.if_contains("context"));
  const json::object& lafs = object_or_empty(e.ext.if_contains("lafs"));
  const bool required = is_true(e.ext.if_contains("lafsContextRequired")) ||
                        is_true(context.if_contains("required")) ||
                        is_true(lafs.if_contains("contextRequired"));
  if (!required) {
    push(checks, "context_mutation_failure", true, "context not marked required: skipped");
  } else if (e.success) {
    const auto version = number_of(e.meta.if_contains("contextVersion"));
    const bool identity = (version && *version > 0) || e.meta.contains("sessionId");
    push(checks, "context_mutation_failure", identity,
         identity ? "" : "context required but missing identity (expect E_CONTEXT_MISSING)");
  } else {
    const bool pass = e.code == kContextMissing || e.code == kContextStale;
    push(checks, "context_mutation_failure", pass,
         pass ? ""
              : "context required failures should return E_CONTEXT_MISSING or E_CONTEXT_STALE, "
                "got " +
                    (e.has_error ? std::string(e.code) : std::string("undefined")));
  }
}

/// meta_mvi_present, meta_strict_present and strict_mode_behavior.
void check_meta_members(std::vector<Check>& checks, const EnvelopeFacts& e) {
  const bool mvi_valid = parse_mvi(e.meta.at("mvi").get_string()).has_value();
  push(checks, "meta_mvi_present", mvi_valid, mvi_valid ? "" : "invalid mvi level");
  push(checks, "meta_strict_present", e.meta.at("strict").is_bool());

  if (e.strict) {
    const bool null_error = e.success && e.error_v != nullptr && e.error_v->is_null();
    const json::value* page = e.env.if_contains("page");
    const bool null_page = page != nullptr && page->is_null();
    const bool clean = !null_error && !null_page;
    push(checks, "strict_mode_behavior", clean,
         clean ? "" : "strict mode: optional fields should be omitted rather than set to null");
  }
}

/// pagination_mode_consistent.
void check_pagination(std::vector<Check>& checks, const EnvelopeFacts& e) {
  if (const json::value* page_v = e.env.if_contains("page");
      page_v != nullptr && page_v->is_object()) {
    const auto& page = page_v->get_object();
    const std::string_view mode = page.at("mode").get_string();
    bool consistent = true;
    std::string detail;
    if (mode == "cursor" && page.contains("offset")) {
      consistent = false;
      detail = "cursor mode should not include offset field";
    } else if (mode == "offset" && page.contains("nextCursor")) {
      consistent = false;
      detail = "offset mode should not include nextCursor field";
    } else if (mode == "none" && page.size() > 1) {
      consistent = false;
      detail = "none mode should only have mode field, found:";
      for (const auto& kv : page) {
        if (kv.key() != "mode") detail += " " + std::string(kv.key());
      }
    }
    push(checks, "pagination_mode_consistent", consistent, detail);
  } else {
    push(checks, "pagination_mode_consistent", true, "page absent: skipped");
  }
}

/// strict_mode_enforced: the schema must reject an extra top-level member in strict mode and
/// allow it otherwise.
void check_strict_enforced(std::vector<Check>& checks, const json::value& envelope,
                           const EnvelopeFacts& e) {
  json::value extra = envelope;
  extra.get_object()["_unknown_extra"] = true;
  const bool accepted = envelope_schema_valid(extra);
  if (e.strict) {
    push(checks, "strict_mode_enforced", !accepted,
         accepted ? "strict=true but additional properties were accepted" : "");
  } else {
    push(checks, "strict_mode_enforced", accepted,
         accepted ? "" : "strict=false but additional properties were rejected");
  }
}

/// context_preservation_valid: the context ledger's version matches the envelope's, grows, and
/// keeps its constraints on success.
void check_context_preservation(std::vector<Check>& checks, const EnvelopeFacts& e) {
  const json::value* ledger_v = e.ext.if_contains("contextLedger");
  if (ledger_v == nullptr) ledger_v = e.ext.if_contains("context");
  if (ledger_v == nullptr || !ledger_v->is_object()) {
    push(checks, "context_preservation_valid", true, "context ledger absent: skipped");
  } else {
    const auto& ledger = ledger_v->get_object();
    const json::value* version_v = ledger.if_contains("version");
    const json::value* previous_v = ledger.if_contains("previousVersion");
    const json::value* removed_v = ledger.if_contains("removedConstraints");
    const auto version = number_of(version_v);
    const auto previous = number_of(previous_v);
    const auto envelope_version = number_of(e.meta.if_contains("contextVersion"));
    const bool matches = version && envelope_version && *version == *envelope_version;
    const bool monotonic = !previous || (version && *version >= *previous);
    const bool preserved = removed_v == nullptr || !removed_v->is_array() ||
                           removed_v->get_array().empty() || !e.success;
    bool pass = matches && monotonic && preserved;
    std::string detail;
    if (!version) {
      pass = false;
      detail = "context ledger version must be numeric";
    } else if (!matches) {
      detail = "context version mismatch: ledger=" + number_text(version_v) +
               " envelope=" + number_text(e.meta.if_contains("contextVersion"));
    } else if (!monotonic) {
      detail = "non-monotonic context version: previous=" + number_text(previous_v) +
               " current=" + number_text(version_v);
    } else if (!preserved) {
      detail = "context constraint removal detected on successful response";
    }
    if (!e.success && e.has_error && is_true(ledger.if_contains("required"))) {
      const bool stale = is_true(ledger.if_contains("stale"));
      if (stale && e.code != kContextStale) {
        pass = false;
        detail = "stale context should return E_CONTEXT_STALE, got " + std::string(e.code);
      }
      if (!stale && e.code != kContextMissing && e.code != kContextStale) {
        pass = false;
        detail =
            "required context failure should return E_CONTEXT_MISSING or E_CONTEXT_STALE, got " +
            std::string(e.code);
      }
    }
    push(checks, "context_preservation_valid", pass, detail);
  }
}

std::vector<Check> envelope_checks(const json::value& envelope) {
  std::vector<Check> checks;
  auto errors = validate_envelope_schema(envelope);
  if (!errors.empty()) {
    std::string detail;
    for (const auto& e : errors) {
      if (!detail.empty()) detail += "; ";
      detail += e.to_string();
    }
    push(checks, "envelope_schema_valid", false, std::move(detail));
    return checks;  // nothing else can be read safely
  }
  push(checks, "envelope_schema_valid", true);
  const EnvelopeFacts facts(envelope);
  check_error_members(checks, facts);
  check_context_mutation(checks, facts);
  check_meta_members(checks, facts);
  check_pagination(checks, facts);
  check_strict_enforced(checks, envelope, facts);
  check_context_preservation(checks, facts);
  return checks;
}

}  // namespace

std::string_view to_string(Tier t) {
  switch (t) {
    case Tier::kCore:
      return "core";
    case Tier::kStandard:
      return "standard";
    case Tier::kComplete:
      return "complete";
  }
  return "core";
}

std::optional<Tier> parse_tier(std::string_view s) {
  if (s == "core") return Tier::kCore;
  if (s == "standard") return Tier::kStandard;
  if (s == "complete") return Tier::kComplete;
  return std::nullopt;
}

std::span<const std::string_view> checks_for_tier(Tier tier) {
  switch (tier) {
    case Tier::kCore:
      return kCore;
    case Tier::kStandard:
      return kStandard;
    case Tier::kComplete:
      return kComplete;
  }
  return kCore;
}

std::span<const std::string_view> envelope_check_names() {
  return kAllEnvelopeChecks;
}

std::string_view to_string(DocumentKind k) {
  switch (k) {
    case DocumentKind::kEnvelope:
      return "envelope";
    case DocumentKind::kFlags:
      return "flags";
    case DocumentKind::kWorkflow:
      return "workflow";
  }
  return "envelope";
}

Report run_envelope_conformance(const json::value& envelope, std::optional<Tier> tier) {
  Report r;
  r.kind = DocumentKind::kEnvelope;
  r.checks = filter_tier(envelope_checks(envelope), tier);
  r.ok = ok_of(r.checks);
  return r;
}

Report run_flag_conformance(const json::value& flags) {
  Report r;
  r.kind = DocumentKind::kFlags;
  auto input = parse_flag_input(flags);
  if (!input.ok()) {
    push(r.checks, "flag_resolution", false, input.error().message);
    r.ok = false;
    return r;
  }
  auto resolved = resolve_format(input.value());
  if (!resolved.ok()) {
    // Conflicting flags rejected with E_FORMAT_CONFLICT is the conforming outcome.
    const json::value* lafs = resolved.error().data.is_object()
                                  ? resolved.error().data.get_object().if_contains("lafs")
                                  : nullptr;
    const bool conflict = lafs != nullptr && lafs->is_object() &&
                          lafs->get_object().at("code") == json::value(kFormatConflict);
    push(r.checks, "flag_conflict_rejected", conflict,
         conflict ? "rejected with E_FORMAT_CONFLICT" : resolved.error().message);
    r.ok = ok_of(r.checks);
    return r;
  }
  const FlagInput& in = input.value();
  const FlagResolution& res = resolved.value();
  push(r.checks, "flag_conflict_rejected", !(in.human_flag && in.json_flag),
       "resolved to " + std::string(to_string(res.format)) +
           " (source: " + std::string(to_string(res.source)) + ")");
  const bool is_default = res.source == FlagResolution::Source::kDefault;
  push(r.checks, "json_protocol_default", !is_default || res.format == Format::kJson,
       is_default && res.format != Format::kJson ? "protocol default should be json" : "");
  const bool config =
      res.source == FlagResolution::Source::kProject || res.source == FlagResolution::Source::kUser;
  const auto expected =
      res.source == FlagResolution::Source::kProject ? in.project_default : in.user_default;
  const bool respected = !config || (expected && *expected == res.format);
  push(r.checks, "config_override_respected", respected,
       respected ? "" : "config override not applied");
  r.ok = ok_of(r.checks);
  return r;
}

Report run_workflow_conformance(const json::value& workflow, std::optional<Tier> tier) {
  Report r;
  r.kind = DocumentKind::kWorkflow;
  const json::object& doc = object_or_empty(&workflow);
  const json::value* envelopes_v = doc.if_contains("envelopes");
  const json::value* ledger_v = doc.if_contains("ledger");
  if (envelopes_v == nullptr || !envelopes_v->is_array() || envelopes_v->get_array().empty()) {
    push(r.checks, "workflow_shape", false, "a workflow needs a non-empty 'envelopes' array");
    r.ok = false;
    return r;
  }
  struct Step {
    std::optional<double> version;
    bool success = false;
  };
  std::vector<Step> steps;
  std::size_t i = 0;
  for (const auto& item : envelopes_v->get_array()) {
    const std::string subject = "envelopes[" + std::to_string(i++) + "]";
    const json::value* env = item.is_object() ? item.get_object().if_contains("envelope") : nullptr;
    const json::value missing;
    auto checks = filter_tier(envelope_checks(env != nullptr ? *env : missing), tier);
    for (auto& c : checks) {
      c.subject = subject;
      r.checks.push_back(std::move(c));
    }
    Step step;
    if (env != nullptr && env->is_object()) {
      const json::object& meta = object_or_empty(env->get_object().if_contains("_meta"));
      step.version = number_of(meta.if_contains("contextVersion"));
      step.success = is_true(env->get_object().if_contains("success"));
    }
    steps.push_back(step);
  }

  if (ledger_v == nullptr) {
    push(r.checks, "ledger_schema_valid", false, "the workflow has no 'ledger'");
  } else {
    auto errors = validate_context_ledger_schema(*ledger_v);
    std::string detail;
    for (const auto& e : errors) detail += (detail.empty() ? "" : "; ") + e.to_string();
    push(r.checks, "ledger_schema_valid", errors.empty(), detail);
  }

  {
    bool pass = true;
    std::string detail;
    for (std::size_t k = 1; k < steps.size() && pass; ++k) {
      const auto& a = steps[k - 1];
      const auto& b = steps[k];
      const std::string at = "envelopes[" + std::to_string(k) + "]";
      if (!a.version || !b.version) {
        pass = false;
        detail = at + ": contextVersion missing";
      } else if (*b.version < *a.version) {
        pass = false;
        detail = at + ": contextVersion goes back from " +
                 std::to_string(static_cast<long long>(*a.version)) + " to " +
                 std::to_string(static_cast<long long>(*b.version));
      } else if (*b.version - *a.version > 1) {
        pass = false;
        detail = at + ": contextVersion skips from " +
                 std::to_string(static_cast<long long>(*a.version)) + " to " +
                 std::to_string(static_cast<long long>(*b.version));
      } else if (!b.success && *b.version != *a.version) {
        pass = false;
        detail = at + ": a failed step advanced contextVersion";
      }
    }
    push(r.checks, "context_version_sequence", pass, detail);
  }

  if (ledger_v != nullptr && ledger_v->is_object()) {
    const auto ledger_version = number_of(ledger_v->get_object().if_contains("version"));
    const auto& last = steps.back().version;
    const bool sync = ledger_version && last && *ledger_version == *last;
    push(r.checks, "ledger_version_sync", sync,
         sync ? ""
              : "the ledger's version " +
                    number_text(ledger_v->get_object().if_contains("version")) +
                    " is not the last envelope's contextVersion");
    bool monotonic = true;
    std::string detail;
    std::optional<double> prev;
    const json::value* entries = ledger_v->get_object().if_contains("entries");
    if (entries != nullptr && entries->is_array()) {
      std::size_t k = 0;
      for (const auto& e : entries->get_array()) {
        const auto v =
            e.is_object() ? number_of(e.get_object().if_contains("version")) : std::nullopt;
        if (v && prev && (*v < *prev || *v - *prev > 1)) {
          monotonic = false;
          detail = "entries[" + std::to_string(k) + "]: version " +
                   std::to_string(static_cast<long long>(*v)) + " after " +
                   std::to_string(static_cast<long long>(*prev));
          break;
        }
        if (v) prev = v;
        ++k;
      }
    }
    push(r.checks, "ledger_entries_monotonic", monotonic, detail);
  }
  r.ok = ok_of(r.checks);
  return r;
}

DocumentKind classify(const json::value& document) {
  if (!document.is_object()) return DocumentKind::kEnvelope;
  const auto& o = document.get_object();
  if (!o.contains("_meta") && (o.contains("jsonFlag") || o.contains("humanFlag"))) {
    return DocumentKind::kFlags;
  }
  if (const json::value* e = o.if_contains("envelopes"); e != nullptr && e->is_array()) {
    return DocumentKind::kWorkflow;
  }
  return DocumentKind::kEnvelope;
}

Report check_document(const json::value& document, std::optional<Tier> tier) {
  switch (classify(document)) {
    case DocumentKind::kFlags:
      return run_flag_conformance(document);
    case DocumentKind::kWorkflow:
      return run_workflow_conformance(document, tier);
    case DocumentKind::kEnvelope:
      break;
  }
  return run_envelope_conformance(document, tier);
}

json::object to_json(const Report& report) {
  json::array checks;
  for (const auto& c : report.checks) {
    json::object o;
    o["name"] = c.name;
    o["pass"] = c.pass;
    if (!c.detail.empty()) o["detail"] = c.detail;
    if (!c.subject.empty()) o["subject"] = c.subject;
    if (c.advisory) o["advisory"] = true;
    checks.push_back(std::move(o));
  }
  return json::object{
      {"kind", to_string(report.kind)}, {"ok", report.ok}, {"checks", std::move(checks)}};
}

std::string to_text(const Report& report) {
  std::string out;
  for (const auto& c : report.checks) {
    out += c.pass ? "  PASS  " : "  FAIL  ";
    if (!c.subject.empty()) out += c.subject + " ";
    out += c.name;
    if (c.advisory) out += " (advisory)";
    out += '\n';
    const bool note = c.advisory && c.detail.find("(advisory)") != std::string::npos;
    if (!c.detail.empty() && (!c.pass || note)) out += "        " + c.detail + '\n';
  }
  return out;
}

}  // namespace hearth::lafs
