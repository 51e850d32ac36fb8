#include "egress/allowlist.hpp"

#include <gtest/gtest.h>

#include "egress/host.hpp"

namespace hearth::egress {
namespace {

AllowList parse_ok(const std::vector<std::string>& entries) {
  auto list = AllowList::parse(entries);
  EXPECT_TRUE(list.ok()) << (list.ok() ? "" : list.error().message);
  return list.ok() ? std::move(list).value() : AllowList{};
}

std::string parse_error(const std::vector<std::string>& entries) {
  auto list = AllowList::parse(entries);
  if (list.ok()) return "(no error)";
  EXPECT_EQ(list.error().code, ErrorCode::kInvalidParams);
  return list.error().message;
}

TEST(HostTest, CanonicalForms) {
  auto name = parse_host("API.Example.COM.");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->kind, Host::Kind::kName);
  EXPECT_EQ(name->text, "api.example.com");

  auto v4 = parse_host("203.0.113.7");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->kind, Host::Kind::kIPv4);
  EXPECT_EQ(v4->text, "203.0.113.7");

  auto v6 = parse_host("[2001:DB8:0:0::0001]");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->kind, Host::Kind::kIPv6);
  EXPECT_EQ(v6->text, "2001:db8::1");
  EXPECT_EQ(v6->authority_text(), "[2001:db8::1]");
  auto bare_v6 = parse_host("2001:db8::1");
  ASSERT_TRUE(bare_v6.ok());
  EXPECT_EQ(*bare_v6, *v6);
}

TEST(HostTest, RejectsWhatAResolverWouldReadDifferently) {
  for (const char* bad : {"", ".", "a..b", ".a", "a b", "a/b", "exa%mple.com", "127.1",
                          "2130706433", "0x7f.1", "0x7f000001", "01.2.3.4", "1.2.3.4.5", "[::1",
                          "[fe80::1%eth0]", "[1.2.3.4]", "caf\xc3\xa9.example"}) {
    EXPECT_FALSE(parse_host(bad).ok()) << bad;
  }
  EXPECT_FALSE(parse_host(std::string(64, 'a') + ".com").ok());
  EXPECT_TRUE(parse_host(std::string(63, 'a') + ".com").ok());
  EXPECT_TRUE(parse_host("xn--caf-dma.example").ok());
  EXPECT_TRUE(parse_host("under_score.example").ok());
}

TEST(HostTest, Authorities) {
  auto a = parse_authority("Example.com:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host.text, "example.com");
  EXPECT_EQ(a->port, 8080);
  auto b = parse_authority("[::1]:443");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host.text, "::1");
  EXPECT_EQ(b->port, 443);
  auto c = parse_authority("example.com");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->port.has_value());
  for (const char* bad : {"example.com:", "example.com:0", "example.com:65536", "example.com:+80",
                          "example.com:80a", "::1:443", "[::1]443", "[::1]:", ":80"}) {
    EXPECT_FALSE(parse_authority(bad).ok()) << bad;
  }
  EXPECT_TRUE(parse_authority("example.com:65535").ok());
}

TEST(HostTest, LocalAddressesAndLocalhostNames) {
  auto local = [](const char* text) {
    return is_local_address(boost::asio::ip::make_address(text));
  };
  for (const char* address : {"127.0.0.1", "127.8.9.10", "0.0.0.0", "0.1.2.3", "169.254.169.254",
                              "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "ff02::1",
                              "::ffff:127.0.0.1", "::ffff:169.254.1.1"}) {
    EXPECT_TRUE(local(address)) << address;
  }
  for (const char* address :
       {"203.0.113.7", "10.0.0.1", "192.168.1.1", "2001:db8::1", "::ffff:203.0.113.7"}) {
    EXPECT_FALSE(local(address)) << address;
  }
  EXPECT_TRUE(is_localhost_name(parse_host("localhost").value()));
  EXPECT_TRUE(is_localhost_name(parse_host("LocalHost.").value()));
  EXPECT_TRUE(is_localhost_name(parse_host("api.localhost").value()));
  EXPECT_FALSE(is_localhost_name(parse_host("localhost.example.com").value()));
  EXPECT_FALSE(is_localhost_name(parse_host("127.0.0.1").value()));
}

TEST(HostTest, PrivateAddresses) {
  auto private_ = [](const char* text) {
    return is_private_address(boost::asio::ip::make_address(text));
  };
  for (const char* address : {"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254",
                              "192.168.1.1", "100.64.0.1", "100.127.255.255", "fc00::1",
                              "fd12:3456::1", "fec0::1", "::ffff:10.1.2.3", "::ffff:192.168.0.9"}) {
    EXPECT_TRUE(private_(address)) << address;
  }
  for (const char* address :
       {"203.0.113.7", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "11.0.0.1",
        "192.169.0.1", "2001:db8::1", "fe80::1", "::ffff:203.0.113.7"}) {
    EXPECT_FALSE(private_(address)) << address;
  }
}

