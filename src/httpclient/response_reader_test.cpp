#include "httpclient/response_reader.hpp"

#include <gtest/gtest.h>

#include "httpclient/response_reader_testing.hpp"

namespace hearth::httpclient {
namespace {

using Read = testing::PiecewiseRead;

Read read(std::string_view wire, std::size_t step, ResponseReader::Limits limits = {},
          bool closes = true) {
  return testing::read_in_pieces(wire, step, limits, closes);
}

TEST(ResponseReader, ContentLengthBodyInAnyPieces) {
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A: 1\r\n\r\nhello world";
  for (std::size_t step : {1u, 2u, 7u, 64u}) {
    auto r = read(wire, step, {}, false);
    ASSERT_TRUE(r.ok) << step << ": " << r.error;
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "hello world") << step;
  }
}

TEST(ResponseReader, HeadIsReadBeforeAnyBodyAndNamesAreLowerCase) {
  ResponseReader reader({});
  bool body_seen = false;
  const std::string wire =
      "HTTP/1.1 404 Not Here\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc";
  auto used = reader.put(wire, [&](std::string_view) {
    body_seen = true;
    return true;
  });
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(reader.head_done());
  EXPECT_FALSE(body_seen);
  EXPECT_EQ(*used, wire.size() - 3);
  EXPECT_EQ(reader.status(), 404);
  EXPECT_EQ(reader.reason(), "Not Here");
  const auto headers = reader.headers();
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].first, "content-type");
  EXPECT_EQ(headers[0].second, "text/plain");
}

TEST(ResponseReader, ChunkedBody) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\n"
      "world\r\n0\r\nTrailer: x\r\n\r\n";
  for (std::size_t step : {1u, 3u, 1000u}) {
    auto r = read(wire, step, {}, false);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.body, "hello world");
  }
}

TEST(ResponseReader, InterimResponsesAreSkippedUpToALimit) {
  std::string wire =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
      "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
  auto r = read(wire, 5, {}, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body, "ok");

  std::string many;
  for (int i = 0; i <= ResponseReader::kMaxInterim; ++i) many += "HTTP/1.1 100 Continue\r\n\r\n";
  auto flood = read(many + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 1000);
  EXPECT_FALSE(flood.ok);
  EXPECT_EQ(flood.error, "too many interim (1xx) responses");
}

TEST(ResponseReader, ABodyEndedByTheCloseNeedsTheClose) {
  const std::string wire = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end";
  auto open = read(wire, 4, {}, false);
  ASSERT_TRUE(open.ok);
  EXPECT_FALSE(open.done);
  auto closed = read(wire, 4);
  ASSERT_TRUE(closed.ok) << closed.error;
  EXPECT_TRUE(closed.done);
  EXPECT_EQ(closed.body, "until the end");
}

TEST(ResponseReader, ACloseBeforeTheEndIsAnError) {
  auto nothing = read("", 1);
  EXPECT_FALSE(nothing.ok);
  EXPECT_EQ(nothing.error, "the connection closed before a response");
  // After an interim response the real one has not begun (found by fuzz/http_response).
  for (const char* wire : {"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Le",
                           "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
                           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"}) {
    auto r = read(wire, 3);
    EXPECT_FALSE(r.ok) << wire;
    EXPECT_EQ(r.error, "the connection closed in the middle of the response") << wire;
  }
}

TEST(ResponseReader, AHeadResponseHasNoBodyWhateverItsLength) {
  auto r = read("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 8,
                {.max_body = std::nullopt, .head_request = true}, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.done);
  EXPECT_TRUE(r.body.empty());
}

TEST(ResponseReader, LimitsOnTheHeadAndTheBody) {
  const std::string huge_head =
      "HTTP/1.1 200 OK\r\nX-Big: " + std::string(ResponseReader::kHeaderLimit, 'a') + "\r\n\r\n";
  auto head = read(huge_head, 4096);
  EXPECT_FALSE(head.ok);
  EXPECT_EQ(head.error, "the response head is larger than 65536 bytes");

  const ResponseReader::Limits ten{.max_body = 10};
  for (const std::string& wire :
       {std::string("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890"),
        std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n"
                    "6\r\n678901\r\n0\r\n\r\n"),
        std::string("HTTP/1.1 200 OK\r\n\r\n") + std::string(11, 'x')}) {
    auto r = read(wire, 5, ten);
    EXPECT_FALSE(r.ok) << wire;
    EXPECT_EQ(r.error, "response larger than 10 bytes") << wire;
  }
  auto fits = read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 5, ten, false);
  EXPECT_TRUE(fits.ok) << fits.error;
}

TEST(ResponseReader, MalformedHeadsAreErrors) {
  for (const char* wire : {"HTTP/1.1 2000 OK\r\n\r\n", "HTTP/9 200 OK\r\n\r\n", "garbage\r\n\r\n",
                           "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                           "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"}) {
    auto r = read(wire, 100);
    EXPECT_FALSE(r.ok) << wire;
    EXPECT_TRUE(r.error.starts_with("malformed response")) << wire << ": " << r.error;
  }
}

TEST(ResponseReader, ASinkThatStopsEndsTheReading) {
  ResponseReader reader({});
  const std::string wire =
      "HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n" + std::string(40000, 'z');
  std::size_t got = 0;
  const auto sink = [&](std::string_view piece) {
    got += piece.size();
    return false;
  };
  auto head = reader.put(wire, sink);
  ASSERT_TRUE(head.ok());
  auto body = reader.put(std::string_view(wire).substr(*head), sink);
  ASSERT_TRUE(body.ok());
  EXPECT_TRUE(reader.stopped());
  EXPECT_FALSE(reader.done());
  EXPECT_GT(got, 0u);
  EXPECT_LT(got, 40000u);
}

}  // namespace
}  // namespace hearth::httpclient
