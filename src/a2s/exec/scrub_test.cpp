#include "a2s/exec/scrub.hpp"

#include <gtest/gtest.h>

namespace hearth::a2s {
namespace {

TEST(Scrubber, ReplacesEveryWireFormOfASecret) {
  Scrubber scrub;
  scrub.add("s3cr3t/tok en+\"x", "api.example.com::API_KEY");
  const std::string r = "[redacted:api.example.com::API_KEY]";
  EXPECT_EQ(scrub.apply("Bearer s3cr3t/tok en+\"x"), "Bearer " + r);
  EXPECT_EQ(scrub.apply("q=s3cr3t%2Ftok%20en%2B%22x"), "q=" + r);
  EXPECT_EQ(scrub.apply("q=s3cr3t%2Ftok+en%2B%22x"), "q=" + r);
  EXPECT_EQ(scrub.apply(R"({"k":"s3cr3t/tok en+\"x"})"), R"({"k":")" + r + R"("})");
}

TEST(Scrubber, Base64OfBasicCredentials) {
  Scrubber scrub;
  scrub.add("user:password", "PASS");
  EXPECT_EQ(scrub.apply("Basic dXNlcjpwYXNzd29yZA=="), "Basic [redacted:PASS]");
}

TEST(Scrubber, JsonValuesKeysIncluded) {
  Scrubber scrub;
  scrub.add("tok-123456", "T");
  json::value v = json::parse(R"({"echo":{"authorization":"Bearer tok-123456"},
      "list":["tok-123456", 3],"tok-123456":true})");
  EXPECT_EQ(json::serialize(scrub.apply_json(v)),
            R"({"echo":{"authorization":"Bearer [redacted:T]"},"list":["[redacted:T]",3],)"
            R"("[redacted:T]":true})");
}

TEST(Scrubber, ShortValuesAndNothingToHide) {
  Scrubber scrub;
  EXPECT_TRUE(scrub.empty());
  scrub.add("abc", "SHORT");
  EXPECT_TRUE(scrub.empty());
  EXPECT_EQ(scrub.apply("abc abc"), "abc abc");
}

TEST(Scrubber, ALongerSecretContainingAShorterOneIsReplacedWhole) {
  Scrubber scrub;
  scrub.add("abcd", "A");
  scrub.add("abcdefgh", "B");
  EXPECT_EQ(scrub.apply("xabcdefghx abcd"), "x[redacted:B]x [redacted:A]");
}

}  // namespace
}  // namespace hearth::a2s
