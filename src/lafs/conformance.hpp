#pragma once
/// The LAFS conformance runner: the reference runner's checks (conformance/README.md) on
/// envelopes, its flag checks on flag inputs, and hearth's own checks of multi-step workflow
/// documents, with the tiers of schemas/v1/conformance-profiles.json (core, standard, complete).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.hpp"

namespace hearth::lafs {

enum class Tier { kCore, kStandard, kComplete };
std::string_view to_string(Tier t);
std::optional<Tier> parse_tier(std::string_view s);

/// The checks a tier requires (conformance-profiles.json 1.0.0, built in).
std::span<const std::string_view> checks_for_tier(Tier tier);

/// Every envelope check the runner knows, in the order it runs them.
std::span<const std::string_view> envelope_check_names();

struct Check {
  std::string name;
  bool pass = true;
  std::string detail;     ///< why it failed, why it was skipped, or an advisory note
  std::string subject;    ///< what was checked inside the document ("envelopes[2]"); empty: all
  bool advisory = false;  ///< informational only: never fails the report
};

/// What the document was taken for.
enum class DocumentKind { kEnvelope, kFlags, kWorkflow };
std::string_view to_string(DocumentKind k);

struct Report {
  DocumentKind kind = DocumentKind::kEnvelope;
  bool ok = true;
  std::vector<Check> checks;
};

/// Runs the envelope checks. `envelope_schema_valid` failing stops the run (as in the
/// reference). With a tier, only that tier's checks are reported and decide `ok`; without one,
/// every check that ran does.
Report run_envelope_conformance(const json::value& envelope,
                                std::optional<Tier> tier = std::nullopt);

/// The flag checks: flag_conflict_rejected, json_protocol_default, config_override_respected.
Report run_flag_conformance(const json::value& flags);

/// A workflow document ({ledger, envelopes: [{envelope}, ...]}): every envelope's checks
/// (subject "envelopes[i]"), then ledger_schema_valid, context_version_sequence (no step goes
/// back or skips a version, a failed step does not advance it), ledger_version_sync (the last
/// envelope's contextVersion is the ledger's version) and ledger_entries_monotonic.
Report run_workflow_conformance(const json::value& workflow,
                                std::optional<Tier> tier = std::nullopt);

/// Flags when the document is an object with jsonFlag or humanFlag and no `_meta`; a workflow when
/// it has an `envelopes` array; an envelope otherwise.
DocumentKind classify(const json::value& document);

/// classify, then the matching runner.
Report check_document(const json::value& document, std::optional<Tier> tier = std::nullopt);

/// {"kind", "ok", "checks": [{name, pass, detail?, subject?, advisory?}]}
json::object to_json(const Report& report);

/// One line a check ("  PASS  envelope_schema_valid"), details indented below.
std::string to_text(const Report& report);

}  // namespace hearth::lafs
