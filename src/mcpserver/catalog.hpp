#pragma once
/// What hearth's services look like to an MCP client, with no I/O: tool names and definitions
/// (an endpoint's schemas with `#/types` resolved), tool results (structuredContent plus a text
/// block; a handler's error as an `isError` result), and the resource URIs of a service's files,
/// view and subscriptions. The protocol engine (server.hpp) and the tests use it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "host/host.hpp"
#include "json/json.hpp"
#include "manifest/manifest.hpp"

namespace hearth::mcpserver {

/// The MIME type of an MCP Apps view resource.
inline constexpr std::string_view kAppMimeType = "text/html;profile=mcp-app";

/// An endpoint as an MCP tool: "<endpoint>" when one service is served, else
/// "<service>.<endpoint>", with every character outside [A-Za-z0-9_.-] made '_' and the name cut
/// to 128 characters (the MCP tool-name rule).
std::string tool_name(std::string_view service, std::string_view endpoint, bool qualified);

/// A query or mutation endpoint of a served service with its tool name.
struct NamedEndpoint {
  std::shared_ptr<const host::Host::Service> service;
  const manifest::Endpoint* endpoint = nullptr;  ///< in service->manifest
  std::string name;
};

/// Every query and mutation endpoint of `services` named as tools: tool_name(), qualified when
/// several services are served, a name already taken getting "_2", "_3". The one naming of
/// hearth's MCP tools, A2A skills and the tool names an MCP App's bridge calls.
std::vector<NamedEndpoint> name_tools(const host::Host::ServiceList& services);

/// `schema` with every `{"$ref": "#/types/Name"}` replaced by the type (recursively). A type that
/// refers to itself (directly or through others) is kept once under `$defs` and referred to as
/// `#/$defs/Name`, so the result is a self-contained JSON Schema. A ref to a missing type is
/// left as written.
json::value resolve_types(const json::value& schema, const json::object& types);

/// The endpoint's input or output schema as written in the manifest (`schema.input` /
/// `schema.output`), null when it has none.
json::value endpoint_schema(const manifest::Manifest& m, std::string_view endpoint,
                            std::string_view which);

/// Whether values of `schema` are JSON objects for sure (its type is "object"). Other results are
/// wrapped as {"result": value} in structuredContent, which MCP requires to be an object.
bool is_object_schema(const json::value& schema);

/// Whether an endpoint's input schema (types resolved) says its input is not an object: MCP
/// arguments are always an object, so such an input travels as the argument "input".
bool wraps_input(const json::value& input_schema);

/// An endpoint's input as tool arguments: its input schema with `#/types` resolved, as an object
/// schema; when the input is not an object (`wrapped`), the schema of {"input": <the input>}.
/// Shared by MCP tools and the App Server's bound LAVS tools.
struct ToolInput {
  json::value schema;
  bool wrapped = false;  ///< the endpoint's input is the arguments' "input"
};
ToolInput tool_input_schema(const manifest::Manifest& m, std::string_view endpoint);

/// The tools/list entry of a query or mutation endpoint: name, title, description, inputSchema,
/// outputSchema (when the endpoint declares one), annotations (a query is read-only and
/// idempotent), and `_meta.ui.resourceUri` when the service has a view (`ui_uri` non-empty).
json::object tool_definition(const manifest::Manifest& m, const manifest::Endpoint& endpoint,
                             const std::string& name, const std::string& ui_uri);

/// What an endpoint's output is, when its output schema says it is media: a string with
/// `contentEncoding: base64` and a `contentMediaType` of an image (image/...) or a sound
/// (audio/...), JSON Schema's own annotations. Such a result is an MCP image or audio block.
struct Media {
  std::string kind;       ///< "image" or "audio"
  std::string mime_type;  ///< the contentMediaType
};
std::optional<Media> media_of(const json::value& output_schema);

/// A tools/call result from what the LAVS call pipeline returned: structuredContent (the value,
/// or {"result": value} when `wrap`), and the same JSON as a text block (or, for `media`, the
/// value as an image or audio block); an error as {isError: true, content: [text]} with the
/// LAVS error under `_meta["hearth/error"]`.
json::object tool_result(const Result<json::value>& outcome, bool wrap,
                         const std::optional<Media>& media = std::nullopt);

/// Resource URIs.
std::string view_uri(std::string_view service);  ///< ui://svc/view
std::string subscription_uri(std::string_view service, std::string_view endpoint);  ///< lavs://
std::string file_uri(const std::string& absolute_path);  ///< file:// with percent-encoding

/// A resource URI taken apart.
struct ResourceRef {
  enum class Kind { kView, kSubscription, kFile };
  Kind kind = Kind::kFile;
  std::string service;   ///< view, subscription
  std::string endpoint;  ///< subscription
  std::string path;      ///< file: the absolute path, decoded
};
/// Parses a URI made by the functions above; nullopt for anything else.
std::optional<ResourceRef> parse_resource_uri(std::string_view uri);

}  // namespace hearth::mcpserver
