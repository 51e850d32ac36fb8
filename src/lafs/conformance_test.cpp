#include "lafs/conformance.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "lafs/testing.hpp"

namespace hearth::lafs {
namespace {

using testing::parse;

std::set<std::string> failing(const Report& r) {
  std::set<std::string> out;
  for (const auto& c : r.checks) {
    if (!c.pass) out.insert(c.subject.empty() ? c.name : c.subject + ":" + c.name);
  }
  return out;
}

const Check* find(const Report& r, std::string_view name) {
  for (const auto& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// What the reference runner concludes for each fixture (conformance/README.md, and its
// runEnvelopeConformance without a tier): the document kind, whether the report is ok, and the
// checks that fail. Every file under fixtures/ must be listed here.
struct Expected {
  DocumentKind kind;
  bool ok;
  std::set<std::string> failing;
};

const std::map<std::string, Expected>& expectations() {
  using K = DocumentKind;
  static const std::map<std::string, Expected> kExpected = {
      {"valid-success-envelope.json", {K::kEnvelope, true, {}}},
      {"valid-success-no-error.json", {K::kEnvelope, true, {}}},
      {"valid-success-no-page.json", {K::kEnvelope, true, {}}},
      {"valid-error-envelope.json", {K::kEnvelope, true, {}}},
      {"valid-error-actionable.json", {K::kEnvelope, true, {}}},
      {"valid-error-escalation.json", {K::kEnvelope, true, {}}},
      {"valid-cursor-pagination.json", {K::kEnvelope, true, {}}},
      {"valid-offset-pagination.json", {K::kEnvelope, true, {}}},
      {"valid-none-pagination.json", {K::kEnvelope, true, {}}},
      {"valid-context-ledger.json", {K::kEnvelope, true, {}}},
      {"field-extraction-success.json", {K::kEnvelope, true, {}}},
      {"field-extraction-array.json", {K::kEnvelope, true, {}}},
      // A minimal projection, not an envelope: the full schema rejects it.
      {"valid-error-minimal.json", {K::kEnvelope, false, {"envelope_schema_valid"}}},
      {"invalid-conflict-envelope.json", {K::kEnvelope, false, {"envelope_schema_valid"}}},
      {"invalid-cursor-missing-fields.json", {K::kEnvelope, false, {"envelope_schema_valid"}}},
      {"invalid-unregistered-error.json",
       {K::kEnvelope, false, {"error_code_registered", "transport_mapping_consistent"}}},
      // envelope_invariants passes (LAFS 1.8.0); its explicit "page": null breaks
      // strict_mode_behavior.
      {"invalid-error-with-result.json", {K::kEnvelope, false, {"strict_mode_behavior"}}},
      {"mixed-pagination-envelope.json", {K::kEnvelope, false, {"pagination_mode_consistent"}}},
      {"invalid-context-stale.json", {K::kEnvelope, false, {"context_preservation_valid"}}},
      // context_mutation_failure passes; `_extensions.context` has no version for
      // context_preservation_valid, which therefore fails (as in the reference).
      {"invalid-context-missing.json", {K::kEnvelope, false, {"context_preservation_valid"}}},
      {"flags-valid.json", {K::kFlags, true, {}}},
      {"flags-conflict.json", {K::kFlags, true, {}}},
      {"agent-workflows/simple-query.json", {K::kWorkflow, true, {}}},
      {"agent-workflows/chained-operations.json", {K::kWorkflow, true, {}}},
      {"agent-workflows/error-recovery.json", {K::kWorkflow, true, {}}},
  };
  return kExpected;
}

TEST(LafsConformance, EveryFixtureGivesTheReferenceConclusion) {
  const auto dir = testing::conformance_dir() / "fixtures";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::size_t total = 0, agreeing = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++total;
    const std::string name = std::filesystem::relative(entry.path(), dir).generic_string();
    SCOPED_TRACE(name);
    auto it = expectations().find(name);
    ASSERT_NE(it, expectations().end()) << "a fixture without an expectation: " << name;
    const Report report = check_document(testing::read_json(entry.path()));
    const Expected& want = it->second;
    EXPECT_EQ(report.kind, want.kind);
    EXPECT_EQ(report.ok, want.ok) << to_text(report);
    EXPECT_EQ(failing(report), want.failing) << to_text(report);
    if (report.kind == want.kind && report.ok == want.ok && failing(report) == want.failing) {
      ++agreeing;
    }
  }
  EXPECT_EQ(total, expectations().size());
  std::cout << "LAFS fixtures giving the reference runner's conclusion: " << agreeing << "/"
            << total << "\n";
  EXPECT_EQ(agreeing, 25u);
}

TEST(LafsConformance, FixtureDetails) {
  auto cursor = run_envelope_conformance(
      testing::read_json(testing::fixture("invalid-cursor-missing-fields.json")));
  ASSERT_EQ(cursor.checks.size(), 1u);  // a schema failure stops the run
  EXPECT_NE(cursor.checks[0].detail.find("nextCursor"), std::string::npos);

  auto with_result = run_envelope_conformance(
      testing::read_json(testing::fixture("invalid-error-with-result.json")));
  ASSERT_NE(find(with_result, "envelope_invariants"), nullptr);
  EXPECT_TRUE(find(with_result, "envelope_invariants")->pass);

  auto missing = run_envelope_conformance(
      testing::read_json(testing::fixture("invalid-context-missing.json")));
  EXPECT_TRUE(find(missing, "context_mutation_failure")->pass);
  EXPECT_NE(find(missing, "context_mutation_failure")->detail.find("skipped"), 0u);

  auto stale =
      run_envelope_conformance(testing::read_json(testing::fixture("invalid-context-stale.json")));
  EXPECT_NE(find(stale, "context_preservation_valid")->detail.find("non-monotonic"),
            std::string::npos);

  auto unregistered = run_envelope_conformance(
      testing::read_json(testing::fixture("invalid-unregistered-error.json")));
  EXPECT_NE(find(unregistered, "error_code_registered")->detail.find("E_FAKE_UNREGISTERED"),
            std::string::npos);

  auto conflict = run_flag_conformance(testing::read_json(testing::fixture("flags-conflict.json")));
  EXPECT_NE(find(conflict, "flag_conflict_rejected")->detail.find("E_FORMAT_CONFLICT"),
            std::string::npos);
}

TEST(LafsConformance, Tiers) {
  EXPECT_EQ(checks_for_tier(Tier::kCore).size(), 3u);
  EXPECT_EQ(checks_for_tier(Tier::kStandard).size(), 11u);
  EXPECT_EQ(checks_for_tier(Tier::kComplete).size(), 13u);
  // The built-in tiers are conformance-profiles.json's, and each tier contains the one below.
  const auto profiles =
      testing::read_json(testing::conformance_dir() / "schemas/v1/conformance-profiles.json");
  for (auto tier : {Tier::kCore, Tier::kStandard, Tier::kComplete}) {
    const auto& ref = profiles.at("tiers").at(to_string(tier)).as_array();
    auto ours = checks_for_tier(tier);
    ASSERT_EQ(ref.size(), ours.size());
    for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(ref[i].as_string(), ours[i]);
  }
  std::set<std::string_view> known(envelope_check_names().begin(), envelope_check_names().end());
  for (auto name : checks_for_tier(Tier::kComplete)) EXPECT_TRUE(known.count(name)) << name;

  // The context fixtures pass the standard tier (their failing check is complete-tier only).
  auto stale = testing::read_json(testing::fixture("invalid-context-stale.json"));
  EXPECT_TRUE(run_envelope_conformance(stale, Tier::kStandard).ok);
  EXPECT_FALSE(run_envelope_conformance(stale, Tier::kComplete).ok);
  auto unregistered = testing::read_json(testing::fixture("invalid-unregistered-error.json"));
  EXPECT_FALSE(run_envelope_conformance(unregistered, Tier::kCore).ok);
  EXPECT_EQ(run_envelope_conformance(unregistered, Tier::kCore).checks.size(), 3u);
}

TEST(LafsConformance, StrictModeEnforcedAndLenient) {
  auto env = testing::sample_envelope();
  env.as_object()["_meta"].as_object()["strict"] = false;
  env.as_object()["vendorNote"] = "allowed when lenient";
  auto report = run_envelope_conformance(env);
  EXPECT_TRUE(report.ok) << to_text(report);
  EXPECT_EQ(find(report, "strict_mode_behavior"), nullptr);  // only run in strict mode
}

TEST(LafsConformance, AdvisoryAgentActionMismatch) {
  auto env = testing::read_json(testing::fixture("valid-error-actionable.json"));
  env.as_object()["error"].as_object()["agentAction"] = "retry";
  auto report = run_envelope_conformance(env);
  EXPECT_TRUE(report.ok);
  const Check* c = find(report, "error_registry_agent_action");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->advisory);
  EXPECT_NE(c->detail.find("differs"), std::string::npos);
  env.as_object()["error"].as_object()["agentAction"] = "abort";  // not in the enum: a schema error
  EXPECT_FALSE(run_envelope_conformance(env).ok);
}

TEST(LafsConformance, WorkflowChecksCatchBrokenSequences) {
  auto doc = testing::read_json(testing::fixture("agent-workflows/simple-query.json"));
  EXPECT_TRUE(run_workflow_conformance(doc).ok);
  auto skip = doc;
  skip.at("envelopes")
      .as_array()[2]
      .as_object()["envelope"]
      .as_object()["_meta"]
      .as_object()["contextVersion"] = 5;
  EXPECT_EQ(failing(run_workflow_conformance(skip)),
            (std::set<std::string>{"context_version_sequence", "ledger_version_sync"}));
  auto back = doc;
  back.at("envelopes")
      .as_array()[1]
      .as_object()["envelope"]
      .as_object()["_meta"]
      .as_object()["contextVersion"] = 0;
  EXPECT_TRUE(failing(run_workflow_conformance(back)).count("context_version_sequence"));
  auto bad_ledger = doc;
  bad_ledger.as_object()["ledger"].as_object().erase("checksum");
  EXPECT_EQ(failing(run_workflow_conformance(bad_ledger)),
            (std::set<std::string>{"ledger_schema_valid"}));
  auto bad_envelope = doc;
  bad_envelope.at("envelopes")
      .as_array()[0]
      .as_object()["envelope"]
      .as_object()["_meta"]
      .as_object()["mvi"] = "x";
  EXPECT_EQ(failing(run_workflow_conformance(bad_envelope)),
            (std::set<std::string>{"envelopes[0]:envelope_schema_valid"}));
  // A failed step that advances the version.
  auto recovery = testing::read_json(testing::fixture("agent-workflows/error-recovery.json"));
  recovery.at("envelopes")
      .as_array()[0]
      .as_object()["envelope"]
      .as_object()["_meta"]
      .as_object()["contextVersion"] = 0;
  recovery.at("envelopes").as_array()[1].as_object()["envelope"].as_object()["success"] = false;
  EXPECT_FALSE(run_workflow_conformance(recovery).ok);
  EXPECT_FALSE(run_workflow_conformance(parse(R"({"envelopes":[]})")).ok);
}

TEST(LafsConformance, ReportRendering) {
  auto report = run_envelope_conformance(
      testing::read_json(testing::fixture("mixed-pagination-envelope.json")));
  auto j = to_json(report);
  EXPECT_EQ(j.at("kind"), "envelope");
  EXPECT_EQ(j.at("ok"), false);
  auto text = to_text(report);
  EXPECT_NE(text.find("FAIL  pagination_mode_consistent"), std::string::npos);
  EXPECT_NE(text.find("cursor mode should not include offset field"), std::string::npos);
  EXPECT_NE(text.find("PASS  envelope_schema_valid"), std::string::npos);
}

TEST(LafsConformance, Classify) {
  EXPECT_EQ(classify(parse(R"({"jsonFlag":true})")), DocumentKind::kFlags);
  EXPECT_EQ(classify(parse(R"({"envelopes":[]})")), DocumentKind::kWorkflow);
  EXPECT_EQ(classify(parse(R"([1])")), DocumentKind::kEnvelope);
  EXPECT_FALSE(check_document(parse("42")).ok);
}

}  // namespace
}  // namespace hearth::lafs
