#include "lafs/validate.hpp"

#include <gtest/gtest.h>

#include "lafs/testing.hpp"

namespace hearth::lafs {
namespace {

using testing::parse;

// Applies `edit` to the sample envelope and validates the result.
template <class Edit>
std::vector<SchemaError> with(Edit edit) {
  json::value env = testing::sample_envelope();
  edit(env.as_object());
  return validate_envelope_schema(env);
}

bool mentions(const std::vector<SchemaError>& errors, std::string_view path,
              std::string_view keyword) {
  for (const auto& e : errors) {
    if (e.path == path && e.keyword == keyword) return true;
  }
  return false;
}

TEST(LafsValidate, SampleIsValid) {
  EXPECT_TRUE(validate_envelope_schema(testing::sample_envelope()).empty());
  EXPECT_TRUE(envelope_schema_valid(testing::sample_envelope()));
}

TEST(LafsValidate, RequiredTopLevelMembers) {
  for (auto key : {"$schema", "_meta", "success", "result"}) {
    auto errors = with([&](json::object& o) { o.erase(key); });
    EXPECT_TRUE(mentions(errors, "", "required")) << key;
  }
  EXPECT_FALSE(validate_envelope_schema(parse("[]")).empty());
  EXPECT_FALSE(validate_envelope_schema(parse("null")).empty());
}

TEST(LafsValidate, SchemaConst) {
  auto errors = with(
      [](json::object& o) { o["$schema"] = "https://lafs.dev/schemas/v2/envelope.schema.json"; });
  EXPECT_TRUE(mentions(errors, "/$schema", "const"));
}

TEST(LafsValidate, MetaMembers) {
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["mvi"] = "verbose"; }),
                       "/_meta/mvi", "enum"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["transport"] = "ws"; }),
                       "/_meta/transport", "enum"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["strict"] = "yes"; }),
                       "/_meta/strict", "type"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["contextVersion"] = -1; }),
                       "/_meta/contextVersion", "minimum"));
  EXPECT_TRUE(
      mentions(with([](json::object& o) { o["_meta"].as_object()["contextVersion"] = 1.5; }),
               "/_meta/contextVersion", "type"));
  // 2.0 is an integer to JSON Schema (and to ajv).
  EXPECT_TRUE(
      with([](json::object& o) { o["_meta"].as_object()["contextVersion"] = 2.0; }).empty());
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["requestId"] = "ab"; }),
                       "/_meta/requestId", "minLength"));
  EXPECT_TRUE(mentions(
      with([](json::object& o) { o["_meta"].as_object()["operation"] = std::string(129, 'x'); }),
      "/_meta/operation", "maxLength"));
  // Lengths count code points: 128 two-byte characters are fine.
  std::string wide;
  for (int i = 0; i < 128; ++i) wide += "\xC3\xA9";
  EXPECT_TRUE(with([&](json::object& o) { o["_meta"].as_object()["operation"] = wide; }).empty());
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["specVersion"] = "1.0"; }),
                       "/_meta/specVersion", "pattern"));
  EXPECT_TRUE(
      mentions(with([](json::object& o) { o["_meta"].as_object()["timestamp"] = "yesterday"; }),
               "/_meta/timestamp", "format"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["extra"] = 1; }), "/_meta",
                       "additionalProperties"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object().erase("mvi"); }), "/_meta",
                       "required"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["_meta"].as_object()["sessionId"] = ""; }),
                       "/_meta/sessionId", "minLength"));
  EXPECT_TRUE(
      mentions(with([](json::object& o) {
                 o["_meta"].as_object()["warnings"] = json::array{json::object{{"code", "X"}}};
               }),
               "/_meta/warnings/0", "required"));
  EXPECT_TRUE(with([](json::object& o) {
                o["_meta"].as_object()["warnings"] =
                    json::array{json::object{{"code", "X"}, {"message", "m"}, {"attempt", 2}}};
              }).empty());
}

