#include "a2a/protocol.hpp"

#include <gtest/gtest.h>

namespace hearth::a2a {
namespace {

json::value parse(std::string_view text) {
  return json::parse_text(text).value();
}

TEST(Version, HeaderValuesAreMajorMinorAndEmptyIsThePreviousVersion) {
  EXPECT_EQ(parse_version(""), Version::k03);
  EXPECT_EQ(parse_version(" "), Version::k03);
  EXPECT_EQ(parse_version("0.3"), Version::k03);
  EXPECT_EQ(parse_version("0.3.0"), Version::k03);
  EXPECT_EQ(parse_version("1.0"), Version::k10);
  EXPECT_EQ(parse_version(" 1.0.1 "), Version::k10);
  EXPECT_EQ(parse_version("1"), Version::k10);
  for (const char* other :
       {"2.0", "0.2", "1.1", "abc", "1.0.x", "1..0", ".1", "1.0.0.0", "-1.0", "1000000.0"}) {
    EXPECT_EQ(parse_version(other), std::nullopt) << other;
  }
}

TEST(Version, TheCardIsTheOldOneOnlyForNoVersionOrOneBelowOnePointZero) {
  EXPECT_EQ(card_version(""), Version::k03);
  EXPECT_EQ(card_version("0.3"), Version::k03);
  EXPECT_EQ(card_version("0.9"), Version::k03);
  EXPECT_EQ(card_version("1.0"), Version::k10);
  EXPECT_EQ(card_version("2.0"), Version::k10);
  EXPECT_EQ(card_version("0.2"), Version::k10);
  EXPECT_EQ(card_version("junk"), Version::k10);
}

TEST(TaskStates, AreSpelledPerVersion) {
  EXPECT_EQ(state_name(TaskState::kCompleted, Version::k10), "TASK_STATE_COMPLETED");
  EXPECT_EQ(state_name(TaskState::kInputRequired, Version::k03), "input-required");
  EXPECT_EQ(state_from_name("TASK_STATE_WORKING"), TaskState::kWorking);
  EXPECT_EQ(state_from_name("working"), std::nullopt);
  EXPECT_EQ(state_from_name("TASK_STATE_UNSPECIFIED"), std::nullopt);
  EXPECT_TRUE(terminal(TaskState::kRejected));
  EXPECT_FALSE(terminal(TaskState::kInputRequired));
}

TEST(Errors, OnePointZeroDataIsAnArrayOfTypedDetails) {
  const Error e = a2a_error(A2aCode::kTaskNotFound, "Task not found: x",
                            json::object{{"taskId", "x"}, {"n", 3}});
  EXPECT_EQ(json::value(error_object(e, Version::k03)),
            parse(R"({"code":-32001,"message":"Task not found: x","data":{"taskId":"x","n":3}})"));
  EXPECT_EQ(json::value(error_object(e, Version::k10)), parse(R"({"code":-32001,
    "message":"Task not found: x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",
    "reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"x","n":"3"}}]})"));
  // An A2A error always names its reason, metadata or not.
  auto bare = error_object(a2a_error(A2aCode::kVersionNotSupported, "no"), Version::k10);
  EXPECT_EQ(bare["data"].at(0).at("reason"), "VERSION_NOT_SUPPORTED");
  EXPECT_FALSE(bare["data"].at(0).as_object().contains("metadata"));
}

TEST(Errors, InvalidParamsBecomeABadRequestAndOtherDataAStruct) {
  const Error params = Error::make(ErrorCode::kInvalidParams, "Invalid params: 'id' is required",
                                   json::object{{"field", "id"}, {"constraint", "required"}});
  auto out = error_object(params, Version::k10);
  EXPECT_EQ(out["data"], parse(R"([
    {"@type":"type.googleapis.com/google.rpc.BadRequest",
     "fieldViolations":[{"field":"id","description":"Invalid params: 'id' is required"}]},
    {"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS",
     "domain":"a2a-protocol.org","metadata":{"field":"id","constraint":"required"}}])"));
  auto other = error_object(Error::make(ErrorCode::kInternalError, "x", json::object{{"a", 1}}),
                            Version::k10);
  EXPECT_EQ(other["data"], parse(R"([{"@type":"type.googleapis.com/google.protobuf.Struct",
    "value":{"a":1}}])"));
  EXPECT_FALSE(
      error_object(Error::make(ErrorCode::kMethodNotFound, "x"), Version::k10).contains("data"));
}

TEST(Errors, ShapeErrorsRewritesEveryErrorOfABatchAndLeavesResults) {
  auto answer = parse(R"([{"jsonrpc":"2.0","id":1,"result":{"x":1}},
    {"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"m","data":{"taskId":"t"}}}])");
  auto same = answer;
  shape_errors(same, Version::k03);
  EXPECT_EQ(same, answer);
  shape_errors(answer, Version::k10);
  EXPECT_EQ(answer.at(0).at("result"), parse(R"({"x":1})"));
  EXPECT_EQ(answer.at(1).at("error").at("data").at(0).at("metadata"), parse(R"({"taskId":"t"})"));
}

TEST(Errors, RestErrorsCarryTheSpecsHttpStatusAndAGoogleRpcStatus) {
  auto nf = rest_error(a2a_error(A2aCode::kTaskNotFound, "gone", json::object{{"taskId", "t"}}));
  EXPECT_EQ(nf.http_status, 404);
  EXPECT_EQ(nf.body["error"].at("status"), "NOT_FOUND");
  EXPECT_EQ(nf.body["error"].at("code"), 404);
  EXPECT_EQ(nf.body["error"].at("details").at(0).at("reason"), "TASK_NOT_FOUND");
  EXPECT_EQ(rest_error(a2a_error(A2aCode::kTaskNotCancelable, "no")).http_status, 400);
  EXPECT_EQ(rest_error(a2a_error(A2aCode::kVersionNotSupported, "no")).body["error"].at("status"),
            "FAILED_PRECONDITION");
  EXPECT_EQ(rest_error(Error::make(ErrorCode::kInvalidParams, "bad")).http_status, 400);
  EXPECT_EQ(rest_error(Error::make(ErrorCode::kInternalError, "oops")).http_status, 500);
}

TEST(Messages, AnOldMessageIsReadIntoTheNewForm) {
  auto m = read_message(parse(R"({"kind":"message","role":"user","messageId":"m1",
    "contextId":"c","metadata":{"skillId":"s"},"parts":[
      {"kind":"text","text":"hi"},
      {"kind":"file","file":{"uri":"https://x/y.png","mimeType":"image/png","name":"y.png"}},
      {"kind":"file","file":{"bytes":"AAE="}},
      {"kind":"data","data":{"a":1},"metadata":{"k":"v"}},
      {"kind":"data","data":{"value":[1,2]},"metadata":{"data_part_compat":true}}]})"),
                        Version::k03);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(json::value(m.value()), parse(R"({"messageId":"m1","contextId":"c","role":"ROLE_USER",
    "parts":[{"text":"hi"},{"url":"https://x/y.png","mediaType":"image/png","filename":"y.png"},
      {"raw":"AAE="},{"metadata":{"k":"v"},"data":{"a":1}},{"data":[1,2]}],
    "metadata":{"skillId":"s"}})"));
}

TEST(Messages, ANewMessageIsCheckedAndKeptAsItIs) {
  auto m = read_message(
      parse(R"({"role":"ROLE_USER","messageId":"m","parts":[{"data":[1]},{"text":"t"}]})"),
      Version::k10);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m.value()["parts"], parse(R"([{"data":[1]},{"text":"t"}])"));
}

