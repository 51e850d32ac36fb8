#include "a2s/template/variables.hpp"

#include <gtest/gtest.h>

namespace hearth::a2s {
namespace {

Variable var(VarType type) {
  Variable v;
  v.name = "X";
  v.type = type;
  return v;
}

std::string rule_of(const Variable& v, const json::value& value) {
  auto r = check_value(v, value);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(r.error().message.rfind("X: ", 0), 0u);
  return std::string(r.error().data.as_object().at("rule").as_string());
}

TEST(Variables, TypesAndConversionFromText) {
  EXPECT_EQ(check_value(var(VarType::kNumber), "42.5").value(), json::value(42.5));
  EXPECT_EQ(check_value(var(VarType::kInteger), "7").value(), json::value(7));
  EXPECT_EQ(check_value(var(VarType::kInteger), 7.0).value(), json::value(7));
  EXPECT_EQ(rule_of(var(VarType::kInteger), 7.5), "type");
  EXPECT_EQ(check_value(var(VarType::kBoolean), "true").value(), json::value(true));
  EXPECT_EQ(rule_of(var(VarType::kBoolean), "yes"), "type");
  EXPECT_TRUE(check_value(var(VarType::kObject), R"({"a":1})").value().is_object());
  EXPECT_EQ(rule_of(var(VarType::kArray), "{}"), "type");
  EXPECT_EQ(check_value(var(VarType::kString), 12345).value(), json::value("12345"));
  EXPECT_EQ(rule_of(var(VarType::kString), json::object{}), "type");
}

TEST(Variables, Dates) {
  auto d = var(VarType::kDate);
  EXPECT_TRUE(check_value(d, "2024-02-29").ok());
  EXPECT_TRUE(check_value(d, "2026-11-26T10:00:00Z").ok());
  EXPECT_EQ(rule_of(d, "2023-02-29"), "type");
  EXPECT_EQ(rule_of(d, "2026-13-01"), "type");
  EXPECT_EQ(rule_of(d, "26-11-2026"), "type");
  auto s = var(VarType::kString);
  s.format = "date";
  EXPECT_EQ(rule_of(s, "2026-11-31"), "format");
}

TEST(Variables, Formats) {
  auto s = var(VarType::kString);
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"email", "a.b@example.org", "a@b"},
      {"uri", "https://example.org/x", "not a uri"},
      {"uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"},
      {"ipv4", "192.0.2.1", "192.0.2.300"},
      {"ipv6", "2001:db8::1", "2001:db8:::1"},
      {"hostname", "api.example.com", "-bad-.com"},
      {"airport_code", "SEA", "sea"},
      {"currency", "EUR", "EURO"},
      {"country", "DE", "DEU"},
      {"language", "en-US", "english language"},
      {"date-time", "2026-11-26T10:00:00+01:00", "2026-11-26 25:00:00Z"},
      {"time", "10:00:00", "10:61:00"},
  };
  for (const auto& [format, good, bad] : cases) {
    s.format = format;
    EXPECT_TRUE(known_format(format));
    EXPECT_TRUE(check_value(s, json::value(good)).ok()) << format << " " << good;
    EXPECT_EQ(rule_of(s, json::value(bad)), "format") << format << " " << bad;
  }
  EXPECT_FALSE(known_format("zipcode"));
}

TEST(Variables, PatternsMatchTheWholeText) {
  auto s = var(VarType::kString);
  s.pattern = "[A-Za-z]+";
  EXPECT_TRUE(check_value(s, "abc").ok());
  EXPECT_EQ(rule_of(s, "abc1"), "pattern");
  auto n = var(VarType::kInteger);
  n.pattern = "[0-9]{5}";
  EXPECT_TRUE(check_value(n, 12345).ok());
  EXPECT_EQ(rule_of(n, 1234), "pattern");
}

TEST(Variables, MinAndMax) {
  auto n = var(VarType::kNumber);
  n.min = -90;
  n.max = 90;
  EXPECT_TRUE(check_value(n, 47.6).ok());
  EXPECT_EQ(rule_of(n, 200), "max");
  EXPECT_EQ(rule_of(n, -91), "min");
  auto s = var(VarType::kString);
  s.min = 2;
  s.max = 3;
  EXPECT_TRUE(check_value(s, "äöü").ok());  // three code points, six bytes
  EXPECT_EQ(rule_of(s, "a"), "min");
  EXPECT_EQ(rule_of(s, "abcd"), "max");
  auto a = var(VarType::kArray);
  a.max = 1;
  EXPECT_EQ(rule_of(a, json::array{1, 2}), "max");
}

TEST(Variables, MessagesNeverHoldTheValue) {
  auto s = var(VarType::kString);
  s.pattern = "[a-z]+";
  auto r = check_value(s, "SECRET-VALUE-123");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find("SECRET"), std::string::npos);
  EXPECT_EQ(json::serialize(r.error().data).find("SECRET"), std::string::npos);
}

TEST(Variables, TextOf) {
  EXPECT_EQ(text_of("a b"), "a b");
  EXPECT_EQ(text_of(3), "3");
  EXPECT_EQ(text_of(true), "true");
  EXPECT_EQ(text_of(json::parse(R"({"a":1})")), R"({"a":1})");
}

}  // namespace
}  // namespace hearth::a2s
