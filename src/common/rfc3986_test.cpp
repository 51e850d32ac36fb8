#include "common/rfc3986.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/rfc9110.hpp"

namespace hearth {
namespace {

/// Every byte for which `in` holds, as a string.
template <class Predicate>
std::string members(Predicate in) {
  std::string out;
  for (int i = 0; i < 256; ++i) {
    if (in(static_cast<char>(i))) out += static_cast<char>(i);
  }
  return out;
}

constexpr std::string_view kAlnum =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

std::string sorted(std::string s) {
  std::sort(s.begin(), s.end());
  return s;
}

TEST(Rfc3986Test, CharacterClassesAreExactlyTheGrammars) {
  EXPECT_EQ(members(rfc3986::is_unreserved), sorted(std::string(kAlnum) + "-._~"));
  EXPECT_EQ(members(rfc3986::is_sub_delim), sorted("!$&'()*+,;="));
  EXPECT_EQ(members(rfc3986::is_pchar),
            sorted(std::string(kAlnum) + "-._~" + "!$&'()*+,;=" + ":@"));
  // Never a NUL, a space, '%', '/', '?', '#' or a byte of UTF-8.
  for (char c : std::string_view("\0 %/?#[]\x80\xFF", 10)) {
    EXPECT_FALSE(rfc3986::is_pchar(c)) << int{c};
  }
}

TEST(Rfc3986Test, Schemes) {
  for (std::string_view scheme : {"http", "HTTPS", "svn+ssh", "a1.b-c"}) {
    EXPECT_TRUE(rfc3986::is_scheme(scheme)) << scheme;
  }
  for (std::string_view bad : {"", "1http", "+a", "ht tp", "a_b", "\xC3\xA9"}) {
    EXPECT_FALSE(rfc3986::is_scheme(bad)) << bad;
  }
}

TEST(Rfc3986Test, PercentDecoding) {
  EXPECT_EQ(rfc3986::percent_decode("a%2Fb%2fc", false), "a/b/c");
  EXPECT_EQ(rfc3986::percent_decode("a+b%20c", false), "a+b c");
  EXPECT_EQ(rfc3986::percent_decode("a+b%20c", true), "a b c");
  EXPECT_EQ(rfc3986::percent_decode("%00", false), std::string("\0", 1));
  EXPECT_EQ(rfc3986::percent_decode("", false), "");
  for (std::string_view bad : {"%", "%4", "%zz", "a%2", "%G0"}) {
    EXPECT_EQ(rfc3986::percent_decode(bad, false), std::nullopt) << bad;
  }
}

TEST(Rfc9110Test, Tokens) {
  EXPECT_EQ(members(rfc9110::is_tchar), sorted(std::string(kAlnum) + "!#$%&'*+-.^_`|~"));
  for (std::string_view token : {"Content-Type", "X-My_Header.1", "GET"}) {
    EXPECT_TRUE(rfc9110::is_token(token)) << token;
  }
  for (std::string_view bad :
       {std::string_view(), std::string_view("Bad Name"), std::string_view("a:b"),
        std::string_view("x\r\ny"), std::string_view("a\0b", 3)}) {
    EXPECT_FALSE(rfc9110::is_token(bad)) << bad;
  }
}

}  // namespace
}  // namespace hearth
