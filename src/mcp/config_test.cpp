#include "mcp/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hearth::mcp {
namespace {

json::value parse_config_text(std::string_view text) {
  auto v = json::parse_text(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? std::move(v).value() : json::value();
}

std::string joined(const Problems& problems) {
  std::string out;
  for (const auto& p : problems) out += p.to_string() + "\n";
  return out;
}

TEST(McpConfig, StdioAndHttpServersInDocumentOrder) {
  Problems problems;
  auto config = parse_config(parse_config_text(R"({"mcpServers": {
      "files": {"command": "node", "args": ["server.js", "data"], "env": {"LOG": "1"}},
      "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"},
                 "type": "http"}}})"),
                             problems);
  ASSERT_TRUE(problems.empty()) << joined(problems);
  ASSERT_EQ(config.servers.size(), 2u);
  EXPECT_EQ(config.servers[0].name, "files");
  ASSERT_TRUE(config.servers[0].stdio());
  const auto& s = std::get<StdioServer>(config.servers[0].transport);
  EXPECT_EQ(s.command, "node");
  EXPECT_EQ(s.args, (std::vector<std::string>{"server.js", "data"}));
  ASSERT_EQ(s.env.size(), 1u);
  EXPECT_EQ(s.env[0].first, "LOG");
  EXPECT_EQ(s.cwd, ".");
  const auto& h = std::get<HttpServer>(config.servers[1].transport);
  EXPECT_EQ(h.url, "https://mcp.example.com/mcp");
  ASSERT_EQ(h.headers.size(), 1u);
  EXPECT_EQ(config.find("remote"), &config.servers[1]);
  EXPECT_EQ(config.find("nope"), nullptr);
  EXPECT_EQ(config.names(), "files, remote");
}

TEST(McpConfig, EveryProblemHasItsPath) {
  Problems problems;
  parse_config(parse_config_text(R"({"mcpServers": {
      "a": {"command": 3},
      "b": {"command": "x", "url": "http://h/"},
      "c": {},
      "d": {"url": "ftp://h/"},
      "e": {"command": "x", "args": ["ok", 1], "env": {"1BAD": "v"}},
      "f": {"url": "http://h/", "headers": {"Bad Name": "v", "X": "a\r\nb"}},
      "g": {"command": "x", "cwd": "../elsewhere"},
      "h": {"url": "http://h/", "type": "sse"},
      "i": "not an object"}})"),
               problems);
  const std::string all = joined(problems);
  for (const char* path :
       {"mcpServers.a.command:", "mcpServers.b:", "mcpServers.c:", "mcpServers.d.url:",
        "mcpServers.e.args[1]:", "mcpServers.e.env.1BAD:", "mcpServers.f.headers.Bad Name:",
        "mcpServers.f.headers.X:", "mcpServers.g.cwd:", "mcpServers.h.type:", "mcpServers.i:"}) {
    EXPECT_NE(all.find(path), std::string::npos) << "missing " << path << " in\n" << all;
  }
  EXPECT_NE(all.find("HTTP+SSE transport"), std::string::npos);
}

TEST(McpConfig, DocumentShape) {
  Problems problems;
  parse_config(parse_config_text("[]"), problems);
  ASSERT_EQ(problems.size(), 1u);
  problems.clear();
  parse_config(parse_config_text("{}"), problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "mcpServers");
}

TEST(McpConfig, LoadFromServiceFolder) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hearth-mcp-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto none = load_config(dir);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->servers.empty());

  std::ofstream(dir / "mcp-config.json") << R"({"mcpServers": {"x": {"command": "true"}}})";
  auto one = load_config(dir);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->servers.size(), 1u);

  std::ofstream(dir / "mcp-config.json") << R"({"mcpServers": {"x": {"command": ""}}})";
  auto bad = load_config(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("mcp-config.json: mcpServers.x.command"), std::string::npos)
      << bad.error().message;

  std::ofstream(dir / "mcp-config.json") << "{oops";
  auto broken = load_config(dir);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("mcp-config.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::mcp