TEST(Messages, TheWrongVersionsSpellingIsRefusedWithTheHeaderToSend) {
  auto old_role = read_message(parse(R"({"role":"user","parts":[{"text":"x"}]})"), Version::k10);
  ASSERT_FALSE(old_role.ok());
  EXPECT_EQ(old_role.error().code, ErrorCode::kInvalidParams);
  EXPECT_NE(old_role.error().message.find("0.3"), std::string::npos);
  auto new_role = read_message(
      parse(R"({"role":"ROLE_USER","parts":[{"kind":"text","text":"x"}]})"), Version::k03);
  ASSERT_FALSE(new_role.ok());
  EXPECT_NE(new_role.error().message.find("A2A-Version: 1.0"), std::string::npos);
  auto old_part = read_message(
      parse(R"({"role":"ROLE_USER","parts":[{"kind":"text","text":"x"}]})"), Version::k10);
  ASSERT_FALSE(old_part.ok());
  EXPECT_EQ(old_part.error().data.at("field"), "message.parts[0]");
}

TEST(Messages, MalformedOnesNameTheirField) {
  struct Case {
    const char* message;
    Version v;
    const char* field;
  };
  for (const auto& c : std::initializer_list<Case>{
           {R"("text")", Version::k10, "message"},
           {R"({"role":"ROLE_USER"})", Version::k10, "message.parts"},
           {R"({"role":"ROLE_USER","parts":[]})", Version::k10, "message.parts"},
           {R"({"role":"ROLE_AGENT","parts":[{"text":"x"}]})", Version::k10, "message.role"},
           {R"({"role":"ROLE_USER","parts":[{"text":"x","data":{}}]})", Version::k10,
            "message.parts[0]"},
           {R"({"role":"ROLE_USER","parts":[{}]})", Version::k10, "message.parts[0]"},
           {R"({"role":"ROLE_USER","parts":[{"text":1}]})", Version::k10, "message.parts[0].text"},
           {R"({"role":"ROLE_USER","parts":[{"text":"x"}],"taskId":5})", Version::k10,
            "message.taskId"},
           {R"({"role":"user","parts":[{"kind":"file","file":{}}]})", Version::k03,
            "message.parts[0].file"},
           {R"({"role":"user","parts":[{"kind":"image"}]})", Version::k03, "message.parts[0].kind"},
       }) {
    auto m = read_message(parse(c.message), c.v);
    ASSERT_FALSE(m.ok()) << c.message;
    EXPECT_EQ(m.error().code, ErrorCode::kInvalidParams) << c.message;
    EXPECT_EQ(m.error().data.at("field"), c.field) << c.message;
  }
}

