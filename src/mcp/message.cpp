#include "mcp/message.hpp"

#include <algorithm>
#include <iterator>

namespace hearth::mcp {

namespace {

/// Text of the `text` blocks of a content array, joined by new lines.
std::string content_text(const json::value* content) {
  std::string out;
  if (content == nullptr || !content->is_array()) return out;
  for (const auto& block : content->get_array()) {
    const auto* type = json::member(block, "type");
    const auto* text = json::member(block, "text");
    if (type != nullptr && type->is_string() && type->get_string() == "text" && text != nullptr &&
        text->is_string()) {
      if (!out.empty()) out += '\n';
      out += std::string_view(text->get_string());
    }
  }
  return out;
}

void classify_into(json::value message, std::vector<Incoming>& out) {
  if (!message.is_object()) return;
  auto& o = message.get_object();
  const auto* method = o.if_contains("method");
  const auto* id = o.if_contains("id");
  Incoming in;
  if (method == nullptr) {
    if (id == nullptr || !id->is_int64()) return;  // not a response to anything of hearth's
    in.kind = Incoming::Kind::kResponse;
    in.id = id->get_int64();
  } else {
    if (!method->is_string()) return;
    in.kind = id != nullptr ? Incoming::Kind::kRequest : Incoming::Kind::kNotification;
    in.method = std::string(method->get_string());
  }
  in.message = std::move(o);
  out.push_back(std::move(in));
}

}  // namespace

std::string server_label(std::string_view server) {
  return "MCP server '" + std::string(server) + "'";
}

std::vector<Incoming> classify(json::value message) {
  std::vector<Incoming> out;
  if (message.is_array()) {
    for (auto& m : message.get_array()) classify_into(std::move(m), out);
  } else {
    classify_into(std::move(message), out);
  }
  return out;
}

json::object answer(const Incoming& request) {
  json::object reply;
  reply["jsonrpc"] = "2.0";
  if (const auto* id = request.message.if_contains("id")) reply["id"] = *id;
  if (request.method == "ping") {
    reply["result"] = json::object();
  } else {
    json::object error;
    error["code"] = -32601;
    error["message"] = "hearth does not offer " + request.method;
    reply["error"] = std::move(error);
  }
  return reply;
}

std::optional<std::string> progress_key(const Incoming& notification) {
  const auto* params = notification.message.if_contains("params");
  const auto* token = params != nullptr ? json::member(*params, "progressToken") : nullptr;
  if (token == nullptr) return std::nullopt;
  return token->is_string() ? std::string(token->get_string()) : json::serialize(*token);
}

Result<json::value> response_result(std::string_view server, std::string_view method,
                                    json::object response) {
  if (const auto* error = response.if_contains("error")) {
    const auto* code = json::member(*error, "code");
    const auto* text = json::member(*error, "message");
    const auto* data_member = json::member(*error, "data");
    const auto* origin = data_member != nullptr ? json::member(*data_member, "origin") : nullptr;
    if (origin != nullptr && *origin == "hearth" && code != nullptr && code->is_int64() &&
        text != nullptr && text->is_string() && data_member->is_object()) {
      // Made by the transport (the server was never reached): reported as it is.
      json::object data = data_member->get_object();
      data.erase("origin");
      const auto c = code->get_int64();
      return Error::make(c == static_cast<int>(ErrorCode::kPermissionDenied)
                             ? ErrorCode::kPermissionDenied
                             : ErrorCode::kHandlerError,
                         std::string(text->get_string()), std::move(data));
    }
    json::object data;
    data["server"] = server;
    data["method"] = method;
    if (code != nullptr) data["code"] = *code;
    if (data_member != nullptr) data["data"] = *data_member;
    return Error::make(ErrorCode::kHandlerError,
                       server_label(server) + " refused " + std::string(method) + ": " +
                           (text != nullptr && text->is_string() ? std::string(text->get_string())
                                                                 : json::serialize(*error)),
                       std::move(data));
  }
  if (auto* result = response.if_contains("result")) return std::move(*result);
  return Error::make(ErrorCode::kHandlerError, server_label(server) + " sent a response to " +
                                                   std::string(method) + " without a result");
}

Result<std::string> negotiated_version(std::string_view server, const json::value& result) {
  const auto* version = json::member(result, "protocolVersion");
  std::string v = version != nullptr && version->is_string() ? std::string(version->get_string())
                                                             : std::string();
  if (std::find(std::begin(kSupportedVersions), std::end(kSupportedVersions), v) !=
      std::end(kSupportedVersions)) {
    return v;
  }
  json::object data;
  data["server"] = server;
  data["protocolVersion"] = v;
  return Error::make(ErrorCode::kHandlerError,
                     server_label(server) + " speaks MCP " + (v.empty() ? "(no version)" : v) +
                         "; hearth speaks " + std::string(kSupportedVersions[0]) + " and " +
                         std::string(kSupportedVersions[1]),
                     std::move(data));
}

Result<ToolPage> tool_page(std::string_view server, const json::value& result) {
  const auto* list = json::member(result, "tools");
  if (list == nullptr || !list->is_array()) {
    return Error::make(ErrorCode::kHandlerError,
                       server_label(server) + " answered tools/list without a `tools` array");
  }
  ToolPage page;
  for (const auto& t : list->get_array()) {
    const auto* name = json::member(t, "name");
    if (!t.is_object() || name == nullptr || !name->is_string()) continue;
    Tool tool;
    tool.name = std::string(name->get_string());
    if (const auto* d = json::member(t, "description"); d && d->is_string()) {
      tool.description = std::string(d->get_string());
    }
    if (const auto* s = json::member(t, "inputSchema")) tool.input_schema = *s;
    if (const auto* s = json::member(t, "outputSchema")) tool.output_schema = *s;
    tool.raw = t.get_object();
    page.tools.push_back(std::move(tool));
  }
  const auto* next = json::member(result, "nextCursor");
  if (next != nullptr && next->is_string() && !next->get_string().empty()) {
    page.next_cursor = std::string(next->get_string());
  }
  return page;
}

Result<json::value> tool_result(std::string_view server, std::string_view tool,
                                const json::object& result) {
  const auto* is_error = result.if_contains("isError");
  const auto* content = result.if_contains("content");
  if (is_error != nullptr && is_error->is_bool() && is_error->get_bool()) {
    std::string text = content_text(content);
    json::object data;
    data["server"] = server;
    data["tool"] = tool;
    data["content"] = content != nullptr ? *content : json::value(json::array());
    return Error::make(ErrorCode::kHandlerError,
                       "MCP tool '" + std::string(tool) + "' of server '" + std::string(server) +
                           "' failed" + (text.empty() ? std::string() : ": " + text),
                       std::move(data));
  }
  if (const auto* structured = result.if_contains("structuredContent")) return *structured;
  if (content != nullptr) return *content;
  return json::value(json::array());
}

}  // namespace hearth::mcp
