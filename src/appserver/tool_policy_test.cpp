#include "appserver/tool_policy.hpp"

#include <gtest/gtest.h>

namespace hearth::appserver {
namespace {

ToolPolicy policy(std::string_view operation) {
  const auto op = json::parse(operation).as_object();
  return policy_for(&op);
}

TEST(ToolPolicyTest, AToolNoOperationDeclaresWaitsAndLeavesEvidence) {
  const auto p = policy_for(nullptr);
  EXPECT_TRUE(p.approval);
  EXPECT_TRUE(p.evidence);
  EXPECT_FALSE(p.dry_run);
  EXPECT_EQ(p.side_effect, "unknown");
  EXPECT_TRUE(p.operation.empty());
  EXPECT_NE(p.why.find("unknown"), std::string::npos) << p.why;
}

TEST(ToolPolicyTest, ApprovalRequiredWaits) {
  const auto p = policy(R"({"key":"publish_shopping_list","type":"publish",
      "sideEffect":"external_publish","approvalRequired":true,"evidenceRequired":true})");
  EXPECT_TRUE(p.approval);
  EXPECT_TRUE(p.evidence);
  EXPECT_EQ(p.operation, "publish_shopping_list");
  EXPECT_EQ(p.side_effect, "external_publish");
  EXPECT_NE(p.why.find("requires approval"), std::string::npos) << p.why;
}

TEST(ToolPolicyTest, AutoExecuteRunsWithoutWaitingButWritesLeaveEvidence) {
  const auto p = policy(R"({"key":"add_pantry_item","type":"storage-write",
      "sideEffect":"app_storage_write","autoExecute":true})");
  EXPECT_FALSE(p.approval);
  EXPECT_TRUE(p.evidence);  // any side effect but none records evidence
  EXPECT_NE(p.why.find("autoExecute"), std::string::npos) << p.why;
}

TEST(ToolPolicyTest, PublishDeleteAndBulkUpdateNeverAutoExecute) {
  for (const auto* effect : {"external_publish", "external_delete", "bulk_update"}) {
    const auto p = policy(
        std::string(R"({"key":"k","type":"t","autoExecute":true,"sideEffect":")") + effect + "\"}");
    EXPECT_TRUE(p.approval) << effect;
    EXPECT_NE(p.why.find("not honoured"), std::string::npos) << p.why;
    // Not even when the operation says it needs no approval.
    const auto q =
        policy(std::string(R"({"key":"k","type":"t","approvalRequired":false,"sideEffect":")") +
               effect + "\"}");
    EXPECT_TRUE(q.approval) << effect;
  }
  // A side effect the format does not define is treated the same way.
  EXPECT_TRUE(policy(R"({"key":"k","type":"t","sideEffect":"launch_rockets","autoExecute":true})")
                  .approval);
}

TEST(ToolPolicyTest, ReadsRunAndOtherWritesWaitUnlessTheyMayRunOnTheirOwn) {
  const auto read = policy(R"({"key":"list_pantry","type":"read","sideEffect":"none"})");
  EXPECT_FALSE(read.approval);
  EXPECT_FALSE(read.evidence);
  const auto read_with_evidence =
      policy(R"({"key":"k","type":"read","sideEffect":"none","evidenceRequired":true})");
  EXPECT_TRUE(read_with_evidence.evidence);
  // A write that says neither autoExecute nor approvalRequired: the safe default.
  EXPECT_TRUE(policy(R"({"key":"k","type":"t","sideEffect":"app_storage_write"})").approval);
  // One that says it needs no approval.
  EXPECT_FALSE(
      policy(R"({"key":"k","type":"t","sideEffect":"draftbox_write","approvalRequired":false})")
          .approval);
  // approvalRequired wins over autoExecute.
  EXPECT_TRUE(policy(R"({"key":"k","type":"t","sideEffect":"app_storage_write",
      "autoExecute":true,"approvalRequired":true})")
                  .approval);
  // The snake_case aliases the reference CLI accepts.
  EXPECT_FALSE(
      policy(R"({"key":"k","type":"t","side_effect":"artifact_create","auto_execute":true})")
          .approval);
}