TEST(LafsValidate, SuccessAndErrorExclusion) {
  auto err = parse(
      R"({"code":"E_VALIDATION_SCHEMA","message":"m","category":"VALIDATION","retryable":false,
                       "retryAfterMs":null,"details":{}})");
  // success=true with an error object: the first allOf branch.
  EXPECT_TRUE(mentions(with([&](json::object& o) { o["error"] = err; }), "/error", "type"));
  EXPECT_TRUE(with([&](json::object& o) { o["error"] = nullptr; }).empty());
  // success=false needs an error object; a result may stay (LAFS 1.8.0).
  EXPECT_TRUE(mentions(with([](json::object& o) { o["success"] = false; }), "", "required"));
  EXPECT_TRUE(mentions(with([](json::object& o) {
                         o["success"] = false;
                         o["error"] = nullptr;
                       }),
                       "/error", "type"));
  EXPECT_TRUE(with([&](json::object& o) {
                o["success"] = false;
                o["error"] = err;
              }).empty());
}

TEST(LafsValidate, ErrorObject) {
  auto failure = [](std::string_view error_json) {
    return with([&](json::object& o) {
      o["success"] = false;
      o["result"] = nullptr;
      o["error"] = parse(error_json);
    });
  };
  const std::string base =
      R"("message":"m","category":"VALIDATION","retryable":false,"retryAfterMs":null,"details":{})";
  EXPECT_TRUE(failure(R"({"code":"E_X_Y",)" + base + "}").empty());
  EXPECT_TRUE(mentions(failure(R"({"code":"bad",)" + base + "}"), "/error/code", "pattern"));
  EXPECT_TRUE(mentions(failure(R"({"code":"E_X_Y","message":"m"})"), "/error", "required"));
  EXPECT_TRUE(mentions(failure(R"({"code":"E_X_Y",)" + base + R"(,"agentAction":"abort"})"),
                       "/error/agentAction", "enum"));
  EXPECT_TRUE(mentions(failure(R"({"code":"E_X_Y",)" + base + R"(,"docUrl":"not a uri"})"),
                       "/error/docUrl", "format"));
  EXPECT_TRUE(
      failure(R"({"code":"E_X_Y",)" + base + R"(,"vendorField":1})").empty());  // open object
  EXPECT_TRUE(
      mentions(failure(R"({"code":"E_X_Y","message":"m","category":"VALIDATION","retryable":false,
                                  "retryAfterMs":-5,"details":{}})"),
               "/error/retryAfterMs", "minimum"));
  EXPECT_TRUE(
      mentions(failure(R"({"code":"E_X_Y","message":"","category":"VALIDATION","retryable":false,
                                  "retryAfterMs":null,"details":{}})"),
               "/error/message", "minLength"));
}

TEST(LafsValidate, PaginationModes) {
  auto paged = [](std::string_view page) {
    return with([&](json::object& o) { o["page"] = parse(page); });
  };
  EXPECT_TRUE(paged(R"({"mode":"none"})").empty());
  EXPECT_TRUE(paged(R"({"mode":"cursor","nextCursor":null,"hasMore":false})").empty());
  EXPECT_TRUE(
      paged(R"({"mode":"offset","limit":10,"offset":0,"hasMore":true,"total":null})").empty());
  auto missing = paged(R"({"mode":"cursor","hasMore":true})");
  ASSERT_FALSE(missing.empty());
  EXPECT_NE(missing.front().message.find("nextCursor"), std::string::npos);
  EXPECT_TRUE(
      mentions(paged(R"({"mode":"offset","limit":10,"hasMore":true})"), "/page", "required"));
  EXPECT_TRUE(mentions(paged(R"({"mode":"offset","limit":0,"offset":0,"hasMore":true})"),
                       "/page/limit", "minimum"));
  EXPECT_TRUE(mentions(paged(R"({"mode":"offset","limit":1001,"offset":0,"hasMore":true})"),
                       "/page/limit", "maximum"));
  EXPECT_TRUE(mentions(paged(R"({"mode":"none","cursor":"x"})"), "/page", "additionalProperties"));
  EXPECT_TRUE(mentions(paged(R"({"mode":"pages"})"), "/page/mode", "enum"));
  EXPECT_TRUE(mentions(paged(R"({"hasMore":true})"), "/page", "required"));
  // Mixed members are a runner check (pagination_mode_consistent), not a schema error.
  EXPECT_TRUE(paged(R"({"mode":"cursor","nextCursor":"a","hasMore":true,"offset":3})").empty());
}

