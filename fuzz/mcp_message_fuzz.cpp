// What hearth reads in an MCP server's messages (mcp/message.hpp): a message as a transport
// receives it (one line of stdio, one HTTP body or SSE event), classified, each request answered,
// and each response read as the result of initialize, tools/list and tools/call would be.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "json/json.hpp"
#include "mcp/message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hearth;
  auto parsed = json::parse_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  for (auto& in : mcp::classify(std::move(parsed).value())) {
    switch (in.kind) {
      case mcp::Incoming::Kind::kRequest: {
        const auto reply = mcp::answer(in);
        if (!reply.contains("result") && !reply.contains("error")) std::abort();
        (void)json::serialize(reply);
        break;
      }
      case mcp::Incoming::Kind::kNotification:
        (void)mcp::progress_key(in);
        break;
      case mcp::Incoming::Kind::kResponse: {
        auto result = mcp::response_result("fuzz", "tools/call", in.message);
        if (!result.ok()) {
          if (result.error().message.empty()) std::abort();
          break;
        }
        (void)mcp::negotiated_version("fuzz", *result);
        if (auto page = mcp::tool_page("fuzz", *result); page.ok()) {
          for (const auto& tool : page->tools) {
            if (tool.name.empty() && !tool.raw.contains("name")) std::abort();
          }
        }
        if (result->is_object()) (void)mcp::tool_result("fuzz", "t", result->get_object());
        break;
      }
    }
  }
  return 0;
}