TEST(AllowListTest, ExactNameAnyPort) {
  auto list = parse_ok({"api.example.com"});
  EXPECT_TRUE(list.allows("api.example.com", 443));
  EXPECT_TRUE(list.allows("api.example.com", 80));
  EXPECT_FALSE(list.allows("example.com", 443));
  EXPECT_FALSE(list.allows("x.api.example.com", 443));
  EXPECT_FALSE(list.allows("api.example.com.evil.net", 443));
  EXPECT_FALSE(list.allows("evilapi.example.com", 443));
}

TEST(AllowListTest, PortRestriction) {
  auto list = parse_ok({"api.example.com:443", "*.cdn.example.net:8443"});
  EXPECT_TRUE(list.allows("api.example.com", 443));
  EXPECT_FALSE(list.allows("api.example.com", 80));
  EXPECT_TRUE(list.allows("a.cdn.example.net", 8443));
  EXPECT_FALSE(list.allows("a.cdn.example.net", 443));
}

TEST(AllowListTest, WildcardMatchesSubdomainsNotApex) {
  auto list = parse_ok({"*.example.com"});
  EXPECT_TRUE(list.allows("a.example.com", 443));
  EXPECT_TRUE(list.allows("a.b.example.com", 443));
  EXPECT_FALSE(list.allows("example.com", 443));
  EXPECT_FALSE(list.allows("badexample.com", 443));
  EXPECT_FALSE(list.allows(".example.com", 443));
  EXPECT_FALSE(list.allows("example.com.evil.net", 443));
}

TEST(AllowListTest, CaseAndTrailingDotIgnored) {
  auto list = parse_ok({"API.Example.COM.", "*.Sub.Example.ORG"});
  EXPECT_TRUE(list.allows("api.example.com", 1));
  EXPECT_TRUE(list.allows("API.EXAMPLE.COM.", 1));
  EXPECT_TRUE(list.allows("x.SUB.example.org.", 1));
  EXPECT_FALSE(list.allows("api.example.com..", 1));
}

TEST(AllowListTest, AddressEntries) {
  auto list = parse_ok({"203.0.113.7", "[2001:db8::1]:443", "[::1]"});
  EXPECT_TRUE(list.allows("203.0.113.7", 22));
  EXPECT_FALSE(list.allows("203.0.113.8", 22));
  EXPECT_TRUE(list.allows("[2001:db8::1]", 443));
  EXPECT_TRUE(list.allows("2001:DB8:0::1", 443));  // canonical comparison, brackets optional
  EXPECT_FALSE(list.allows("[2001:db8::1]", 80));
  EXPECT_TRUE(list.allows("::1", 8080));
  // An address never matches through another spelling family.
  EXPECT_FALSE(list.allows("[::ffff:203.0.113.7]", 22));
  EXPECT_FALSE(list.allows("0xcb.0.113.7", 22));
}

TEST(AllowListTest, NamesAndAddressesDoNotCrossMatch) {
  auto list = parse_ok({"localhost", "*.example.com"});
  EXPECT_FALSE(list.allows("127.0.0.1", 80));
  EXPECT_FALSE(list.allows("[::1]", 80));
  auto by_address = parse_ok({"127.0.0.1"});
  EXPECT_FALSE(by_address.allows("localhost", 80));
}

TEST(AllowListTest, EmptyAllowsNothing) {
  EXPECT_FALSE(AllowList{}.allows("example.com", 443));
  auto list = parse_ok({});
  EXPECT_TRUE(list.empty());
  EXPECT_FALSE(list.allows("example.com", 443));
}

TEST(AllowListTest, InvalidHostsAreNotAllowed) {
  auto list = parse_ok({"example.com"});
  EXPECT_FALSE(list.allows("", 443));
  EXPECT_FALSE(list.allows("example.com:443", 443));
  EXPECT_FALSE(list.allows("exa mple.com", 443));
}

TEST(AllowListTest, MalformedEntriesAreNamed) {
  auto message = parse_error({"ok.example.com", "bad host"});
  EXPECT_NE(message.find("entry 1 'bad host'"), std::string::npos) << message;

  auto list = AllowList::parse({"a.example.com", "*"});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().data.as_object().at("index").as_uint64(), 1u);
  EXPECT_EQ(list.error().data.as_object().at("entry").as_string(), "*");

  for (const char* bad : {"*", "*.com", "*.*.example.com", "a.*.example.com", "ex*ample.com",
                          "*.127.0.0.1", "*.[::1]", "::1", "[::1", "example.com:0",
                          "example.com:99999", "example.com:", "http://example.com", "example.com/",
                          "", " example.com", "1.2.3", "[fe80::1%lo]"}) {
    EXPECT_NE(parse_error({bad}), "(no error)") << bad;
  }
}

}  // namespace
}  // namespace hearth::egress
