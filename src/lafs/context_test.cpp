#include "lafs/context.hpp"

#include <gtest/gtest.h>

#include "lafs/conformance.hpp"
#include "lafs/envelope.hpp"
#include "lafs/testing.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {
namespace {

using testing::lafs_code;
using testing::parse;

Mutation step(std::uint64_t expected, std::string_view delta) {
  Mutation m;
  m.operation = "data.filter";
  m.request_id = "req_x";
  m.expected_version = expected;
  m.delta = parse(delta).as_object();
  m.timestamp = "2026-02-16T10:00:00Z";
  return m;
}

TEST(LafsContext, VersionsGoUpByOne) {
  ContextLedger ledger("ctx_1");
  EXPECT_EQ(ledger.version(), 0u);
  auto v1 =
      ledger.apply(step(0, R"({"objective":"analyse","constraints":[{"type":"date_range"}]})"));
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1.value(), 1u);
  auto v2 = ledger.apply(step(
      1,
      R"({"constraints":[{"type":"date_range"},{"type":"region"}],"state":{"phase":"filter"}})"));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2.value(), 2u);
  EXPECT_EQ(ledger.state().constraints.size(), 2u);
  EXPECT_EQ(ledger.state().objective, "analyse");
  EXPECT_EQ(ledger.state().state.at("phase"), "filter");
  EXPECT_TRUE(validate_context_ledger_schema(ledger.to_json()).empty());
}

TEST(LafsContext, StaleAndMissing) {
  ContextLedger ledger("ctx_1", 100, {"objective"});
  auto missing = ledger.apply(step(0, R"({"state":{}})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(lafs_code(missing.error()), "E_CONTEXT_MISSING");
  EXPECT_EQ(missing.error().data.at("lafs").at("details").at("missing"), parse(R"(["objective"])"));
  // The message names them too (it was built from a moved-from list, and said "[]").
  EXPECT_NE(missing.error().message.find("[\"objective\"]"), std::string::npos)
      << missing.error().message;
  Mutation no_version = step(0, R"({"objective":"x"})");
  no_version.expected_version.reset();
  EXPECT_EQ(lafs_code(ledger.apply(no_version).error()), "E_CONTEXT_MISSING");
  ASSERT_TRUE(ledger.apply(step(0, R"({"objective":"x"})")).ok());
  auto stale = ledger.apply(step(0, R"({"objective":"y"})"));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(lafs_code(stale.error()), "E_CONTEXT_STALE");
  EXPECT_EQ(ledger.version(), 1u);  // failures do not advance
  EXPECT_EQ(ledger.state().objective, "x");
  EXPECT_TRUE(ledger.check_current(1).ok());
  EXPECT_EQ(lafs_code(ledger.check_current(std::nullopt).error()), "E_CONTEXT_MISSING");
  EXPECT_EQ(lafs_code(ledger.check_current(5).error()), "E_CONTEXT_STALE");
}

TEST(LafsContext, ConstraintsAreNeverSilentlyDropped) {
  ContextLedger ledger("ctx_1");
  ASSERT_TRUE(ledger.apply(step(0, R"({"constraints":["a","b"]})")).ok());
  auto dropped = ledger.apply(step(1, R"({"constraints":["a"]})"));
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(lafs_code(dropped.error()), "E_CONTEXT_MISSING");
  EXPECT_EQ(dropped.error().data.at("lafs").at("details").at("missingConstraints"),
            parse(R"(["b"])"));
  EXPECT_EQ(ledger.state().constraints.size(), 2u);
  // Saying so is fine.
  ASSERT_TRUE(ledger.apply(step(1, R"({"constraints":["a"],"removedConstraints":["b"]})")).ok());
  EXPECT_EQ(ledger.state().constraints, parse(R"(["a"])").as_array());
  // A step that does not mention constraints keeps them.
  ASSERT_TRUE(ledger.apply(step(2, R"({"decisions":["d1"]})")).ok());
  EXPECT_EQ(ledger.state().constraints, parse(R"(["a"])").as_array());
  EXPECT_EQ(ledger.state().decisions, parse(R"(["d1"])").as_array());
  auto delta = ledger.project(LedgerProjection::kDelta, 1);
  EXPECT_EQ(delta.at("fromVersion"), 1);
  EXPECT_EQ(delta.at("toVersion"), 3);
  EXPECT_EQ(delta.at("entries").as_array().size(), 2u);
  EXPECT_EQ(delta.at("removedConstraints"), parse(R"(["b"])"));
  auto summary = ledger.project(LedgerProjection::kSummary);
  EXPECT_EQ(summary.at("entryCount"), 3);
  EXPECT_EQ(summary.at("checksum"), json::value(ledger.checksum()));
}

TEST(LafsContext, CompactionKeepsTheState) {
  ContextLedger ledger("ctx_1", 2);
  for (std::uint64_t v = 0; v < 5; ++v) {
    ASSERT_TRUE(ledger.apply(step(v, R"({"references":["r"]})")).ok());
  }
  EXPECT_EQ(ledger.entries().size(), 2u);
  EXPECT_EQ(ledger.state().references.size(), 5u);
  EXPECT_EQ(ledger.project(LedgerProjection::kSummary).at("entryCount"), 5);
}

TEST(LafsContext, ChecksumDependsOnTheEntries) {
  ContextLedger a("ctx"), b("ctx");
  ASSERT_TRUE(a.apply(step(0, R"({"x":1,"y":2})")).ok());
  ASSERT_TRUE(b.apply(step(0, R"({"y":2,"x":1})")).ok());
  EXPECT_EQ(a.checksum(), b.checksum());
  ASSERT_TRUE(b.apply(step(1, R"({"x":3})")).ok());
  EXPECT_NE(a.checksum(), b.checksum());
}

TEST(LafsContext, EnvelopeExtensionPassesTheRunner) {
  ContextLedger ledger("ctx_1");
  ASSERT_TRUE(ledger.apply(step(0, R"({"objective":"o"})")).ok());
  Builder b("orders.update");
  b.request_id("req_1").context_version(ledger.version());
  b.set_context_extension("contextLedger", ledger.envelope_extension(0, {}));
  auto env = b.success(json::object{{"updated", true}});
  ASSERT_TRUE(env.ok());
  auto report = run_envelope_conformance(env.value(), Tier::kComplete);
  EXPECT_TRUE(report.ok) << to_text(report);

  // A stale step's failure envelope, built the same way, also passes.
  auto stale = ledger.apply(step(0, R"({"objective":"p"})"));
  ASSERT_FALSE(stale.ok());
  Builder f("orders.update");
  f.request_id("req_2").context_version(ledger.version());
  f.set_context_extension("contextLedger", ledger.envelope_extension(ledger.version(), {}, true));
  auto fenv = f.failure(ErrorInfo::from_registry(kContextStale, stale.error().message));
  ASSERT_TRUE(fenv.ok());
  EXPECT_TRUE(run_envelope_conformance(fenv.value(), Tier::kComplete).ok);
}

}  // namespace
}  // namespace hearth::lafs
