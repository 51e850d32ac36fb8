#include "lafs/rpc_envelope.hpp"

#include <gtest/gtest.h>

#include "lafs/conformance.hpp"
#include "lafs/envelope.hpp"
#include "lafs/testing.hpp"

namespace hearth::lafs {
namespace {

using testing::parse;

RpcCall call(std::string transport = "http") {
  RpcCall c;
  c.operation = "todo-manager.listTodos";
  c.id = 7;
  c.transport = std::move(transport);
  c.session = 3;
  return c;
}

void expect_standard(const json::object& env) {
  auto report = run_envelope_conformance(env, Tier::kStandard);
  EXPECT_TRUE(report.ok) << to_text(report) << json::dump(env);
}

TEST(LafsRpcEnvelope, Params) {
  EXPECT_TRUE(wants_envelope(parse(R"({"_lafs":true})")));
  EXPECT_FALSE(wants_envelope(parse(R"({"_lafs":"yes"})")));
  EXPECT_FALSE(wants_envelope(parse(R"([true])")));
  EXPECT_FALSE(wants_envelope(nullptr));
  json::value params = parse(
      R"({"endpoint":"e","_lafs":true,"_fields":["id"],"_budget":{"maxItems":2},"input":{"_mvi":1}})");
  auto taken = take_lafs_params(params);
  EXPECT_EQ(params, parse(R"({"endpoint":"e","input":{"_mvi":1}})"));
  EXPECT_EQ(json::value(taken),
            parse(R"({"_lafs":true,"_fields":["id"],"_budget":{"maxItems":2}})"));
  EXPECT_TRUE(check_lafs_params(taken).ok());
  EXPECT_FALSE(check_lafs_params(parse(R"({"_fields":3})").as_object()).ok());
}

TEST(LafsRpcEnvelope, MetaFromTheCall) {
  EXPECT_EQ(lafs_transport("http"), "http");
  EXPECT_EQ(lafs_transport("ws"), "sdk");
  EXPECT_EQ(lafs_transport("inproc"), "cli");
  EXPECT_EQ(request_id_for(7), "rpc-7");
  EXPECT_EQ(request_id_for("abc"), "rpc-abc");
  EXPECT_EQ(request_id_for(json::value(std::string(300, 'x'))).size(), 128u);
  EXPECT_EQ(request_id_for(nullptr).substr(0, 4), "req_");
}

TEST(LafsRpcEnvelope, Success) {
  auto env = envelope_for_call(call(),
                               Result<json::value>(parse(R"({"todos":[{"id":1,"text":"milk"}]})")));
  expect_standard(env);
  EXPECT_EQ(env.at("success"), true);
  const auto& meta = env.at("_meta").as_object();
  EXPECT_EQ(meta.at("operation"), "todo-manager.listTodos");
  EXPECT_EQ(meta.at("requestId"), "rpc-7");
  EXPECT_EQ(meta.at("transport"), "http");
  EXPECT_FALSE(meta.contains("sessionId"));  // HTTP has no session to correlate
  auto ws = envelope_for_call(call("ws"), Result<json::value>(json::value("plain text output")));
  expect_standard(ws);
  EXPECT_EQ(ws.at("_meta").at("sessionId"), "ws-3");
  EXPECT_EQ(ws.at("result"), parse(R"({"value":"plain text output"})"));
}

TEST(LafsRpcEnvelope, EveryErrorCode) {
  for (auto code : {ErrorCode::kParseError, ErrorCode::kInvalidRequest, ErrorCode::kMethodNotFound,
                    ErrorCode::kInvalidParams, ErrorCode::kInternalError,
                    ErrorCode::kPermissionDenied, ErrorCode::kTimeout, ErrorCode::kHandlerError}) {
    for (auto transport : {"http", "ws", "inproc"}) {
      auto env = envelope_for_call(
          call(transport),
          Result<json::value>(Error::make(code, "it failed", json::object{{"exitCode", 4}})));
      expect_standard(env);
      EXPECT_EQ(env.at("success"), false);
      EXPECT_EQ(env.at("error").at("details").at("jsonrpcCode"), static_cast<int>(code));
      EXPECT_EQ(env.at("error").at("details").at("exitCode"), 4);
      EXPECT_EQ(env.at("error").at("message"), "it failed");
    }
  }
}

TEST(LafsRpcEnvelope, DisclosureApplies) {
  RpcCall c = call();
  c.disclosure = parse(R"({"_fields":["id"],"_mvi":"full"})").as_object();
  auto env =
      envelope_for_call(c, Result<json::value>(parse(R"({"todos":[{"id":1,"text":"milk"}]})")));
  expect_standard(env);
  EXPECT_EQ(env.at("result"), parse(R"({"todos":[{"id":1}]})"));
  EXPECT_EQ(env.at("_meta").at("mvi"), "custom");

  c.disclosure = parse(R"({"_expand":["owner"]})").as_object();
  auto unknown = envelope_for_call(c, Result<json::value>(parse(R"({"todos":[]})")));
  expect_standard(unknown);
  EXPECT_EQ(unknown.at("error").at("code"), "E_DISCLOSURE_UNKNOWN_FIELD");

  c.disclosure = parse(R"({"_budget":{"maxBytes":10}})").as_object();
  auto over = envelope_for_call(c, Result<json::value>(parse(R"({"todos":[]})")));
  expect_standard(over);
  EXPECT_EQ(over.at("error").at("code"), "E_MVI_BUDGET_EXCEEDED");
  EXPECT_EQ(over.at("error").at("retryable"), false);

  c.disclosure = parse(R"({"_mvi":"sideways"})").as_object();
  auto bad = envelope_for_call(c, Result<json::value>(parse(R"({})")));
  expect_standard(bad);
  EXPECT_EQ(bad.at("error").at("code"), "E_VALIDATION_SCHEMA");
}

TEST(LafsRpcEnvelope, LongOperationNamesAreCut) {
  RpcCall c = call();
  c.operation = std::string(300, 'o');
  auto env = envelope_for_call(c, Result<json::value>(json::value(nullptr)));
  expect_standard(env);
  c.operation.clear();
  EXPECT_EQ(
      envelope_for_call(c, Result<json::value>(json::value(nullptr))).at("_meta").at("operation"),
      "hearth.rpc");
}

}  // namespace
}  // namespace hearth::lafs
