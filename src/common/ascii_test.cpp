#include "common/ascii.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string_view>
#include <utility>

namespace hearth::ascii {
namespace {

// The helpers are usable at compile time.
static_assert(is_digit('7') && !is_digit('a'));
static_assert(lower('Q') == 'q' && upper('q') == 'Q');
static_assert(iequals("Content-Length", "content-LENGTH"));
static_assert(trim("  x y\t") == "x y");
static_assert(hex_value('F') == 15);

TEST(AsciiTest, ClassesMatchTheCLocaleOnAsciiAndRejectEveryOtherByte) {
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    const auto u = static_cast<unsigned char>(c);
    const bool ascii = i < 0x80;
    EXPECT_EQ(is_digit(c), ascii && std::isdigit(u) != 0) << i;
    EXPECT_EQ(is_alpha(c), ascii && std::isalpha(u) != 0) << i;
    EXPECT_EQ(is_alnum(c), ascii && std::isalnum(u) != 0) << i;
    EXPECT_EQ(is_upper(c), ascii && std::isupper(u) != 0) << i;
    EXPECT_EQ(is_lower(c), ascii && std::islower(u) != 0) << i;
    EXPECT_EQ(is_hex_digit(c), ascii && std::isxdigit(u) != 0) << i;
    EXPECT_EQ(is_space(c), ascii && std::isspace(u) != 0) << i;
    EXPECT_EQ(lower(c), ascii ? static_cast<char>(std::tolower(u)) : c) << i;
    EXPECT_EQ(upper(c), ascii ? static_cast<char>(std::toupper(u)) : c) << i;
  }
}

TEST(AsciiTest, CodePointsBeyondAsciiAreNeitherLettersNorDigits) {
  for (char32_t c : {U'\u00e9', U'\u0660', U'\uff10', U'\u00a0', U'\U0001F600'}) {
    EXPECT_FALSE(is_alpha(c));
    EXPECT_FALSE(is_digit(c));
    EXPECT_FALSE(is_space(c));
    EXPECT_EQ(hex_value(c), -1);
  }
  EXPECT_TRUE(is_alnum(U'z'));
  EXPECT_EQ(hex_value(U'b'), 11);
}

TEST(AsciiTest, CaseFoldingLeavesUtf8Alone) {
  EXPECT_EQ(lower("HeLLo-\xC3\x89T\xC3\xA9"), "hello-\xC3\x89t\xC3\xA9");
  EXPECT_EQ(upper("get \xC3\xA9"), "GET \xC3\xA9");
  EXPECT_EQ(lower(""), "");
}

TEST(AsciiTest, HexValues) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  for (std::size_t i = 0; i < kDigits.size(); ++i) {
    EXPECT_EQ(hex_value(kDigits[i]), static_cast<int>(i)) << kDigits[i];
    EXPECT_EQ(hex_value(upper(kDigits[i])), static_cast<int>(i)) << kDigits[i];
  }
  for (char c : std::string_view("gG/:@`xX \0", 10)) EXPECT_EQ(hex_value(c), -1) << int{c};
}

TEST(AsciiTest, CaseInsensitiveComparison) {
  using Pair = std::pair<std::string_view, std::string_view>;
  for (const auto& [a, b] :
       {Pair{"", ""}, Pair{"Transfer-Encoding", "transfer-encoding"}, Pair{"A1-z", "a1-Z"}}) {
    EXPECT_TRUE(iequals(a, b)) << a << " ~ " << b;
  }
  // Only ASCII letters fold: '@' and '`' are 0x20 apart too, and so are UTF-8's E9 and C9.
  for (const auto& [a, b] :
       {Pair{"host", "hosts"}, Pair{"a-b", "a_b"}, Pair{"@", "`"}, Pair{"\xC3\x89", "\xC3\xA9"}}) {
    EXPECT_FALSE(iequals(a, b)) << a << " ~ " << b;
  }
  EXPECT_TRUE(istarts_with("Proxy-Authorization", "proxy-"));
  EXPECT_TRUE(istarts_with("x", ""));
  EXPECT_FALSE(istarts_with("Prox", "proxy-"));
}

TEST(AsciiTest, TrimTakesSpacesAndTabsUnlessToldOtherwise) {
  using Case = std::pair<std::string_view, std::string_view>;  // text, trimmed
  for (const auto& [text, trimmed] :
       {Case{"", ""}, Case{" \t ", ""}, Case{"a b", "a b"},
        Case{"\tapplication/json ", "application/json"}, Case{"\r\nx\n", "\r\nx\n"}}) {
    EXPECT_EQ(trim(text), trimmed) << text;
  }
  EXPECT_EQ(trim("\r\n x \n", " \t\r\n"), "x");
}

}  // namespace
}  // namespace hearth::ascii
