#include "agent/servers.hpp"

#include <gtest/gtest.h>

namespace hearth::agent {
namespace {

ModelServers configured() {
  ModelServers servers;
  EXPECT_TRUE(servers
                  .add({.name = "default",
                        .base_url = "http://127.0.0.1:11434/v1/",
                        .model = "qwen2.5:7b",
                        .key_ref = "127.0.0.1:11434::OLLAMA_KEY"})
                  .ok());
  EXPECT_TRUE(servers
                  .add({.name = "hosted",
                        .base_url = "https://api.example.com/v1",
                        .model = "big",
                        .key_ref = "global::HOSTED_KEY"})
                  .ok());
  return servers;
}

TEST(ModelServers, NoChoiceIsTheDefaultServerWithItsBoundKey) {
  auto r = configured().resolve({}, ModelConfig{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "default");
  EXPECT_EQ(r->config.base_url, "http://127.0.0.1:11434/v1");
  EXPECT_EQ(r->config.model, "qwen2.5:7b");
  EXPECT_EQ(r->key_ref, "127.0.0.1:11434::OLLAMA_KEY");
  EXPECT_TRUE(r->key_domain.empty());  // bound by the operator
  EXPECT_FALSE(r->config.public_only);
}

TEST(ModelServers, AServerIsChosenByNameOrByItsUrl) {
  auto servers = configured();
  auto by_name = servers.resolve({.server = "hosted"}, ModelConfig{});
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->key_ref, "global::HOSTED_KEY");
  auto by_url = servers.resolve({.base_url = "HTTPS://API.example.com:443/v1/"}, ModelConfig{});
  ASSERT_TRUE(by_url.ok()) << by_url.error().message;
  EXPECT_EQ(by_url->server, "hosted");
  EXPECT_EQ(by_url->key_ref, "global::HOSTED_KEY");
  EXPECT_TRUE(by_url->key_domain.empty());
  EXPECT_FALSE(servers.resolve({.server = "nope"}, ModelConfig{}).ok());
  EXPECT_FALSE(
      servers.resolve({.server = "hosted", .base_url = "https://other.example/v1"}, ModelConfig{})
          .ok());
}

TEST(ModelServers, ANewServerGetsNoConfiguredKeyAndMustBePublicHttps) {
  auto servers = configured();
  auto r = servers.resolve({.base_url = "https://attacker.example/v1", .model = "m"}, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->server.empty());
  EXPECT_TRUE(r->key_ref.empty());  // the daemon's key stays with its server
  EXPECT_TRUE(r->config.public_only);
  // Plain http (a server on this machine or a LAN) must be configured on the daemon.
  auto plain = servers.resolve({.base_url = "http://127.0.0.1:9/v1", .model = "m"}, {});
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code, ErrorCode::kInvalidParams);
  // A new server has no default model.
  EXPECT_FALSE(servers.resolve({.base_url = "https://attacker.example/v1"}, {}).ok());
}

TEST(ModelServers, AKeyTheRunNamesIsCheckedByTheVaultForTheServersDomain) {
  auto servers = configured();
  auto r = servers.resolve(
      {.base_url = "https://attacker.example:8443/v1", .model = "m", .key_ref = "a::B"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->key_ref, "a::B");
  EXPECT_EQ(r->key_domain, "attacker.example:8443");
  // Another key for a configured server is checked too; its own key is not.
  auto other = servers.resolve({.server = "hosted", .key_ref = "api.example.com::K"}, {});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->key_domain, "api.example.com");
  auto own = servers.resolve({.server = "hosted", .key_ref = "global::HOSTED_KEY"}, {});
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own->key_domain.empty());
  // "" asks for no key at all.
  auto none = servers.resolve({.server = "hosted", .key_ref = ""}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->key_ref.empty());
  EXPECT_FALSE(servers.resolve({.key_ref = "not-a-ref"}, {}).ok());
}

TEST(ModelServers, NothingConfiguredAsksForAServer) {
  ModelServers servers;
  auto r = servers.resolve({}, ModelConfig{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--model-url"), std::string::npos);
}

TEST(ModelServers, ConfigurationErrors) {
  ModelServers servers;
  EXPECT_FALSE(servers.add({.name = "a", .base_url = "ftp://x"}).ok());
  EXPECT_TRUE(servers.add({.name = "a", .base_url = "http://x:1"}).ok());
  EXPECT_FALSE(servers.add({.name = "a", .base_url = "http://y:1"}).ok());
  EXPECT_FALSE(servers.add({.name = "b", .base_url = "http://y:1", .key_ref = "KEY"}).ok());
  EXPECT_FALSE(servers.set_key("zzz", "a::b").ok());
  EXPECT_TRUE(servers.set_key("a", "a::b").ok());
  EXPECT_EQ(servers.find("a")->key_ref, "a::b");
}

TEST(ModelClientChecks, PublicOnlyRefusesThisMachineAndPrivateNetworks) {
  auto url = httpclient::parse_url("https://model.example/v1").value();
  for (const char* address : {"127.0.0.1", "10.1.2.3", "192.168.0.10", "169.254.169.254", "::1",
                              "fd00::5", "::ffff:172.16.0.1", "0.0.0.0"}) {
    auto refused = check_public(url, {"203.0.113.9", address});
    ASSERT_TRUE(refused.has_value()) << address;
    EXPECT_EQ(refused->code, ErrorCode::kPermissionDenied);
  }
  EXPECT_FALSE(check_public(url, {"203.0.113.9", "2001:db8::7"}).has_value());
}

}  // namespace
}  // namespace hearth::agent
