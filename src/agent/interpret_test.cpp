#include "agent/interpret.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

namespace hearth::agent {
namespace {

const std::vector<std::string> kTools{"execute_script", "attempt_completion"};

Reply text(std::string content) {
  Reply r;
  r.content = std::move(content);
  return r;
}

json::value args_of(const ToolCall& c) {
  auto v = json::parse_text(c.arguments);
  EXPECT_TRUE(v.ok()) << c.arguments;
  return v.ok() ? v.value() : json::value();
}

TEST(AgentInterpret, StructuredCallsAreTakenAsTheyAre) {
  Reply r = text("I will look.");
  r.tool_calls.push_back({"c1", "execute_script", R"({"script":"x=1"})", ""});
  r.finish_reason = "stop";  // some servers say stop with tool calls present
  auto i = interpret(r, kTools);
  EXPECT_EQ(i.format, "tool_calls");
  ASSERT_EQ(i.calls.size(), 1u);
  EXPECT_EQ(i.calls[0].id, "c1");
  EXPECT_EQ(i.text, "I will look.");
}

TEST(AgentInterpret, HermesAndQwenToolCallTags) {
  auto i = interpret(text("Let me search.\n<tool_call>\n{\"name\": \"execute_script\", "
                          "\"arguments\": {\"script\": \"a = 1\"}}\n</tool_call>\n"
                          "<tool_call>{\"name\": \"attempt_completion\", \"arguments\": "
                          "{\"result\": \"done\"}}</tool_call>"),
                     kTools);
  EXPECT_EQ(i.format, "hermes");
  ASSERT_EQ(i.calls.size(), 2u);
  EXPECT_EQ(i.calls[0].name, "execute_script");
  EXPECT_EQ(args_of(i.calls[0]).at("script"), "a = 1");
  EXPECT_EQ(i.calls[1].name, "attempt_completion");
  // Ids every server takes (Mistral's templates want nine letters and digits), all different.
  for (const auto& c : i.calls) {
    EXPECT_EQ(c.id.size(), 9u);
    EXPECT_TRUE(std::all_of(c.id.begin(), c.id.end(), [](char ch) { return std::isalnum(ch); }));
  }
  EXPECT_NE(i.calls[0].id, i.calls[1].id);
  EXPECT_EQ(i.text, "Let me search.");
}

TEST(AgentInterpret, AnUnclosedOrUnreadableTagIsStillACallWithItsProblem) {
  auto i = interpret(text("<tool_call>{\"name\": \"execute_script\", \"arguments\": {\"script\""),
                     kTools);
  ASSERT_EQ(i.calls.size(), 1u);
  EXPECT_FALSE(i.calls[0].problem.empty());
}

TEST(AgentInterpret, MistralInBothItsForms) {
  auto a = interpret(
      text(
          R"([TOOL_CALLS] [{"name": "execute_script", "arguments": {"script": "b = 2"}, "id": "abcdefghi"}])"),
      kTools);
  EXPECT_EQ(a.format, "mistral");
  ASSERT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(a.calls[0].id, "abcdefghi");
  EXPECT_EQ(args_of(a.calls[0]).at("script"), "b = 2");
  auto b = interpret(
      text(
          R"([TOOL_CALLS]execute_script[ARGS]{"script": "c = 3"}[TOOL_CALLS]attempt_completion[ARGS]{"result": "ok"})"),
      kTools);
  ASSERT_EQ(b.calls.size(), 2u);
  EXPECT_EQ(b.calls[0].name, "execute_script");
  EXPECT_EQ(b.calls[1].name, "attempt_completion");
  EXPECT_EQ(args_of(b.calls[1]).at("result"), "ok");
}

TEST(AgentInterpret, LlamaBareJsonPythonTagAndFunctionTags) {
  auto a =
      interpret(text(R"({"name": "execute_script", "parameters": {"script": "d = 4"}})"), kTools);
  EXPECT_EQ(a.format, "json");
  ASSERT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(args_of(a.calls[0]).at("script"), "d = 4");
  auto b = interpret(
      text("<|python_tag|>{\"name\": \"execute_script\", \"parameters\": {\"script\": \"e\"}}; "
           "{\"name\": \"attempt_completion\", \"parameters\": {\"result\": \"r\"}}"),
      kTools);
  EXPECT_EQ(b.format, "llama");
  ASSERT_EQ(b.calls.size(), 2u);
  auto c = interpret(text(R"(<function=execute_script>{"script": "f = 6"}</function>)"), kTools);
  EXPECT_EQ(c.format, "function-tag");
  ASSERT_EQ(c.calls.size(), 1u);
  EXPECT_EQ(args_of(c.calls[0]).at("script"), "f = 6");
  auto d = interpret(
      text("```json\n{\"name\": \"attempt_completion\", \"arguments\": {\"result\": \"x\"}}\n```"),
      kTools);
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "attempt_completion");
}

TEST(AgentInterpret, PythonicGenericAndQwenXmlCalls) {
  auto a = interpret(
      text(
          R"([execute_script(script='x = "a"\n'), attempt_completion(result="done", n=2, ok=True, v=None, l=[1, 2.5], d={'k': 'v'})])"),
      kTools);
  EXPECT_EQ(a.format, "pythonic");
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(args_of(a.calls[0]).at("script"), "x = \"a\"\n");
  const auto second = args_of(a.calls[1]);
  EXPECT_EQ(second.at("result"), "done");
  EXPECT_EQ(second.at("n"), 2);
  EXPECT_EQ(second.at("ok"), true);
  EXPECT_TRUE(second.at("v").is_null());
  EXPECT_EQ(second.at("l"), (json::array{1, 2.5}));
  EXPECT_EQ(second.at("d").at("k"), "v");
  // A list that is not of offered tools is an answer.
  EXPECT_TRUE(interpret(text("[print(1)]"), kTools).calls.empty());
  auto b = interpret(
      text(
          R"({"tool_calls": [{"name": "execute_script", "arguments": {"script": "g"}, "id": "123456789"}]})"),
      kTools);
  EXPECT_EQ(b.format, "generic");
  ASSERT_EQ(b.calls.size(), 1u);
  EXPECT_EQ(b.calls[0].id, "123456789");
  auto c = interpret(text(R"({"response": "All done."})"), kTools);
  EXPECT_TRUE(c.calls.empty());
  EXPECT_EQ(c.text, "All done.");
  auto d = interpret(
      text("<tool_call>\n<function=execute_script>\n<parameter=script>\nq = 1;\n</parameter>\n"
           "<parameter=expectedVersion>\n3\n</parameter>\n</function>\n</tool_call>"),
      kTools);
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "execute_script");
  EXPECT_EQ(args_of(d.calls[0]).at("script"), "q = 1;");
  EXPECT_EQ(args_of(d.calls[0]).at("expectedVersion"), 3);
}

