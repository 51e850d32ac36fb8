#include "mcp/message.hpp"

#include <gtest/gtest.h>

namespace hearth::mcp {
namespace {

json::value parse_json(std::string_view text) {
  return json::parse_text(text).value();
}

TEST(McpMessage, ClassifiesResponsesRequestsAndNotificationsAndDropsTheRest) {
  auto in = classify(parse_json(R"([
    {"jsonrpc":"2.0","id":7,"result":{}},
    {"jsonrpc":"2.0","id":"x","result":{}},
    {"jsonrpc":"2.0","id":3,"method":"ping"},
    {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5}},
    {"jsonrpc":"2.0","method":42},
    17
  ])"));
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].kind, Incoming::Kind::kResponse);
  EXPECT_EQ(in[0].id, 7);
  EXPECT_EQ(in[1].kind, Incoming::Kind::kRequest);
  EXPECT_EQ(in[1].method, "ping");
  EXPECT_EQ(in[2].kind, Incoming::Kind::kNotification);
  EXPECT_EQ(progress_key(in[2]), "5");
  EXPECT_TRUE(classify(parse_json("\"text\"")).empty());
}

TEST(McpMessage, AnswersPingAndRefusesOtherRequests) {
  auto ping = classify(parse_json(R"({"jsonrpc":"2.0","id":"a","method":"ping"})"));
  EXPECT_EQ(json::serialize(answer(ping.at(0))), R"({"jsonrpc":"2.0","id":"a","result":{}})");
  auto roots = classify(parse_json(R"({"jsonrpc":"2.0","id":1,"method":"roots/list"})"));
  const auto reply = answer(roots.at(0));
  EXPECT_EQ(reply.at("error").at("code"), -32601);
}

TEST(McpMessage, ResponseResultsAndErrors) {
  auto ok = response_result("s", "tools/list", parse_json(R"({"id":1,"result":[1]})").get_object());
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(json::serialize(*ok), "[1]");
  auto refused = response_result(
      "s", "tools/call",
      parse_json(R"({"id":1,"error":{"code":-32000,"message":"no"}})").get_object());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "MCP server 's' refused tools/call: no");
  auto transport = response_result(
      "s", "tools/call",
      parse_json(
          R"({"id":1,"error":{"code":-32001,"message":"blocked","data":{"origin":"hearth"}}})")
          .get_object());
  ASSERT_FALSE(transport.ok());
  EXPECT_EQ(transport.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(transport.error().message, "blocked");
  auto empty = response_result("s", "x", parse_json(R"({"id":1})").get_object());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "MCP server 's' sent a response to x without a result");
}

TEST(McpMessage, VersionsAndToolPages) {
  EXPECT_EQ(negotiated_version("s", parse_json(R"({"protocolVersion":"2025-06-18"})")).value(),
            "2025-06-18");
  auto old = negotiated_version("s", parse_json(R"({"protocolVersion":"2024-11-05"})"));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().message,
            "MCP server 's' speaks MCP 2024-11-05; hearth speaks 2025-11-25 and 2025-06-18");

  auto page =
      tool_page("s", parse_json(R"({"tools":[{"name":"a","description":"d","inputSchema":{}},
                                                {"description":"nameless"},3],
                                       "nextCursor":"p2"})"));
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->tools.size(), 1u);
  EXPECT_EQ(page->tools[0].name, "a");
  EXPECT_EQ(page->tools[0].description, "d");
  EXPECT_EQ(page->next_cursor, "p2");
  EXPECT_FALSE(tool_page("s", parse_json(R"({"tools":[],"nextCursor":""})"))->next_cursor);
  EXPECT_FALSE(tool_page("s", parse_json(R"({"tool":[]})")).ok());
}

}  // namespace
}  // namespace hearth::mcp
