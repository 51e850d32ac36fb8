#include "lafs/envelope.hpp"

#include <gtest/gtest.h>

#include "lafs/conformance.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {
namespace {

Builder sample() {
  Builder b("todo.list");
  b.request_id("req_1").transport(Transport::kHttp).timestamp("2026-02-11T00:00:00Z");
  return b;
}

TEST(LafsEnvelope, SuccessEnvelopeIsValidAndPassesStandard) {
  auto env = sample()
                 .page(Page::offset_page(25, 0, false, 1))
                 .success(json::object{{"items", json::array{1}}});
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_TRUE(envelope_schema_valid(env.value()));
  EXPECT_FALSE(env->contains("error"));  // strict: omitted, not null
  EXPECT_EQ(env->at("page").at("mode"), "offset");
  auto report = run_envelope_conformance(env.value(), Tier::kStandard);
  EXPECT_TRUE(report.ok) << to_text(report);
}

TEST(LafsEnvelope, FailureEnvelopeFromRegistry) {
  auto env = sample().failure(
      ErrorInfo::from_registry(kNotFoundResource, "no such todo", json::object{{"id", 7}}));
  ASSERT_TRUE(env.ok()) << env.error().message;
  const auto& e = env->at("error").as_object();
  EXPECT_EQ(e.at("code"), "E_NOT_FOUND_RESOURCE");
  EXPECT_EQ(e.at("category"), "NOT_FOUND");
  EXPECT_EQ(e.at("retryable"), false);
  EXPECT_EQ(e.at("agentAction"), "stop");
  EXPECT_EQ(e.at("retryAfterMs"), nullptr);
  EXPECT_EQ(env->at("result"), nullptr);
  EXPECT_TRUE(run_envelope_conformance(env.value(), Tier::kComplete).ok);
}

TEST(LafsEnvelope, FailureMayCarryAResult) {
  auto env = sample().failure(ErrorInfo::from_registry(kValidationSchema, "bad"),
                              json::object{{"suggestedFix", "x"}});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("result").at("suggestedFix"), "x");
  EXPECT_TRUE(run_envelope_conformance(env.value(), Tier::kStandard).ok);
}

TEST(LafsEnvelope, ScalarResultsAreWrapped) {
  auto env = sample().success(json::value(42));
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("result"), (json::object{{"value", 42}}));
}

TEST(LafsEnvelope, LenientModeWritesNulls) {
  auto env = sample().strict(false).success(json::object{});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("error"), nullptr);
  EXPECT_EQ(env->at("page"), nullptr);
  EXPECT_EQ(env->at("_meta").at("strict"), false);
  EXPECT_TRUE(run_envelope_conformance(env.value(), Tier::kStandard).ok);
}

TEST(LafsEnvelope, PageModes) {
  auto cursor = sample().page(Page::cursor_page(std::nullopt, false)).success(json::array{});
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(cursor->at("page").at("nextCursor"), nullptr);
  auto none = sample().page(Page::none()).success(json::array{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->at("page").as_object().size(), 1u);
  EXPECT_TRUE(run_envelope_conformance(cursor.value()).ok);
  EXPECT_TRUE(run_envelope_conformance(none.value()).ok);
}

TEST(LafsEnvelope, ExtensionsNeedThePrefix) {
  Builder b = sample();
  EXPECT_TRUE(b.extension("x-hearth-trace", "abc").ok());
  auto bad = b.extension("trace", "abc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().data.at("lafs").at("code"), "E_VALIDATION_SCHEMA");
  auto env = b.success(nullptr);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("_extensions"), (json::object{{"x-hearth-trace", "abc"}}));
}

TEST(LafsEnvelope, FillsTimestampAndRequestId) {
  auto env = Builder("op").success(nullptr);
  ASSERT_TRUE(env.ok());
  const auto& meta = env->at("_meta").as_object();
  EXPECT_GE(meta.at("requestId").as_string().size(), 3u);
  EXPECT_TRUE(envelope_schema_valid(env.value()));
  EXPECT_EQ(meta.at("mvi"), "standard");
  EXPECT_EQ(meta.at("specVersion"), "1.0.0");
}

TEST(LafsEnvelope, RefusesToBuildAnInvalidEnvelope) {
  auto env = Builder("").request_id("r").success(nullptr);  // empty operation, 1-char request id
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().data.at("lafs").at("code"), "E_INTERNAL_UNEXPECTED");
}

TEST(LafsEnvelope, RoundTrip) {
  Builder b = sample();
  b.session_id("s-1")
      .context_version(3)
      .mvi(Mvi::kFull)
      .warning(Warning{"DEPRECATED_FIELD", "old", {{"removeBy", "2.0.0"}}});
  ErrorInfo e = ErrorInfo::from_registry(kRateLimited, "slow down");
  e.retry_after_ms = 1000;
  e.suggested_action = "wait a second";
  auto env = b.page(Page::cursor_page("abc", true, 10)).failure(e);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto back = from_json(env.value());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(json::value(to_json(back.value())), json::value(env.value()));
  EXPECT_EQ(back->meta.context_version, 3u);
  EXPECT_EQ(back->error->retry_after_ms, 1000);
  EXPECT_FALSE(from_json(json::value(json::object{{"success", true}})).ok());
}

TEST(LafsEnvelope, MessagesAreKeptWithinTheSchemaLimit) {
  auto e = ErrorInfo::from_registry(kInternalUnexpected, std::string(5000, 'x'));
  EXPECT_EQ(e.message.size(), 1024u);
  auto env = sample().failure(e);
  EXPECT_TRUE(env.ok());
  EXPECT_EQ(ErrorInfo::from_registry(kInternalUnexpected, "").message,
            "Unexpected internal failure");
}

TEST(LafsEnvelope, NowIsRfc3339) {
  auto env = Builder("op").timestamp(now_rfc3339()).success(nullptr);
  EXPECT_TRUE(env.ok());
}

}  // namespace
}  // namespace hearth::lafs
