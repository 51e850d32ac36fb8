#include "js/frame.hpp"

#include <gtest/gtest.h>

namespace hearth::js {
namespace {

TEST(JsFrame, RoundTripsAcrossArbitraryChunking) {
  std::string stream;
  std::vector<std::string> sent = {"{}", "", std::string(100000, 'x'), "{\"t\":\"call\"}"};
  for (const auto& s : sent) stream += encode_frame(s);
  for (std::size_t chunk : {1, 3, 7, 4096, 1 << 20}) {
    FrameReader reader;
    std::vector<std::string> got;
    for (std::size_t i = 0; i < stream.size(); i += chunk) {
      reader.feed(std::string_view(stream).substr(i, chunk));
      while (auto frame = reader.next()) got.push_back(*frame);
    }
    EXPECT_EQ(got, sent) << "chunk " << chunk;
    EXPECT_EQ(reader.buffered(), 0u);
    EXPECT_FALSE(reader.failed());
  }
}

TEST(JsFrame, RefusesOversizedFrames) {
  FrameReader reader;
  reader.feed(std::string("\x7f\xff\xff\xff", 4));
  EXPECT_EQ(reader.next(), std::nullopt);
  EXPECT_TRUE(reader.failed());
  reader.feed(encode_frame("{}"));
  EXPECT_EQ(reader.next(), std::nullopt);
}

TEST(JsFrame, WaitsForTheWholeFrame) {
  FrameReader reader;
  const std::string frame = encode_frame("hello");
  reader.feed(frame.substr(0, 6));
  EXPECT_EQ(reader.next(), std::nullopt);
  reader.feed(frame.substr(6));
  EXPECT_EQ(reader.next(), "hello");
}

}  // namespace
}  // namespace hearth::js
