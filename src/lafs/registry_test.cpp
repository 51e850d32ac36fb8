#include "lafs/registry.hpp"

#include <gtest/gtest.h>

#include <set>

#include "lafs/testing.hpp"

namespace hearth::lafs {
namespace {

// The built-in table is a transcription: compare it with the reference file, member by member.
TEST(LafsRegistry, MatchesTheReferenceRegistryFile) {
  const json::value file =
      testing::read_json(testing::conformance_dir() / "schemas/v1/error-registry.json");
  const auto& codes = file.at("codes").as_array();
  ASSERT_EQ(codes.size(), 13u);
  ASSERT_EQ(registered_codes().size(), 13u);
  EXPECT_EQ(file.at("version").as_string(), kRegistryVersion);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const auto& ref = codes[i].as_object();
    const RegisteredCode& ours = registered_codes()[i];
    SCOPED_TRACE(std::string(ours.code));
    EXPECT_EQ(ref.at("code").as_string(), ours.code);
    EXPECT_EQ(ref.at("category").as_string(), to_string(ours.category));
    EXPECT_EQ(ref.at("description").as_string(), ours.description);
    EXPECT_EQ(ref.at("retryable").as_bool(), ours.retryable);
    EXPECT_EQ(ref.at("httpStatus").as_int64(), ours.http_status);
    EXPECT_EQ(ref.at("grpcStatus").as_string(), ours.grpc_status);
    EXPECT_EQ(ref.at("cliExit").as_int64(), ours.cli_exit);
    EXPECT_EQ(ref.at("agentAction").as_string(), to_string(ours.agent_action));
    EXPECT_EQ(ref.at("typeUri").as_string(), ours.type_uri);
    EXPECT_EQ(ref.at("docUrl").as_string(), ours.doc_url);
  }
}

TEST(LafsRegistry, CodesAreUniqueAndWellNamed) {
  std::set<std::string_view> seen;
  for (const auto& c : registered_codes()) {
    EXPECT_TRUE(seen.insert(c.code).second) << c.code;
    EXPECT_TRUE(valid_code_name(c.code)) << c.code;
    EXPECT_EQ(find_code(c.code), &c);
  }
  EXPECT_EQ(find_code("E_FAKE_UNREGISTERED"), nullptr);
}

TEST(LafsRegistry, BudgetExceededFollowsTheRegistryNotTheSpecText) {
  const RegisteredCode* c = find_code(kMviBudgetExceeded);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->retryable);
  EXPECT_EQ(c->agent_action, AgentAction::kRetryModified);
  EXPECT_EQ(c->http_status, 413);
}

TEST(LafsRegistry, CodeNamingRule) {
  EXPECT_TRUE(valid_code_name("E_RATE_LIMITED"));
  EXPECT_TRUE(valid_code_name("E_A1_B"));
  EXPECT_TRUE(valid_code_name("E_X_Y_"));
  EXPECT_FALSE(valid_code_name("E__X"));
  EXPECT_FALSE(valid_code_name("E_X"));
  EXPECT_FALSE(valid_code_name("E_X_"));
  EXPECT_FALSE(valid_code_name("e_x_y"));
  EXPECT_FALSE(valid_code_name("E_x_Y"));
  EXPECT_FALSE(valid_code_name("X_A_B"));
  EXPECT_FALSE(valid_code_name("E_A_B-C"));
}

TEST(LafsRegistry, TransportStatus) {
  EXPECT_EQ(transport_status(kNotFoundResource, Transport::kHttp), "404");
  EXPECT_EQ(transport_status(kNotFoundResource, Transport::kGrpc), "NOT_FOUND");
  EXPECT_EQ(transport_status(kNotFoundResource, Transport::kCli), "4");
  EXPECT_EQ(transport_status(kNotFoundResource, Transport::kSdk), std::nullopt);
  EXPECT_EQ(transport_status("E_NOPE_NOPE", Transport::kHttp), std::nullopt);
}

TEST(LafsRegistry, VocabulariesRoundTrip) {
  for (auto s : {"VALIDATION", "AUTH", "PERMISSION", "NOT_FOUND", "CONFLICT", "RATE_LIMIT",
                 "TRANSIENT", "INTERNAL", "CONTRACT", "MIGRATION"}) {
    ASSERT_TRUE(parse_category(s)) << s;
    EXPECT_EQ(to_string(*parse_category(s)), s);
  }
  for (auto s :
       {"retry", "retry_modified", "wait", "escalate", "stop", "refresh_context", "authenticate"}) {
    ASSERT_TRUE(parse_agent_action(s)) << s;
    EXPECT_EQ(to_string(*parse_agent_action(s)), s);
  }
  EXPECT_FALSE(parse_agent_action("abort"));
  EXPECT_FALSE(parse_mvi("verbose"));
  EXPECT_EQ(parse_transport("grpc"), Transport::kGrpc);
}

}  // namespace
}  // namespace hearth::lafs
