#include "agent/model.hpp"

#include <gtest/gtest.h>

namespace hearth::agent {
namespace {

TEST(AgentModel, ReadsAPlainCompletionWithToolCalls) {
  auto reply = parse_completion(R"({"id":"x","object":"chat.completion","choices":[{"index":0,
    "message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"execute_script","arguments":"{\"script\":\"a = 1\"}"}}]},
    "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5}})");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->finish_reason, "tool_calls");
  ASSERT_EQ(reply->tool_calls.size(), 1u);
  EXPECT_EQ(reply->tool_calls[0].id, "call_1");
  EXPECT_EQ(reply->tool_calls[0].name, "execute_script");
  EXPECT_EQ(reply->tool_calls[0].arguments, R"({"script":"a = 1"})");
  const auto message = reply->message();
  EXPECT_TRUE(message.at("content").is_null());
  EXPECT_EQ(message.at("tool_calls").as_array()[0].at("function").at("name"), "execute_script");
}

TEST(AgentModel, ArgumentsGivenAsAnObjectAreKeptAsText) {
  // Some servers (Ollama's native shape) send arguments as an object.
  auto reply = parse_completion(R"({"choices":[{"message":{"role":"assistant","content":"",
    "tool_calls":[{"id":"c","function":{"name":"attempt_completion","arguments":{"result":"ok"}}}]}}]})");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->tool_calls[0].arguments, R"({"result":"ok"})");
}

TEST(AgentModel, RefusesWhatIsNotACompletion) {
  EXPECT_FALSE(parse_completion("not json").ok());
  EXPECT_FALSE(parse_completion(R"({"choices":[]})").ok());
  EXPECT_FALSE(parse_completion(R"({"choices":[{"text":"legacy"}]})").ok());
}

TEST(AgentModel, StreamedChunksAccumulateTextAndToolCalls) {
  StreamAccumulator acc;
  std::string text;
  for (
      const char* chunk :
      {R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]})",
       R"({"choices":[{"index":0,"delta":{"content":"look."}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"execute_","arguments":""}}]}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"script","arguments":"{\"scr"}}]}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ipt\":\"x=1\"}"}}]}}]})",
       R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
       R"({"choices":[],"usage":{"total_tokens":12}})"}) {
    auto added = acc.add(chunk);
    ASSERT_TRUE(added.ok()) << added.error().message;
    text += added.value();
  }
  EXPECT_EQ(text, "Let me look.");
  const Reply reply = acc.take();
  EXPECT_EQ(reply.content, "Let me look.");
  EXPECT_EQ(reply.finish_reason, "tool_calls");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0].id, "call_9");
  EXPECT_EQ(reply.tool_calls[0].name, "execute_script");
  EXPECT_EQ(reply.tool_calls[0].arguments, R"({"script":"x=1"})");
  EXPECT_EQ(reply.usage.at("total_tokens"), 12);
}

TEST(AgentModel, AStreamedErrorIsAnError) {
  StreamAccumulator acc;
  EXPECT_FALSE(acc.add(R"({"error":{"message":"overloaded"}})").ok());
  EXPECT_FALSE(acc.add("{").ok());
}

TEST(AgentModel, ReasoningComesApartUnderEachName) {
  for (const char* field : {"reasoning_content", "reasoning", "thinking"}) {
    auto plain = parse_completion(std::string(R"({"choices":[{"message":{"role":"assistant",)") +
                                  "\"" + field + R"(":"hmm","content":"Answer."}}]})");
    ASSERT_TRUE(plain.ok()) << field;
    EXPECT_EQ(plain->reasoning, "hmm") << field;
    EXPECT_EQ(plain->content, "Answer.");
    StreamAccumulator acc;
    std::string shown;
    for (const std::string& chunk :
         {std::string(R"({"choices":[{"delta":{")") + field + R"(":"first "}}]})",
          std::string(R"({"choices":[{"delta":{")") + field + R"(":"second"}}]})",
          std::string(R"({"choices":[{"delta":{"content":"Done."}}]})")}) {
      auto added = acc.add(chunk);
      ASSERT_TRUE(added.ok());
      shown += added.value();
    }
    EXPECT_EQ(shown, "Done.");  // reasoning is not streamed as the answer
    const auto reply = acc.take();
    EXPECT_EQ(reply.reasoning, "first second");
    EXPECT_EQ(reply.content, "Done.");
  }
}

TEST(AgentModel, TheLegacyFunctionCallIsACall) {
  auto reply = parse_completion(R"({"choices":[{"message":{"role":"assistant","content":null,
    "function_call":{"name":"attempt_completion","arguments":"{\"result\":\"ok\"}"}}}]})");
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->tool_calls.size(), 1u);
  EXPECT_EQ(reply->tool_calls[0].name, "attempt_completion");
}

TEST(AgentModel, StreamedCallsInTheShapesServersSend) {
  // Every call numbered 0, told apart by id; a name repeated in each delta; arguments given
  // whole as an object (Ollama); a continuation with no index.
  StreamAccumulator acc;
  for (
      const char* chunk :
      {R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"execute_script","arguments":"{\"script\":"}}]}}]})",
       R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"execute_script","arguments":"\"x\"}"}}]}}]})",
       R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"attempt_completion","arguments":{"result":"ok"}}}]}}]})",
       R"({"choices":[{"delta":{"tool_calls":[{"id":"c","function":{"name":"execute_script","arguments":"{\"scr"}}]}}]})",
       R"({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"ipt\":\"y\"}"}}]}}]})",
       R"({"choices":[{"delta":{},"finish_reason":"stop"}]})"}) {
    auto added = acc.add(chunk);
    ASSERT_TRUE(added.ok()) << added.error().message;
  }
  const auto reply = acc.take();
  ASSERT_EQ(reply.tool_calls.size(), 3u);
  EXPECT_EQ(reply.tool_calls[0].id, "a");
  EXPECT_EQ(reply.tool_calls[0].name, "execute_script");
  EXPECT_EQ(reply.tool_calls[0].arguments, R"({"script":"x"})");
  EXPECT_EQ(reply.tool_calls[1].id, "b");
  EXPECT_EQ(reply.tool_calls[1].arguments, R"({"result":"ok"})");
  EXPECT_EQ(reply.tool_calls[2].arguments, R"({"script":"y"})");
  EXPECT_EQ(reply.finish_reason, "stop");
}

TEST(AgentModel, AStreamPastItsLimitFails) {
  StreamAccumulator acc(10);
  EXPECT_TRUE(acc.add(R"({"choices":[{"delta":{"content":"12345"}}]})").ok());
  auto past = acc.add(R"({"choices":[{"delta":{"content":"678901"}}]})");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message.find("passed the limit"), std::string::npos);
}

TEST(AgentModel, RetryAfter) {
  EXPECT_EQ(parse_retry_after("2")->count(), 2000);
  EXPECT_EQ(parse_retry_after(" 0.5 ")->count(), 500);
  EXPECT_FALSE(parse_retry_after("soon"));
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")->count(), 0);  // in the past
}

}  // namespace
}  // namespace hearth::agent
