#include "lafs/flags.hpp"

#include <gtest/gtest.h>

#include "lafs/testing.hpp"

namespace hearth::lafs {
namespace {

using testing::parse;

TEST(LafsFlags, Precedence) {
  auto resolve = [](std::string_view doc) {
    return resolve_format(parse_flag_input(parse(doc)).value());
  };
  EXPECT_EQ(resolve("{}").value().format, Format::kJson);
  EXPECT_EQ(resolve("{}").value().source, FlagResolution::Source::kDefault);
  EXPECT_EQ(resolve(R"({"humanFlag":true})").value().format, Format::kHuman);
  EXPECT_EQ(resolve(R"({"projectDefault":"human","userDefault":"json"})").value().source,
            FlagResolution::Source::kProject);
  EXPECT_EQ(resolve(R"({"userDefault":"human"})").value().format, Format::kHuman);
  EXPECT_EQ(resolve(R"({"jsonFlag":true,"projectDefault":"human"})").value().format,
            Format::kJson);  // flags win
  EXPECT_EQ(resolve(R"({"tty":true})").value().format,
            Format::kJson);  // the protocol default is json
  EXPECT_FALSE(parse_flag_input(parse(R"({"jsonFlag":"yes"})")).ok());
  EXPECT_FALSE(parse_flag_input(parse(R"({"projectDefault":"table"})")).ok());
}

TEST(LafsFlags, FixturesResolve) {
  auto valid = resolve_format(
      parse_flag_input(testing::read_json(testing::fixture("flags-valid.json"))).value());
  ASSERT_TRUE(valid.ok());
  EXPECT_EQ(valid->format, Format::kJson);
  EXPECT_EQ(valid->source, FlagResolution::Source::kFlag);
  auto conflict = resolve_format(
      parse_flag_input(testing::read_json(testing::fixture("flags-conflict.json"))).value());
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().data.at("lafs").at("code"), "E_FORMAT_CONFLICT");
}

TEST(LafsFlags, FieldFlags) {
  auto both = resolve_field_flags(std::string("id"), std::string("id,title"));
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().data.at("lafs").at("code"), "E_FIELD_CONFLICT");
  auto fields = resolve_field_flags(std::nullopt, std::string(" id, title ,,status"));
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->fields, (std::vector<std::string>{"id", "title", "status"}));
  EXPECT_EQ(resolve_field_flags(std::string("id"), std::nullopt).value().field, "id");
}

}  // namespace
}  // namespace hearth::lafs
