#pragma once
/// What hearth, as an MCP client, reads in a server's messages: which kind each is, hearth's
/// answer to a server's request, and the results of initialize, tools/list and tools/call. No
/// I/O and no coroutines: the Session (session.hpp) applies these to its requests, and
/// fuzz/mcp_message_fuzz.cpp feeds them what a hostile server could send.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::mcp {

/// Newest first; the first is what hearth asks for.
inline constexpr std::string_view kSupportedVersions[] = {"2025-11-25", "2025-06-18"};

struct Tool {
  std::string name;
  std::string description;
  json::value input_schema;   ///< the tool's `inputSchema` (null when the server gave none)
  json::value output_schema;  ///< `outputSchema`, or null
  json::object raw;           ///< the whole tool object as the server sent it
};

/// One message from a server.
struct Incoming {
  enum class Kind { kResponse, kRequest, kNotification };
  Kind kind = Kind::kNotification;
  std::int64_t id = 0;   ///< kResponse: the id of hearth's request (hearth's ids are integers)
  std::string method;    ///< kRequest, kNotification
  json::object message;  ///< the whole message
};

/// The messages in what a server sent, a batch (MCP before 2025-06-18) in order. What is none of
/// the three is dropped: not an object, a non-string method, a response whose id hearth cannot
/// have sent.
std::vector<Incoming> classify(json::value message);

/// hearth's answer to a server's request: {} to `ping`; -32601 to anything else (hearth declares
/// no client capabilities).
json::object answer(const Incoming& request);

/// The token of a `notifications/progress` in the form Session keys its requests by (a string
/// token as it is, any other as its JSON text); nullopt without one.
std::optional<std::string> progress_key(const Incoming& notification);

/// The `result` of a response to hearth's `method`, or the error it carries. An error the
/// transport made itself (data.origin "hearth": the server was never reached) keeps its message.
Result<json::value> response_result(std::string_view server, std::string_view method,
                                    json::object response);

/// The protocol version of an `initialize` result, when hearth speaks it.
Result<std::string> negotiated_version(std::string_view server, const json::value& result);

/// One page of a `tools/list` result. Tools without a string name are skipped.
struct ToolPage {
  std::vector<Tool> tools;
  std::optional<std::string> next_cursor;  ///< absent or empty: the last page
};
Result<ToolPage> tool_page(std::string_view server, const json::value& result);

/// A CallToolResult as an endpoint result: `structuredContent` when present, else the `content`
/// blocks; `isError: true` is kHandlerError with the text of its text blocks.
Result<json::value> tool_result(std::string_view server, std::string_view tool,
                                const json::object& result);

/// "MCP server 'name'", for messages.
std::string server_label(std::string_view server);

}  // namespace hearth::mcp