TEST(AgentInterpret, AnAnswerThatIsJsonStaysAnAnswer) {
  // A final result shaped like a call, naming no offered tool.
  auto i = interpret(text(R"({"name": "Green tea", "price": 3.5})"), kTools);
  EXPECT_TRUE(i.calls.empty());
  EXPECT_EQ(i.text, R"({"name": "Green tea", "price": 3.5})");
}

TEST(AgentInterpret, ReasoningIsKeptApart) {
  Reply r = text("<think>\nThe user wants tea.\n</think>\n\nThe cheapest tea is chamomile.");
  r.reasoning = "First I looked.";
  auto i = interpret(r, kTools);
  EXPECT_EQ(i.text, "The cheapest tea is chamomile.");
  EXPECT_EQ(i.reasoning, "First I looked.\nThe user wants tea.");
  // The template opened the section: only its end is in the text.
  auto j = interpret(text("thinking hard</think>Answer."), kTools);
  EXPECT_EQ(j.text, "Answer.");
  EXPECT_EQ(j.reasoning, "thinking hard");
  // Cut short while thinking.
  auto k = interpret(text("<think>still going"), kTools);
  EXPECT_EQ(k.text, "");
  EXPECT_EQ(k.reasoning, "still going");
  // A call after the thought.
  auto l = interpret(text("<think>use the tool</think><tool_call>{\"name\":\"execute_script\","
                          "\"arguments\":{\"script\":\"x\"}}</tool_call>"),
                     kTools);
  ASSERT_EQ(l.calls.size(), 1u);
  EXPECT_EQ(l.reasoning, "use the tool");
}

TEST(AgentInterpret, JsonInTextFindsTheAnswer) {
  EXPECT_EQ(*json_in_text(R"( {"a": 1} )"), (json::object{{"a", 1}}));
  EXPECT_EQ(*json_in_text("Here you are:\n```json\n{\"a\": 2}\n```\nBye."),
            (json::object{{"a", 2}}));
  EXPECT_EQ(*json_in_text("The result is {\"a\": [3, \"}\"]} as asked."),
            (json::object{{"a", json::array{3, "}"}}}));
  EXPECT_FALSE(json_in_text("no json here").has_value());
}