TEST(Messages, PartsAreWrittenInTheOldFormWithNonObjectDataWrapped) {
  EXPECT_EQ(json::value(part_in(parse(R"({"text":"a"})"), Version::k03)),
            parse(R"({"kind":"text","text":"a"})"));
  EXPECT_EQ(
      json::value(part_in(parse(R"({"url":"u","mediaType":"m","filename":"f"})"), Version::k03)),
      parse(R"({"kind":"file","file":{"uri":"u","mimeType":"m","name":"f"}})"));
  EXPECT_EQ(json::value(part_in(parse(R"({"data":{"a":1}})"), Version::k03)),
            parse(R"({"kind":"data","data":{"a":1}})"));
  EXPECT_EQ(json::value(part_in(parse(R"({"data":3})"), Version::k03)),
            parse(R"({"kind":"data","data":{"value":3},"metadata":{"data_part_compat":true}})"));
  EXPECT_EQ(json::value(part_in(parse(R"({"data":3})"), Version::k10)), parse(R"({"data":3})"));
}

TaskRecord sample_task() {
  TaskRecord t;
  t.id = "t1";
  t.context_id = "c1";
  t.state = TaskState::kCompleted;
  t.timestamp = "2025-01-02T03:04:05.006Z";
  t.history.push_back(parse(R"({"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a":1}}]})"));
  t.history.push_back(json::value(agent_message("done", nullptr, "t1", "c1")));
  t.status_message = t.history.back();
  t.artifacts.push_back(parse(R"({"artifactId":"a1","name":"s","parts":[{"data":{"x":1}}]})"));
  return t;
}

