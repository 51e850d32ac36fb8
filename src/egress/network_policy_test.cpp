#include "egress/network_policy.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace hearth::egress {
namespace {

NetworkPolicy list(const std::vector<std::string>& entries) {
  auto policy = NetworkPolicy::parse(entries);
  EXPECT_TRUE(policy.ok()) << (policy.ok() ? "" : policy.error().message);
  return policy.ok() ? std::move(policy).value() : NetworkPolicy{};
}

TEST(NetworkPolicyTest, ParsesAHostListOnce) {
  auto policy = NetworkPolicy::parse({"api.example.com", "*.example.org:443"});
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->mode(), NetworkPolicy::Mode::kList);
  EXPECT_EQ(policy->list().size(), 2u);
  EXPECT_TRUE(policy->list().allows("a.example.org", 443));
  EXPECT_FALSE(policy->list().allows("a.example.org", 80));
  EXPECT_EQ(policy->list().entries(),
            (std::vector<std::string>{"api.example.com", "*.example.org:443"}));
}

TEST(NetworkPolicyTest, AMalformedEntryIsNamedWithItsIndex) {
  auto policy = NetworkPolicy::parse({"ok.example.com", "bad host"});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code, ErrorCode::kInvalidParams);
  EXPECT_NE(policy.error().message.find("entry 1 'bad host'"), std::string::npos)
      << policy.error().message;
}

TEST(NetworkPolicyTest, WritesBackWhatTheManifestSaid) {
  EXPECT_EQ(boost::json::serialize(NetworkPolicy().to_json()), "false");
  EXPECT_EQ(boost::json::serialize(NetworkPolicy(false).to_json()), "false");
  EXPECT_EQ(boost::json::serialize(NetworkPolicy(true).to_json()), "true");
  EXPECT_EQ(boost::json::serialize(list({}).to_json()), "[]");
  EXPECT_EQ(boost::json::serialize(list({"API.example.com", "[::1]:8080"}).to_json()),
            R"(["API.example.com","[::1]:8080"])");
}

TEST(NetworkPolicyTest, EqualWhenModeAndEntriesAre) {
  EXPECT_EQ(NetworkPolicy(), NetworkPolicy(false));
  EXPECT_NE(NetworkPolicy(true), NetworkPolicy(false));
  EXPECT_NE(NetworkPolicy(false), list({}));  // an empty list is still a list
  EXPECT_EQ(list({"a.example.com"}), list({"a.example.com"}));
  EXPECT_NE(list({"a.example.com"}), list({"b.example.com"}));
}

TEST(NetworkPolicyTest, CheckDecidesWhatMayBeReached) {
  auto refused = NetworkPolicy().check("mcp.example.com", 443, {"203.0.113.5"});
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(refused->message,
            "networkAccess does not allow mcp.example.com:443: the endpoint has no networkAccess "
            "permission");
  ASSERT_TRUE(refused->data.is_object());
  EXPECT_EQ(refused->data.as_object().at("host"), "mcp.example.com");
  EXPECT_EQ(refused->data.as_object().at("port"), 443);

  const auto listed = list({"mcp.example.com"});
  EXPECT_FALSE(listed.check("mcp.example.com", 443, {"203.0.113.5"}).has_value());
  EXPECT_FALSE(listed.check("MCP.example.com.", 443, {}).has_value());
  // A listed name that resolves to this host is not a way in.
  auto local = listed.check("mcp.example.com", 443, {"127.0.0.1"});
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->message,
            "mcp.example.com resolves to a local address (127.0.0.1); networkAccess must name the "
            "address itself to allow it");
  auto other = list({"other.example.com"}).check("mcp.example.com", 443, {"203.0.113.5"});
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->message, "networkAccess does not allow mcp.example.com:443");
  auto v6 = list({"other.example.com"}).check("2001:db8::1", 8443, {});
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->message, "networkAccess does not allow [2001:db8::1]:8443");
  EXPECT_TRUE(list({}).check("mcp.example.com", 443, {}).has_value());
  // `localhost` by name, and a listed address, are what was asked for.
  EXPECT_FALSE(list({"localhost"}).check("localhost", 443, {"127.0.0.1"}).has_value());
  EXPECT_FALSE(list({"127.0.0.1:443"}).check("127.0.0.1", 443, {"127.0.0.1"}).has_value());
  EXPECT_TRUE(list({"127.0.0.1:443"}).check("127.0.0.1", 80, {}).has_value());
  EXPECT_FALSE(NetworkPolicy(true).check("anything.example", 443, {"127.0.0.1"}).has_value());
}

}  // namespace
}  // namespace hearth::egress