TEST(AgentInterpret, ArgumentProblemsSayWhatIsWrong) {
  EXPECT_EQ(arguments_problem("execute_script", R"({"script": "x"})"), "");
  EXPECT_EQ(arguments_problem("execute_script", ""), "");
  const auto bad = arguments_problem("execute_script", R"({"script": "x)");
  EXPECT_NE(bad.find("not valid JSON"), std::string::npos);
  EXPECT_NE(bad.find("execute_script"), std::string::npos);
  EXPECT_NE(arguments_problem("x", "[1]").find("must be a JSON object"), std::string::npos);
}

TEST(AgentInterpret, WithoutToolSupportTheConversationIsPlainChat) {
  json::array tools{
      json::object{{"type", "function"},
                   {"function", json::object{{"name", "execute_script"},
                                             {"description", "Run a script"},
                                             {"parameters", json::object{{"type", "object"}}}}}}};
  json::array messages{
      json::object{{"role", "system"}, {"content", "You work."}},
      json::object{{"role", "user"}, {"content", "task"}},
      json::object{
          {"role", "assistant"},
          {"content", "Looking."},
          {"tool_calls", json::array{json::object{
                             {"id", "c1"},
                             {"type", "function"},
                             {"function", json::object{{"name", "execute_script"},
                                                       {"arguments", R"({"script":"x=1"})"}}}}}}},
      json::object{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "ok"}},
      json::object{{"role", "user"}, {"content", "go on"}}};
  auto out = to_prompt_format(messages, tools);
  ASSERT_EQ(out.size(), 4u);  // the tool result and the next user message are one message
  const std::string system(out[0].at("content").as_string());
  EXPECT_NE(system.find("<tool_call>"), std::string::npos);
  EXPECT_NE(system.find("## execute_script"), std::string::npos);
  EXPECT_NE(system.find("Run a script"), std::string::npos);
  const std::string assistant(out[2].at("content").as_string());
  EXPECT_FALSE(out[2].as_object().contains("tool_calls"));
  // What the model wrote, read back, is the same call.
  Reply again;
  again.content = assistant;
  auto i = interpret(again, kTools);
  ASSERT_EQ(i.calls.size(), 1u);
  EXPECT_EQ(args_of(i.calls[0]).at("script"), "x=1");
  EXPECT_EQ(i.text, "Looking.");
  EXPECT_EQ(out[3].at("role"), "user");
  const std::string user(out[3].at("content").as_string());
  EXPECT_NE(user.find("<tool_response>\nok\n</tool_response>"), std::string::npos);
  EXPECT_NE(user.find("go on"), std::string::npos);
  for (const auto& m : out) EXPECT_NE(m.at("role"), "tool");
}

TEST(AgentInterpret, StreamedThinkSectionsAreHeldBackAcrossDeltas) {
  ThinkFilter f;
  std::string shown;
  for (const char* d : {"Hi <th", "ink>secret ", "thoughts</thi", "nk> there", " <", "b>ok"}) {
    shown += f.feed(d);
  }
  EXPECT_EQ(shown, "Hi  there <b>ok");
}

TEST(AgentInterpret, PythonicArgumentsNestNoDeeperThanJson) {
  // A model's text may be 8 MiB of brackets: read as far as JSON is (64 levels), then it is
  // text, not a call; never a recursion as deep as the text.
  const std::string deep =
      "[attempt_completion(result=" + std::string(1 << 20, '[') + std::string(1 << 20, ']') + ")]";
  auto i = interpret(text(deep), kTools);
  EXPECT_TRUE(i.calls.empty());
  const std::string fits =
      "[attempt_completion(result=" + std::string(10, '[') + std::string(10, ']') + ")]";
  EXPECT_EQ(interpret(text(fits), kTools).calls.size(), 1U);
}

TEST(AgentInterpret, ManyThinkSectionsAreReadInOnePass) {
  // 100,000 sections in 1.7 MB (a model's answer may hold 8 MiB): each search for a tag reads
  // up to the next one, not to the end of the text for every kind of tag, so this is quick
  // whole or streamed.
  std::string text;
  std::string answer;
  for (int i = 0; i < 100000; ++i) {
    text += "<think>x</think>y";
    answer += 'y';
  }
  auto [shown, thought] = split_reasoning(text);
  EXPECT_EQ(shown, answer);
  EXPECT_EQ(thought.size(), 2U * 100000 - 1);  // "x" joined by line ends
  ThinkFilter f;
  std::string streamed;
  for (std::size_t at = 0; at < text.size(); at += 65536) {
    streamed += f.feed(std::string_view(text).substr(at, 65536));
  }
  EXPECT_EQ(streamed, answer);
}

}  // namespace
}  // namespace hearth::agent