TEST(ToolPolicyTest, DryRunRequired) {
  const auto p = policy(R"({"key":"k","type":"t","sideEffect":"bulk_update","dryRunRequired":true,
      "approvalRequired":true})");
  EXPECT_TRUE(p.dry_run);
  EXPECT_TRUE(p.approval);
  EXPECT_TRUE(takes_dry_run(json::parse(R"({"type":"object","properties":{"dryRun":{}}})")));
  EXPECT_FALSE(takes_dry_run(json::parse(R"({"type":"object","properties":{"items":{}}})")));
  EXPECT_FALSE(takes_dry_run(json::parse(R"({"type":"object"})")));
}

TEST(ToolPolicyTest, ABoundToolNoOperationDeclaresWaitsWhenItWrites) {
  const auto writes = policy_of_binding(true);
  EXPECT_TRUE(writes.approval);
  EXPECT_TRUE(writes.evidence);
  const auto reads = policy_of_binding(false);
  EXPECT_FALSE(reads.approval);
  EXPECT_FALSE(reads.evidence);
  EXPECT_EQ(reads.side_effect, "none");
}

TEST(ToolPolicyTest, OperationsAreFoundByTheToolsName) {
  const auto ops = json::parse(R"([{"key":"a","sideEffect":"none"},"x",{"key":"b"}])").as_array();
  ASSERT_NE(find_operation(ops, "b"), nullptr);
  EXPECT_EQ(find_operation(ops, "c"), nullptr);
}

TEST(ToolPolicyTest, BackendToolsKeepTheirNamesUnlessTheyCollide) {
  const std::set<std::string> reserved{"complete", "ask_person", "lime_storage__get"};
  const auto names = backend_tool_names({{"backend", "add_pantry_item"},
                                         {"backend", "complete"},
                                         {"backend", "list"},
                                         {"other", "list"},
                                         {"other", "has space.and:dots"},
                                         {"backend", std::string(70, 'x')}},
                                        reserved);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "add_pantry_item", "backend__complete", "backend__list", "other__list",
                       "other__has_space_and_dots", "backend__" + std::string(55, 'x')}));
  // A prefixed name that is taken is numbered.
  const auto again = backend_tool_names({{"a", "x"}, {"b", "x"}, {"a", "a__x"}}, {});
  EXPECT_EQ(again, (std::vector<std::string>{"a__x_2", "b__x", "a__x"}));
}

TEST(ToolPolicyTest, ToolResultsAsTheModelReadsThem) {
  auto structured = read_tool_result(json::parse(
      R"({"content":[{"type":"text","text":"3 items"}],"structuredContent":{"items":3}})"));
  ASSERT_TRUE(structured.ok());
  EXPECT_EQ(structured.value(), json::parse(R"({"items":3})"));
  auto text = read_tool_result(
      json::parse(R"({"content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]})"));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "one\ntwo");
  auto failed = read_tool_result(
      json::parse(R"({"content":[{"type":"text","text":"no such list"}],"isError":true})"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "no such list");
  EXPECT_EQ(read_tool_result(json::parse("7")).value(), 7);
}

TEST(ToolPolicyTest, EvidenceKeepsSmallValuesAndTheHashOfLargeOnes) {
  EXPECT_EQ(bounded(json::parse(R"({"a":1})")), json::parse(R"({"a":1})"));
  const auto big = bounded(json::value(std::string(100, 'x')), 50);
  EXPECT_EQ(big.at("elided"), true);
  EXPECT_EQ(big.at("bytes"), 102);
  EXPECT_TRUE(big.at("sha256").as_string().starts_with("sha256:"));
}

}  // namespace
}  // namespace hearth::appserver
