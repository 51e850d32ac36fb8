#include "mcpserver/catalog.hpp"

#include <gtest/gtest.h>

namespace hearth::mcpserver {
namespace {

json::value parse(std::string_view text) {
  return json::parse_text(text).value();
}

TEST(ToolName, EndpointAloneOrQualifiedWithForbiddenCharactersReplaced) {
  EXPECT_EQ(tool_name("todo", "listTodos", false), "listTodos");
  EXPECT_EQ(tool_name("todo", "listTodos", true), "todo.listTodos");
  EXPECT_EQ(tool_name("my service", "a/b:c", true), "my_service.a_b_c");
  EXPECT_EQ(tool_name("s", std::string(300, 'x'), false).size(), 128u);
}

std::shared_ptr<const host::Host::Service> service_with(std::string name,
                                                        std::vector<std::string> endpoints) {
  auto s = std::make_shared<host::Host::Service>();
  s->manifest.name = std::move(name);
  for (auto& id : endpoints) {
    manifest::Endpoint e;
    e.id = std::move(id);
    e.method = e.id == "live" ? manifest::Method::kSubscription : manifest::Method::kQuery;
    s->manifest.endpoints.push_back(std::move(e));
  }
  return s;
}

TEST(NameTools, OneServiceByEndpointSeveralQualifiedClashesNumbered) {
  host::Host::ServiceList one{service_with("todo", {"list", "live"})};
  auto named = name_tools(one);
  ASSERT_EQ(named.size(), 1u);  // a subscription is no tool
  EXPECT_EQ(named[0].name, "list");
  EXPECT_EQ(named[0].endpoint->id, "list");
  host::Host::ServiceList two{service_with("x y", {"e"}), service_with("x_y", {"e"})};
  named = name_tools(two);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].name, "x_y.e");
  EXPECT_EQ(named[1].name, "x_y.e_2");
  EXPECT_EQ(named[1].service->manifest.name, "x_y");
}

TEST(ResolveTypes, InlinesTypesAndKeepsSiblings) {
  auto types = parse(R"({"Todo":{"type":"object","properties":{"id":{"type":"number"}}},
                        "List":{"type":"array","items":{"$ref":"#/types/Todo"}}})")
                   .get_object();
  auto out = resolve_types(parse(R"({"type":"object","properties":{
      "todos":{"$ref":"#/types/List","description":"all of them"},
      "missing":{"$ref":"#/types/Nope"}}})"),
                           types);
  const auto& todos = out.at("properties").at("todos");
  EXPECT_EQ(todos.at("type"), "array");
  EXPECT_EQ(todos.at("description"), "all of them");
  EXPECT_EQ(todos.at("items").at("properties").at("id").at("type"), "number");
  EXPECT_EQ(out.at("properties").at("missing").at("$ref"), "#/types/Nope");
  EXPECT_FALSE(out.get_object().contains("$defs"));
}

TEST(ResolveTypes, RecursiveTypesGoUnderDefs) {
  auto types = parse(R"({"Node":{"type":"object","properties":{
      "children":{"type":"array","items":{"$ref":"#/types/Node"}}}}})")
                   .get_object();
  auto out = resolve_types(
      parse(R"({"type":"object","properties":{"root":{"$ref":"#/types/Node"}}})"), types);
  EXPECT_EQ(out.at("properties").at("root").at("$ref"), "#/$defs/Node");
  const auto& node = out.at("$defs").at("Node");
  EXPECT_EQ(node.at("properties").at("children").at("items").at("$ref"), "#/$defs/Node");
  EXPECT_EQ(json::dump(out).find("#/types/"), std::string::npos);
}

manifest::Manifest todo_manifest() {
  manifest::Manifest m;
  m.name = "todo";
  m.raw = parse(R"({"endpoints":[
      {"id":"list","method":"query","schema":{"output":{"type":"array","items":{"$ref":"#/types/T"}}}},
      {"id":"add","method":"mutation","schema":{"input":{"type":"object","properties":{"t":{"$ref":"#/types/T"}},"required":["t"]},
                                              "output":{"type":"object"}}}]})");
  m.types = parse(R"({"T":{"type":"string"}})").get_object();
  manifest::Endpoint list;
  list.id = "list";
  list.method = manifest::Method::kQuery;
  list.handler_type = "function";
  manifest::Endpoint add;
  add.id = "add";
  add.method = manifest::Method::kMutation;
  add.description = "Adds one";
  add.handler_type = "http";
  m.endpoints = {list, add};
  return m;
}