TEST(Tasks, TheNewFormHasEnumNamesNoKindAndLeavesAnEmptyHistoryOut) {
  const auto t = sample_task();
  auto v10 = task_in(t, Version::k10);
  EXPECT_FALSE(v10.contains("kind"));
  EXPECT_EQ(v10["status"].at("state"), "TASK_STATE_COMPLETED");
  EXPECT_EQ(v10["status"].at("message").at("role"), "ROLE_AGENT");
  EXPECT_EQ(v10["history"].as_array().size(), 2u);
  EXPECT_EQ(v10["artifacts"].at(0).at("parts").at(0), parse(R"({"data":{"x":1}})"));
  auto none = task_in(t, Version::k10, TaskShape{.history_length = 0, .artifacts = false});
  EXPECT_FALSE(none.contains("history"));
  EXPECT_FALSE(none.contains("artifacts"));
  auto last = task_in(t, Version::k10, TaskShape{.history_length = 1});
  EXPECT_EQ(last["history"].at(0).at("role"), "ROLE_AGENT");
}

TEST(Tasks, TheOldFormHasKindsAndLowerCaseNames) {
  const auto t = sample_task();
  auto v03 = task_in(t, Version::k03, TaskShape{.history_length = 0});
  EXPECT_EQ(v03["kind"], "task");
  EXPECT_EQ(v03["status"].at("state"), "completed");
  EXPECT_EQ(v03["status"].at("message").at("kind"), "message");
  EXPECT_EQ(v03["status"].at("message").at("role"), "agent");
  EXPECT_EQ(v03["history"], json::array{});
  EXPECT_EQ(v03["artifacts"].at(0).at("parts").at(0), parse(R"({"kind":"data","data":{"x":1}})"));
}

TEST(Tasks, StreamEventsAreWrappedInOnePointZeroAndKindedInZeroPointThree) {
  auto t = sample_task();
  EXPECT_TRUE(task_event(t, Version::k10).contains("task"));
  EXPECT_EQ(task_event(t, Version::k03)["kind"], "task");
  auto s10 = status_event(t, Version::k10);
  EXPECT_EQ(s10["statusUpdate"].at("status").at("state"), "TASK_STATE_COMPLETED");
  EXPECT_FALSE(s10["statusUpdate"].as_object().contains("final"));
  auto s03 = status_event(t, Version::k03);
  EXPECT_EQ(s03["kind"], "status-update");
  EXPECT_EQ(s03["final"], true);
  t.state = TaskState::kWorking;
  EXPECT_EQ(status_event(t, Version::k03)["final"], false);
  const auto& artifact = t.artifacts.at(0).as_object();
  auto a10 = artifact_event(t, artifact, Version::k10);
  EXPECT_EQ(a10["artifactUpdate"].at("artifact").at("artifactId"), "a1");
  EXPECT_EQ(artifact_event(t, artifact, Version::k03)["kind"], "artifact-update");
}

TEST(Timestamps, AreWrittenInUtcWithMillisecondsAndReadWithOffsets) {
  const auto t = parse_timestamp("2025-10-28T10:30:00.123Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(iso_timestamp(*t), "2025-10-28T10:30:00.123Z");
  EXPECT_EQ(parse_timestamp("2025-10-28T10:30:00Z"), parse_timestamp("2025-10-28T12:30:00+02:00"));
  EXPECT_EQ(iso_timestamp(*parse_timestamp("2025-10-28T10:30:00.5-01:30")),
            "2025-10-28T12:00:00.500Z");
  // Beyond what the clock holds: the end of time, in order.
  EXPECT_EQ(parse_timestamp("2999-01-01T00:00:00Z"), std::chrono::system_clock::time_point::max());
  EXPECT_EQ(parse_timestamp("1000-01-01T00:00:00Z"), std::chrono::system_clock::time_point::min());
  for (const char* bad : {"", "2025-10-28", "2025-10-28T10:30:00", "2025-13-01T00:00:00Z",
                          "2025-10-28T10:30:00.Z", "2025-10-28T10:30:00Zx", "yesterday"}) {
    EXPECT_EQ(parse_timestamp(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace hearth::a2a
