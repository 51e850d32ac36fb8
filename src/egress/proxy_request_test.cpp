#include "egress/proxy_request.hpp"

#include <gtest/gtest.h>

namespace hearth::egress {
namespace {

ProxyRequest accepted(std::string_view head) {
  auto parsed = parse_proxy_request(head);
  if (const auto* rejection = std::get_if<RequestRejection>(&parsed)) {
    ADD_FAILURE() << "rejected (" << rejection->status << "): " << rejection->reason << "\n"
                  << head;
    return {};
  }
  return std::get<ProxyRequest>(std::move(parsed));
}

RequestRejection rejected(std::string_view head) {
  auto parsed = parse_proxy_request(head);
  if (const auto* rejection = std::get_if<RequestRejection>(&parsed)) return *rejection;
  ADD_FAILURE() << "accepted: " << head;
  return {0, {}};
}

TEST(ProxyRequestTest, Connect) {
  auto request =
      accepted("CONNECT API.Example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
  EXPECT_EQ(request.kind, ProxyRequest::Kind::kConnect);
  EXPECT_EQ(request.host.text, "api.example.com");
  EXPECT_EQ(request.port, 443);
  EXPECT_TRUE(request.upstream_head.empty());

  auto v6 = accepted("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(v6.host.kind, Host::Kind::kIPv6);
  EXPECT_EQ(v6.host.text, "2001:db8::1");
  EXPECT_EQ(v6.port, 8443);
}

TEST(ProxyRequestTest, ConnectNeedsHostAndPort) {
  EXPECT_EQ(rejected("CONNECT api.example.com HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("CONNECT :443 HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("CONNECT api.example.com:0 HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("CONNECT http://api.example.com:443/ HTTP/1.1\r\n\r\n").status, 400);
}

TEST(ProxyRequestTest, ForwardRewritesToOriginForm) {
  auto request = accepted(
      "GET http://Example.com:8080/a/b?c=d#frag HTTP/1.1\r\n"
      "Host: other.example\r\n"
      "User-Agent: test\r\n"
      "Proxy-Authorization: Basic eDp5\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Keep-Alive: timeout=5\r\n"
      "Connection: keep-alive, X-Hop, Content-Length\r\n"
      "X-Hop: secret\r\n"
      "Upgrade: websocket\r\n"
      "Accept:  */*  \r\n"
      "\r\n");
  EXPECT_EQ(request.kind, ProxyRequest::Kind::kForward);
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.host.text, "example.com");
  EXPECT_EQ(request.port, 8080);
  EXPECT_EQ(request.upstream_head,
            "GET /a/b?c=d HTTP/1.1\r\n"
            "Host: example.com:8080\r\n"
            "User-Agent: test\r\n"
            "Accept: */*\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(ProxyRequestTest, ForwardDefaultsAndBodies) {
  auto bare = accepted("GET http://example.com HTTP/1.0\r\n\r\n");
  EXPECT_EQ(bare.port, 80);
  EXPECT_EQ(bare.upstream_head, "GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n");

  auto query = accepted("GET http://[::1]:80?x=1 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(query.upstream_head, "GET /?x=1 HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n");

  auto post = accepted(
      "POST http://example.com/submit HTTP/1.1\r\nContent-Length: 3\r\nConnection: "
      "content-length\r\n\r\n");
  EXPECT_EQ(post.upstream_head,
            "POST /submit HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\nConnection: "
            "close\r\n\r\n");

  auto chunked =
      accepted("PUT http://example.com/x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
  EXPECT_NE(chunked.upstream_head.find("Transfer-Encoding: gzip, chunked\r\n"), std::string::npos);
  EXPECT_EQ(accepted("PATCH HTTP://example.com/ HTTP/1.1\r\n\r\n").method, "PATCH");
}

TEST(ProxyRequestTest, NotAProxyRequest) {
  auto origin = rejected("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n");
  EXPECT_EQ(origin.status, 400);
  EXPECT_NE(origin.reason.find("origin-form"), std::string::npos);
  EXPECT_EQ(rejected("OPTIONS * HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET https://example.com/ HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET ftp://example.com/ HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET example.com/ HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET http://allowed.example@evil.example/ HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET http:///path HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(rejected("GET http://127.1/ HTTP/1.1\r\n\r\n").status, 400);
}

TEST(ProxyRequestTest, MalformedHeads) {
  for (const char* head : {
           "\r\n",
           "GET\r\n\r\n",
           "GET http://example.com/\r\n\r\n",
           "GET  http://example.com/ HTTP/1.1\r\n\r\n",
           "GET http://example.com/ HTTP/1.1 \r\n\r\n",
           "GET http://example.com/ HTTP/1.1 extra\r\n\r\n",
           "G(T http://example.com/ HTTP/1.1\r\n\r\n",
           "GET http://example.com/ http/1.1\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nNoColon\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nName : x\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\n: x\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\nA: b\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nA: b\rc\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nA: b\x01\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\n\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\n",
       }) {
    EXPECT_EQ(rejected(head).status, 400) << head;
  }
  static constexpr char kWithNul[] = "GET http://example.com/ HTTP/1.1\r\nA: \0\r\n\r\n";
  EXPECT_EQ(rejected(std::string_view(kWithNul, sizeof kWithNul - 1)).status, 400);
  EXPECT_EQ(rejected("GET http://example.com/ HTTP/2.0\r\n\r\n").status, 505);
}

TEST(ProxyRequestTest, AmbiguousFramingIsRefused) {
  const std::string prefix = "POST http://example.com/ HTTP/1.1\r\n";
  for (const char* fields : {
           "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
           "Content-Length: 3\r\nContent-Length: 4\r\n",
           "Content-Length: 3, 4\r\n",
           "Content-Length: -1\r\n",
           "Content-Length: 0x10\r\n",
           "Content-Length:\r\n",
           "Transfer-Encoding: chunked, gzip\r\n",
           "Transfer-Encoding: identity\r\n",
       }) {
    EXPECT_EQ(rejected(prefix + fields + "\r\n").status, 400) << fields;
  }
  EXPECT_EQ(
      rejected("POST http://example.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").status,
      400);
  // Repeated identical lengths are one length.
  accepted(prefix + "Content-Length: 3\r\nContent-Length: 3\r\n\r\n");
}

}  // namespace
}  // namespace hearth::egress