TEST(ToolDefinition, QueryIsReadOnlyAndNonObjectOutputIsWrapped) {
  auto m = todo_manifest();
  auto tool = tool_definition(m, m.endpoints[0], "list", "ui://todo/view");
  EXPECT_EQ(tool.at("name"), "list");
  EXPECT_EQ(tool.at("inputSchema"), parse(R"({"type":"object"})"));
  EXPECT_EQ(tool.at("outputSchema").at("properties").at("result").at("items").at("type"), "string");
  EXPECT_EQ(tool.at("annotations").at("readOnlyHint"), true);
  EXPECT_EQ(tool.at("annotations").at("openWorldHint"), false);
  EXPECT_EQ(tool.at("_meta").at("ui").at("resourceUri"), "ui://todo/view");
  EXPECT_FALSE(tool.at("description").as_string().empty());
}

TEST(ToolDefinition, MutationKeepsItsSchemasResolved) {
  auto m = todo_manifest();
  auto tool = tool_definition(m, m.endpoints[1], "todo.add", "");
  EXPECT_EQ(tool.at("description"), "Adds one");
  EXPECT_EQ(tool.at("inputSchema").at("properties").at("t").at("type"), "string");
  EXPECT_EQ(tool.at("outputSchema"), parse(R"({"type":"object"})"));
  EXPECT_EQ(tool.at("annotations").at("destructiveHint"), true);
  EXPECT_EQ(tool.at("annotations").at("openWorldHint"), true);
  EXPECT_FALSE(tool.contains("_meta") && tool.at("_meta").as_object().contains("ui"));
}

TEST(ToolDefinition, AnInputThatIsNotAnObjectTravelsAsTheArgumentInput) {
  EXPECT_TRUE(wraps_input(parse(R"({"type":"array"})")));
  EXPECT_TRUE(wraps_input(parse(R"({"type":["string","null"]})")));
  EXPECT_FALSE(wraps_input(parse(R"({"type":"object"})")));
  EXPECT_FALSE(wraps_input(parse(R"({"properties":{}})")));
  EXPECT_TRUE(wraps_input(parse(R"({"type":["object","array"]})")));
  manifest::Manifest m = todo_manifest();
  m.raw = parse(
      R"({"endpoints":[{"id":"sum","method":"query","schema":{"input":{"$ref":"#/types/Numbers"}}}]})");
  m.types = parse(R"({"Numbers":{"type":"array","items":{"type":"number"}}})").get_object();
  manifest::Endpoint sum;
  sum.id = "sum";
  auto tool = tool_definition(m, sum, "sum", "");
  EXPECT_EQ(
      tool.at("inputSchema"),
      parse(
          R"({"type":"object","properties":{"input":{"type":"array","items":{"type":"number"}}},"required":["input"]})"));
}

TEST(ToolResult, StructuredContentAndText) {
  auto object = tool_result(Result<json::value>(parse(R"({"n":1})")), false);
  EXPECT_EQ(object.at("structuredContent"), parse(R"({"n":1})"));
  EXPECT_EQ(object.at("content").at(0).at("text"), R"({"n":1})");
  EXPECT_EQ(object.at("isError"), false);
  auto array = tool_result(Result<json::value>(parse("[1,2]")), false);
  EXPECT_EQ(array.at("structuredContent"), parse(R"({"result":[1,2]})"));
  auto wrapped = tool_result(Result<json::value>(parse(R"({"a":1})")), true);
  EXPECT_EQ(wrapped.at("structuredContent"), parse(R"({"result":{"a":1}})"));
}

TEST(ToolResult, ErrorIsAToolError) {
  auto r = tool_result(Result<json::value>(Error::make(ErrorCode::kHandlerError, "boom",
                                                       json::object{{"exitCode", 3}})),
                       false);
  EXPECT_EQ(r.at("isError"), true);
  EXPECT_NE(r.at("content").at(0).at("text").as_string().find("boom"), std::string::npos);
  EXPECT_EQ(r.at("_meta").at("hearth/error").at("code"), -32003);
  EXPECT_FALSE(r.contains("structuredContent"));
}

TEST(ResourceUri, RoundTrips) {
  auto view = parse_resource_uri(view_uri("todo"));
  ASSERT_TRUE(view);
  EXPECT_EQ(view->kind, ResourceRef::Kind::kView);
  EXPECT_EQ(view->service, "todo");
  auto sub = parse_resource_uri(subscription_uri("todo", "changes"));
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->kind, ResourceRef::Kind::kSubscription);
  EXPECT_EQ(sub->endpoint, "changes");
  const std::string path = "/srv/my notes/a%b#c.txt";
  auto uri = file_uri(path);
  EXPECT_EQ(uri, "file:///srv/my%20notes/a%25b%23c.txt");
  auto file = parse_resource_uri(uri);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->path, path);
}

TEST(ResourceUri, RefusesOthers) {
  for (std::string_view bad :
       {"test://static-text", "ui://todo/other", "ui:///view", "lavs://todo/changes",
        "lavs://todo/subscriptions/", "file://host/etc/passwd", "file:///a%2", "file:///a%00b",
        "file:///a%zz"}) {
    EXPECT_FALSE(parse_resource_uri(bad)) << bad;
  }
}

}  // namespace
}  // namespace hearth::mcpserver
