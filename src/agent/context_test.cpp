#include "agent/context.hpp"

#include <gtest/gtest.h>

namespace hearth::agent {
namespace {

json::object assistant_call(const std::string& id, const std::string& arguments) {
  return json::object{
      {"role", "assistant"},
      {"content", nullptr},
      {"tool_calls",
       json::array{json::object{
           {"id", id},
           {"type", "function"},
           {"function", json::object{{"name", "execute_script"}, {"arguments", arguments}}}}}}};
}

json::object tool(const std::string& id, const std::string& content) {
  return json::object{{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}

std::size_t total(const json::array& messages) {
  std::size_t n = 0;
  for (const auto& m : messages) n += message_size(m);
  return n;
}

TEST(AgentContext, CapKeepsTheBeginningAndTheEndAndSaysWhatWasLeftOut) {
  EXPECT_EQ(cap_text("short", 100), "short");
  std::string text = "BEGIN" + std::string(10000, 'x') + "END";
  const std::string capped = cap_text(text, 1000);
  EXPECT_LE(capped.size(), 1000u);
  EXPECT_EQ(capped.substr(0, 5), "BEGIN");
  EXPECT_EQ(capped.substr(capped.size() - 3), "END");
  EXPECT_NE(capped.find("characters elided"), std::string::npos);
}

TEST(AgentContext, CapNeverSplitsAUtf8Character) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "é€";  // 2 and 3 bytes
  const std::string capped = cap_text(text, 777);
  // Every byte that starts a sequence is followed by the right number of continuation bytes.
  for (std::size_t i = 0; i < capped.size();) {
    const auto c = static_cast<unsigned char>(capped[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 0;
    ASSERT_NE(n, 0u) << "a continuation byte at " << i;
    i += n;
  }
}

TEST(AgentContext, WhatFitsIsSentAsItIs) {
  json::array messages{json::object{{"role", "system"}, {"content", "sys"}},
                       json::object{{"role", "user"}, {"content", "task"}},
                       assistant_call("a", R"({"script":"x=1"})"), tool("a", "ok")};
  FitReport report;
  EXPECT_EQ(fit(messages, 2, ContextBudget{}, &report), messages);
  EXPECT_EQ(report.elided, 0u);
  EXPECT_EQ(report.dropped, 0u);
}

TEST(AgentContext, OldToolResultsAreElidedFirstAndTheLatestExchangeIsKept) {
  json::array messages{json::object{{"role", "system"}, {"content", "sys"}},
                       json::object{{"role", "user"}, {"content", "task"}}};
  for (int i = 0; i < 30; ++i) {
    const std::string id = "c" + std::to_string(i);
    messages.push_back(assistant_call(id, R"({"script":")" + std::string(500, 's') + R"("})"));
    messages.push_back(tool(id, "RESULT " + std::to_string(i) + std::string(7000, 'r')));
  }
  ContextBudget budget{.max_chars = 20000, .max_message_chars = 8000};
  FitReport report;
  auto sent = fit(messages, 2, budget, &report);
  EXPECT_LE(report.chars, budget.max_chars);
  EXPECT_LE(total(sent), budget.max_chars + 200);
  EXPECT_GT(report.elided, 0u);
  // The head and the latest result are whole.
  EXPECT_EQ(sent[0], messages[0]);
  EXPECT_EQ(sent.back(), messages.back());
  EXPECT_EQ(sent[sent.size() - 2], messages[messages.size() - 2]);
  // Every tool message still follows an assistant message that called it.
  std::string last_call;
  for (const auto& m : sent) {
    const auto& o = m.as_object();
    if (o.at("role") == "assistant" && o.contains("tool_calls")) {
      last_call = o.at("tool_calls").as_array()[0].at("id").as_string().c_str();
      // Elided arguments stay a JSON object.
      auto args = json::parse_text(
          o.at("tool_calls").as_array()[0].at("function").at("arguments").as_string());
      ASSERT_TRUE(args.ok());
      EXPECT_TRUE(args->is_object());
    }
    if (o.at("role") == "tool") {
      EXPECT_EQ(o.at("tool_call_id").as_string(), last_call);
    }
  }
}

TEST(AgentContext, WhenNotesAreNotEnoughTheOldestExchangesAreLeftOutAndTheTaskSaysSo) {
  json::array messages{json::object{{"role", "system"}, {"content", "sys"}},
                       json::object{{"role", "user"}, {"content", "task"}}};
  for (int i = 0; i < 200; ++i) {
    const std::string id = "c" + std::to_string(i);
    messages.push_back(assistant_call(id, std::string(200, 'a')));
    messages.push_back(tool(id, std::string(200, 't')));
  }
  ContextBudget budget{.max_chars = 10000, .max_message_chars = 8000};
  FitReport report;
  auto sent = fit(messages, 2, budget, &report);
  EXPECT_GT(report.dropped, 0u);
  EXPECT_EQ(report.dropped % 2, 0u);  // exchanges left out whole
  EXPECT_LE(report.chars, budget.max_chars);
  EXPECT_LE(total(sent), budget.max_chars);
  EXPECT_NE(std::string(sent[1].at("content").as_string()).find("were left out"),
            std::string::npos);
  EXPECT_EQ(sent[2].at("role"), "assistant");
  EXPECT_EQ(sent.back(), messages.back());
  // The conversation itself is untouched.
  EXPECT_EQ(messages.size(), 402u);
  EXPECT_EQ(messages[1].at("content"), "task");
}

}  // namespace
}  // namespace hearth::agent