TEST(LafsValidate, StrictAndLenient) {
  EXPECT_TRUE(mentions(with([](json::object& o) { o["vendor"] = 1; }), "", "additionalProperties"));
  EXPECT_TRUE(with([](json::object& o) {
                o["vendor"] = 1;
                o["_meta"].as_object()["strict"] = false;
              }).empty());
  EXPECT_TRUE(with([](json::object& o) {
                o["_extensions"] = json::object{{"x-trace", "t"}};
              }).empty());
  EXPECT_TRUE(
      mentions(with([](json::object& o) { o["_extensions"] = "t"; }), "/_extensions", "type"));
}

TEST(LafsValidate, ResultTypes) {
  EXPECT_TRUE(with([](json::object& o) { o["result"] = json::array{1, 2}; }).empty());
  EXPECT_TRUE(with([](json::object& o) { o["result"] = nullptr; }).empty());
  EXPECT_TRUE(mentions(with([](json::object& o) { o["result"] = "text"; }), "/result", "type"));
  EXPECT_TRUE(mentions(with([](json::object& o) { o["result"] = 3; }), "/result", "type"));
}

TEST(LafsValidate, FixturesAsTheReferenceConcludes) {
  const std::vector<std::pair<std::string, bool>> expected = {
      {"valid-success-envelope.json", true},     {"valid-success-no-error.json", true},
      {"valid-success-no-page.json", true},      {"valid-error-envelope.json", true},
      {"valid-error-actionable.json", true},     {"valid-error-escalation.json", true},
      {"valid-cursor-pagination.json", true},    {"valid-offset-pagination.json", true},
      {"valid-none-pagination.json", true},      {"valid-context-ledger.json", true},
      {"field-extraction-success.json", true},   {"field-extraction-array.json", true},
      {"invalid-error-with-result.json", true},  {"invalid-unregistered-error.json", true},
      {"invalid-context-stale.json", true},      {"invalid-context-missing.json", true},
      {"mixed-pagination-envelope.json", true},  {"valid-error-minimal.json", false},
      {"invalid-conflict-envelope.json", false}, {"invalid-cursor-missing-fields.json", false},
  };
  for (const auto& [name, valid] : expected) {
    const auto errors = validate_envelope_schema(testing::read_json(testing::fixture(name)));
    EXPECT_EQ(errors.empty(), valid)
        << name << ": " << (errors.empty() ? "" : errors.front().to_string());
    EXPECT_EQ(envelope_schema_valid(testing::read_json(testing::fixture(name))), valid) << name;
  }
}

TEST(LafsValidate, ContextLedgerSchema) {
  for (auto name : {"simple-query.json", "chained-operations.json", "error-recovery.json"}) {
    const auto doc = testing::read_json(testing::fixture(std::string("agent-workflows/") + name));
    EXPECT_TRUE(validate_context_ledger_schema(doc.at("ledger")).empty()) << name;
  }
  auto ledger = parse(R"({"ledgerId":"l","version":0,"createdAt":"2026-01-01T00:00:00Z",
                          "updatedAt":"2026-01-01T00:00:00Z","entries":[],"checksum":"c","maxEntries":0,"x":1})");
  auto errors = validate_context_ledger_schema(ledger);
  EXPECT_TRUE(mentions(errors, "/maxEntries", "minimum"));
  EXPECT_TRUE(mentions(errors, "", "additionalProperties"));
}

}  // namespace
}  // namespace hearth::lafs
