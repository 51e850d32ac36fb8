#include "httpclient/sse.hpp"

#include <gtest/gtest.h>

namespace hearth::httpclient {
namespace {

std::vector<SseEvent> feed_all(SseParser& parser, const std::vector<std::string>& chunks) {
  std::vector<SseEvent> out;
  for (const auto& c : chunks) EXPECT_TRUE(parser.feed(c, out));
  return out;
}

TEST(Sse, EventsSplitAcrossChunksAndLineEndings) {
  SseParser parser;
  auto events = feed_all(parser, {"event: message\r", "\nid: 7\r\ndata: {\"a\":", "1}\r\n\r",
                                  "\n: keep-alive\n\ndata: x\ndata: y\n\n"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "message");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[1].data, "x\ny");
  EXPECT_EQ(parser.last_id(), "7");
}

TEST(Sse, IncompleteEventWaitsAndEmptyDataIsNoEvent) {
  SseParser parser;
  std::vector<SseEvent> out;
  EXPECT_TRUE(
      parser.feed("\xEF\xBB\xBF"
                  "data:no-space\n",
                  out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(parser.feed("\n", out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "no-space");
  EXPECT_TRUE(parser.feed("event: ping\n\n", out));
  EXPECT_EQ(out.size(), 1u);  // no data: nothing dispatched
}

TEST(Sse, OversizedEventFails) {
  SseParser parser(16);
  std::vector<SseEvent> out;
  EXPECT_FALSE(parser.feed("data: 0123456789abcdefghij\n\n", out));
}

}  // namespace
}  // namespace hearth::httpclient

namespace hearth::httpclient {
namespace {
// A byte order mark split across chunks is still dropped (found by fuzz/mcp_sse_fuzz.cpp).
TEST(SseParserBom, AMarkSplitAcrossChunksIsDropped) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.feed("\xEF\xBB", events));
  ASSERT_TRUE(
      parser.feed("\xBF"
                  "data: y\n\n",
                  events));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "y");
  // Bytes that only begin like a mark are kept.
  SseParser other;
  std::vector<SseEvent> more;
  ASSERT_TRUE(other.feed("\xEF", more));
  ASSERT_TRUE(other.feed("data: z\n\n", more));
  EXPECT_TRUE(more.empty());  // "\xEF" + "data" is a field of another name
}
}  // namespace
}  // namespace hearth::httpclient
