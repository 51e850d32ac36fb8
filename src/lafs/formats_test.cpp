#include "lafs/formats.hpp"

#include <gtest/gtest.h>

namespace hearth::lafs {
namespace {

TEST(LafsFormats, DateTime) {
  for (auto s : {"2026-02-11T00:00:00Z", "2026-02-11t00:00:00z", "2026-02-11 00:00:00Z",
                 "2024-02-29T12:30:45.123+05:30", "2026-01-01T00:00:00+0530",
                 "2026-01-01T00:00:00-05", "2016-12-31T23:59:60Z", "2017-01-01T01:29:60+01:30"}) {
    EXPECT_TRUE(is_date_time(s)) << s;
  }
  for (auto s : {"", "2026-02-11", "2026-02-11T00:00:00", "2026-02-30T00:00:00Z",
                 "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-02-11T24:00:00Z",
                 "2026-02-11T00:60:00Z", "2026-02-11T12:00:60Z", "2026-02-11T00:00:00+24:00",
                 "2026-02-11T00:00:00+05:", "2026-02-11T00:00:00.Z", "2026-02-11TT00:00:00Z",
                 "2026-2-11T00:00:00Z", "２０２６-02-11T00:00:00Z", "2026-02-11T00:00:00Zt"}) {
    EXPECT_FALSE(is_date_time(s)) << s;
  }
  // JavaScript white space (here U+00A0) separates date and time as 'T' does.
  EXPECT_TRUE(
      is_date_time("2026-02-11\xC2\xA0"
                   "00:00:00Z"));
}

TEST(LafsFormats, Uri) {
  for (auto s :
       {"https://lafs.dev/docs/errors/rate-limited", "http://a", "mailto:someone@example.com",
        "urn:isbn:0451450523", "http://[::1]:8080/x", "http://[2001:db8::7]/c=GB?objectClass?one",
        "http://user:pw@host:80/p?q=1#frag", "file:///etc/hosts", "x:/", "http:/host/path",
        "http://192.168.0.1/", "https://example.com/%20", "foo:bar/baz", "http://[v1.fe]/",
        // "//" may be read as "/" and an empty authority, so the rest is a path (as in the
        // reference):
        "http://a@b@c/", "http://host:8a/"}) {
    EXPECT_TRUE(is_uri(s)) << s;
  }
  for (auto s : {"", "lafs.dev/docs", "/relative/path", "#frag", "http:", "1http://x",
                 "http://exa mple.com", "http://[::1", "http://[1::2::3]/", "http://%zz/",
                 "http://h/é", "ht tp://x", "http://[1:2:3:4:5:6:7:8:9]/"}) {
    EXPECT_FALSE(is_uri(s)) << s;
  }
}

TEST(LafsFormats, SemverTriplet) {
  EXPECT_TRUE(is_semver_triplet("1.0.0"));
  EXPECT_TRUE(is_semver_triplet("10.200.3000"));
  EXPECT_FALSE(is_semver_triplet("1.0"));
  EXPECT_FALSE(is_semver_triplet("1.0.0.0"));
  EXPECT_FALSE(is_semver_triplet("1.0.0-rc1"));
  EXPECT_FALSE(is_semver_triplet("v1.0.0"));
  EXPECT_FALSE(is_semver_triplet("1..0"));
  EXPECT_FALSE(is_semver_triplet("1.0.0\n"));
}

TEST(LafsFormats, CodePoints) {
  EXPECT_EQ(code_point_count(""), 0u);
  EXPECT_EQ(code_point_count("abc"), 3u);
  EXPECT_EQ(code_point_count("\xC3\xA9"), 1u);          // é
  EXPECT_EQ(code_point_count("\xF0\x9F\x98\x80"), 1u);  // one emoji, two UTF-16 units
  EXPECT_EQ(code_point_count("\xFF"), 1u);              // a bad byte counts once
  EXPECT_EQ(truncate_code_points("h\xC3\xA9llo", 2), "h\xC3\xA9");
}

}  // namespace
}  // namespace hearth::lafs
