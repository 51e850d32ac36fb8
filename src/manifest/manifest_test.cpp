#include "manifest/manifest.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

namespace hearth::manifest {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------------------------------------
// Fakes, so these tests depend neither on the real schema engine nor on the handler kinds.

class FakeSchema final : public schema::Schema {
 public:
  std::vector<schema::Violation> validate(const json::value& /*instance*/) const override {
    return {};
  }
  void apply_defaults(json::value& /*instance*/) const override {}
};

/// Accepts any object or boolean schema. Reports, with paths relative to the schema root, every
/// "x-broken" member and every "$ref" to "#/types/Name" that `types` does not hold, so the tests
/// can see both the path prefixing and which `types` the loader passed. Like the real compiler, it
/// reports problems inside a referenced type under "types.Name" (the types sit at the root of the
/// document it compiles).
class FakeCompiler : public schema::Compiler {
 public:
  std::shared_ptr<const schema::Schema> compile(const json::value& schema,
                                                const json::object& types,
                                                Problems& problems) const override {
    ++calls;
    if (!schema.is_object() && !schema.is_bool()) {
      problems.push_back({"", "must be an object or a boolean"});
      return nullptr;
    }
    const std::size_t before = problems.size();
    std::vector<std::string> followed;
    scan(schema, "", types, followed, problems);
    if (problems.size() != before) {
      return nullptr;
    }
    return std::make_shared<FakeSchema>();
  }

  mutable int calls = 0;

 private:
  static void scan(const json::value& v, const std::string& path, const json::object& types,
                   std::vector<std::string>& followed, Problems& problems) {
    if (v.is_array()) {
      for (std::size_t i = 0; i < v.get_array().size(); ++i) {
        scan(v.get_array()[i], index_path(path, i), types, followed, problems);
      }
      return;
    }
    if (!v.is_object()) {
      return;
    }
    for (const auto& kv : v.get_object()) {
      const std::string member_path = join_path(path, kv.key());
      if (kv.key() == "x-broken") {
        problems.push_back({member_path, "marked broken"});
      } else if (kv.key() == "$ref" && kv.value().is_string()) {
        const std::string_view ref = kv.value().get_string();
        constexpr std::string_view kPrefix = "#/types/";
        if (ref.substr(0, kPrefix.size()) != kPrefix) {
          continue;
        }
        const std::string name(ref.substr(kPrefix.size()));
        if (!types.contains(name)) {
          problems.push_back(
              {member_path, "'" + std::string(ref) + "' does not name a type in 'types'"});
        } else if (std::find(followed.begin(), followed.end(), name) == followed.end()) {
          followed.push_back(name);
          scan(types.at(name), join_path("types", name), types, followed, problems);
        }
      } else {
        scan(kv.value(), member_path, types, followed, problems);
      }
    }
  }
};

/// Returns nothing and says nothing: the loader must still refuse.
class SilentFailingCompiler final : public schema::Compiler {
 public:
  std::shared_ptr<const schema::Schema> compile(const json::value&, const json::object&,
                                                Problems&) const override {
    return nullptr;
  }
};

class ThrowingCompiler final : public schema::Compiler {
 public:
  std::shared_ptr<const schema::Schema> compile(const json::value&, const json::object&,
                                                Problems&) const override {
    throw std::runtime_error("engine exploded");
  }
};

/// What FakeKinds parses a handler into: the kind and its `command` or `server`.
struct FakeConfig final : HandlerConfig {
  std::string type;
  std::string target;
};

/// Knows "script" (needs a string `command`) and "mcp" (needs `server` and `tool`).
class FakeKinds final : public HandlerKinds {
 public:
  std::vector<std::string_view> handler_keys(std::string_view type) const override {
    if (type == "script") return {"command", "args", "input", "cwd", "timeout", "env"};
    if (type == "mcp") return {"server", "tool", "timeout"};
    return {};
  }
  std::shared_ptr<const HandlerConfig> parse(std::string_view type, const json::object& handler,
                                             const std::string& path,
                                             Problems& problems) const override {
    checked.push_back(path + "=" + std::string(type));
    const std::size_t before = problems.size();
    auto need_string = [&](std::string_view key) {
      const auto* v = handler.if_contains(key);
      if (v == nullptr) {
        problems.push_back({join_path(path, key), "is required"});
      } else if (!v->is_string()) {
        problems.push_back({join_path(path, key), "must be a string"});
      }
    };
    if (type == "script") {
      need_string("command");
    } else if (type == "mcp") {
      need_string("server");
      need_string("tool");
    } else {
      problems.push_back(
          {join_path(path, "type"), "unknown handler type '" + std::string(type) + "'"});
    }
    if (problems.size() != before) return nullptr;
    auto config = std::make_shared<FakeConfig>();
    config->type = std::string(type);
    config->target = handler.at(type == "script" ? "command" : "server").as_string();
    return config;
  }

  mutable std::vector<std::string> checked;
};

// ---------------------------------------------------------------------------------------------
// Documents.

constexpr std::string_view kSpecExample47 = R"({
  "lavs": "1.0",
  "name": "todo-manager",
  "version": "1.0.0",
  "description": "Todo management service with AI assistance",
  "endpoints": [
    {
      "id": "listTodos",
      "method": "query",
      "description": "Retrieve all todos",
      "handler": {
        "type": "script",
        "command": "node",
        "args": ["scripts/todo-service.js", "list"],
        "input": "args",
        "timeout": 5000
      },
      "schema": {
        "output": {
          "type": "array",
          "items": { "$ref": "#/types/Todo" }
        }
      }
    },
    {
      "id": "addTodo",
      "method": "mutation",
      "description": "Create a new todo",
      "handler": {
        "type": "script",
        "command": "node",
        "args": ["scripts/todo-service.js", "add"],
        "input": "stdin"
      },
      "schema": {
        "input": {
          "type": "object",
          "properties": {
            "text": { "type": "string" },
            "priority": { "type": "number", "default": 0 }
          },
          "required": ["text"]
        },
        "output": { "$ref": "#/types/Todo" }
      }
    },
    {
      "id": "todoUpdates",
      "method": "subscription",
      "description": "Subscribe to todo changes",
      "handler": {
        "type": "script",
        "command": "node",
        "args": ["scripts/todo-watch.js"]
      }
    }
  ],
  "view": {
    "component": {
      "type": "cdn",
      "url": "https://cdn.example.com/todo-view@1.0.0.js",
      "exportName": "TodoView"
    },
    "fallback": "table",
    "icon": "checklist"
  },
  "types": {
    "Todo": {
      "type": "object",
      "properties": {
        "id": { "type": "number" },
        "text": { "type": "string" },
        "done": { "type": "boolean" },
        "priority": { "type": "number" },
        "createdAt": { "type": "string", "format": "date-time" }
      },
      "required": ["id", "text", "done"]
    }
  },
  "permissions": {
    "fileAccess": ["./data/**/*.json"],
    "networkAccess": false,
    "maxExecutionTime": 30000,
    "maxMemory": 104857600
  }
})";

constexpr std::string_view kSpecExample81 = R"({
  "lavs": "1.0",
  "name": "simple-notes",
  "version": "1.0.0",
  "endpoints": [
    {
      "id": "getNotes",
      "method": "query",
      "handler": { "type": "script", "command": "cat", "args": ["notes.txt"] }
    },
    {
      "id": "saveNote",
      "method": "mutation",
      "handler": {
        "type": "script",
        "command": "bash",
        "args": ["-c", "echo \"$NOTE\" >> notes.txt"],
        "input": "env"
      },
      "schema": {
        "input": { "type": "object", "properties": { "NOTE": { "type": "string" } } }
      }
    }
  ],
  "permissions": { "fileAccess": ["notes.txt"] }
})";

constexpr std::string_view kSpecExample82 = R"({
  "lavs": "1.0",
  "name": "contact-manager",
  "version": "1.0.0",
  "endpoints": [
    {
      "id": "searchContacts",
      "method": "query",
      "handler": {
        "type": "script",
        "command": "python3",
        "args": ["scripts/contacts.py", "search"],
        "input": "stdin"
      },
      "schema": {
        "input": { "type": "object", "properties": { "query": { "type": "string" } } }
      }
    }
  ],
  "permissions": { "fileAccess": ["contacts.db"] }
})";

constexpr std::string_view kSpecExample83 = R"({
  "lavs": "1.0",
  "name": "github-issues",
  "version": "1.0.0",
  "endpoints": [
    {
      "id": "listIssues",
      "method": "query",
      "handler": { "type": "mcp", "server": "github", "tool": "list_issues" }
    }
  ]
})";

constexpr std::string_view kMinimal = R"({
  "lavs": "1.0",
  "name": "svc",
  "version": "1.0.0",
  "endpoints": [
    { "id": "a", "method": "query", "handler": { "type": "script", "command": "true" } }
  ]
})";

json::value parse(std::string_view text) {
  // As manifest::load parses lavs.json: numbers beyond a double are clamped.
  auto r = json::parse_text(text, json::ParseLimits{.clamp_numbers = true});
  if (!r.ok()) {
    ADD_FAILURE() << "test document does not parse: " << r.error().message;
    return nullptr;
  }
  return std::move(r).value();
}

std::vector<std::string> strings(const Problems& problems) {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const auto& p : problems) {
    out.push_back(p.to_string());
  }
  return out;
}

/// A temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::path(testing::TempDir()) / ("hearth_manifest_test_" + std::to_string(::getpid()) +
                                            "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

  fs::path write(const fs::path& relative, std::string_view text) const {
    fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
    return p;
  }

 private:
  fs::path path_;
};

class ManifestTest : public ::testing::Test {
 protected:
  std::optional<Manifest> load_text(std::string_view text) {
    problems_.clear();
    return load_document(parse(text), "/srv/svc", kinds_, compiler_, problems_);
  }
  std::optional<Manifest> load_value(const json::value& doc) {
    problems_.clear();
    return load_document(doc, "/srv/svc", kinds_, compiler_, problems_);
  }
  std::vector<std::string> problem_strings() const { return strings(problems_); }

  FakeKinds kinds_;
  FakeCompiler compiler_;
  Problems problems_;
};

// ---------------------------------------------------------------------------------------------
// The spec's examples.

TEST_F(ManifestTest, SpecCompleteExampleLoads) {
  const json::value doc = parse(kSpecExample47);
  auto m = load_value(doc);
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_THAT(problems_, IsEmpty());
  EXPECT_THAT(strings(m->warnings), IsEmpty());  // every key of the spec's example is known

  EXPECT_EQ(m->lavs, "1.0");
  EXPECT_EQ(m->name, "todo-manager");
  EXPECT_EQ(m->version, "1.0.0");
  EXPECT_EQ(m->description, "Todo management service with AI assistance");
  EXPECT_EQ(m->raw, doc);
  EXPECT_EQ(m->dir, fs::path("/srv/svc"));
  EXPECT_EQ(m->file, fs::path("/srv/svc/lavs.json"));
  EXPECT_TRUE(m->types.contains("Todo"));
  ASSERT_TRUE(m->view.is_object());
  EXPECT_EQ(m->view.at("fallback"), "table");

  ASSERT_EQ(m->endpoints.size(), 3u);
  const Endpoint& list = m->endpoints[0];
  EXPECT_EQ(list.id, "listTodos");
  EXPECT_EQ(list.method, Method::kQuery);
  EXPECT_EQ(list.description, "Retrieve all todos");
  EXPECT_EQ(list.handler_type, "script");
  EXPECT_EQ(list.handler.at("timeout"), 5000);
  EXPECT_EQ(list.input_schema, nullptr);
  EXPECT_NE(list.output_schema, nullptr);
  EXPECT_EQ(m->endpoints[1].method, Method::kMutation);
  EXPECT_NE(m->endpoints[1].input_schema, nullptr);
  EXPECT_NE(m->endpoints[1].output_schema, nullptr);
  EXPECT_EQ(m->endpoints[2].method, Method::kSubscription);
  EXPECT_EQ(m->endpoints[2].input_schema, nullptr);
  EXPECT_EQ(m->endpoints[2].output_schema, nullptr);

  // One compilation per type and per declared schema: Todo, listTodos.output, addTodo.input/output.
  EXPECT_EQ(compiler_.calls, 4);
  EXPECT_THAT(kinds_.checked,
              ElementsAre("endpoints[0].handler=script", "endpoints[1].handler=script",
                          "endpoints[2].handler=script"));

  const Permissions& p = m->permissions;
  ASSERT_TRUE(p.file_access.has_value());
  EXPECT_THAT(*p.file_access, ElementsAre("./data/**/*.json"));
  ASSERT_TRUE(p.network_access.has_value());
  EXPECT_EQ(p.network_access->mode(), egress::NetworkPolicy::Mode::kNone);
  EXPECT_EQ(p.max_execution_time, std::chrono::milliseconds(30000));
  EXPECT_EQ(p.max_memory, 104857600u);
  for (const auto& ep : m->endpoints) {
    EXPECT_EQ(ep.effective.to_json(), p.to_json());
  }
  EXPECT_EQ(json::value(p.to_json()),
            parse(R"({"fileAccess":["./data/**/*.json"],"networkAccess":false,
                                              "maxExecutionTime":30000,"maxMemory":104857600})"));

  ASSERT_NE(m->find("addTodo"), nullptr);
  EXPECT_EQ(m->find("addTodo")->id, "addTodo");
  EXPECT_EQ(m->find("nope"), nullptr);
}

TEST_F(ManifestTest, SpecSimpleNotesExampleLoadsFromItsFolder) {
  TempDir tmp;
  tmp.write("notes/lavs.json", kSpecExample81);
  auto m = load(tmp.path() / "notes", kinds_, compiler_, problems_);
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_EQ(m->name, "simple-notes");
  EXPECT_EQ(m->dir, fs::canonical(tmp.path() / "notes"));
  EXPECT_EQ(m->file, fs::canonical(tmp.path() / "notes" / "lavs.json"));
  ASSERT_EQ(m->endpoints.size(), 2u);
  EXPECT_EQ(m->endpoints[1].id, "saveNote");
  EXPECT_NE(m->endpoints[1].input_schema, nullptr);
  ASSERT_TRUE(m->endpoints[0].effective.file_access.has_value());
  EXPECT_THAT(*m->endpoints[0].effective.file_access, ElementsAre("notes.txt"));
  EXPECT_FALSE(m->endpoints[0].effective.network_access.has_value());
  EXPECT_TRUE(m->view.is_null());
}

TEST_F(ManifestTest, SpecContactsExampleLoads) {
  auto m = load_text(kSpecExample82);
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_EQ(m->name, "contact-manager");
  ASSERT_EQ(m->endpoints.size(), 1u);
  EXPECT_EQ(m->endpoints[0].handler.at("input"), "stdin");
}

TEST_F(ManifestTest, SpecMcpExampleLoads) {
  auto m = load_text(kSpecExample83);
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  ASSERT_EQ(m->endpoints.size(), 1u);
  EXPECT_EQ(m->endpoints[0].handler_type, "mcp");
  EXPECT_EQ(m->endpoints[0].handler.at("tool"), "list_issues");
  EXPECT_FALSE(m->permissions.file_access.has_value());
  EXPECT_EQ(json::value(m->endpoints[0].effective.to_json()), json::value(json::object()));
}

TEST_F(ManifestTest, MisspeltKeysAreWarningsNamingTheKeyMeant) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"0.0.1",
    "permisions":{"fileAccess":["data/*"]},
    "permissions":{"fileAcess":["data/*"],"netwrokAccess":false,"x-owner":"ada"},
    "x-generator":"hand", "$schema":"https://example.com/lavs.schema.json",
    "view":{"component":{"type":"local","path":"view.js","exprtName":"V"},"fallbak":"list"},
    "endpoints":[{"id":"list","method":"query","descripton":"all",
      "handler":{"type":"script","comand":"cat","command":"cat","timeout":5},
      "schema":{"inputs":{"type":"object"},"input":{"type":"object","propertys":{}}},
      "permissions":{"maxExecutionTme":5}},
      {"id":"tool","method":"query","handler":{"type":"mcp","server":"s","tool":"t","tol":"u"}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_THAT(problems_, IsEmpty());
  EXPECT_THAT(
      strings(m->warnings),
      UnorderedElementsAre(
          "permisions: unknown key 'permisions'; did you mean 'permissions'? (it is ignored)",
          "permissions.fileAcess: unknown key 'fileAcess'; did you mean 'fileAccess'? (it "
          "is ignored)",
          "permissions.netwrokAccess: unknown key 'netwrokAccess'; did you mean "
          "'networkAccess'? (it is ignored)",
          "view.fallbak: unknown key 'fallbak'; did you mean 'fallback'? (it is ignored)",
          "view.component.exprtName: unknown key 'exprtName' (it is ignored)",
          "endpoints[0].descripton: unknown key 'descripton'; did you mean 'description'? "
          "(it is ignored)",
          "endpoints[0].handler.comand: unknown key 'comand'; did you mean 'command'? (it "
          "is ignored)",
          "endpoints[0].schema.inputs: unknown key 'inputs'; did you mean 'input'? (it is "
          "ignored)",
          "endpoints[0].permissions.maxExecutionTme: unknown key 'maxExecutionTme'; did "
          "you mean 'maxExecutionTime'? (it is ignored)",
          "endpoints[1].handler.tol: unknown key 'tol'; did you mean 'tool'? (it is "
          "ignored)"));
}

TEST_F(ManifestTest, AMisspeltKeyIsToldBesideTheProblemItCauses) {
  EXPECT_FALSE(load_text(R"({"lavs":"1.0","name":"s","version":"0.0.1","endpionts":[]})"));
  EXPECT_THAT(problem_strings(),
              UnorderedElementsAre("endpoints: is required",
                                   "endpionts: unknown key 'endpionts'; did you mean "
                                   "'endpoints'? (it is ignored)"));
}

TEST(MethodNames, AreTheWireNames) {
  EXPECT_EQ(to_string(Method::kQuery), "query");
  EXPECT_EQ(to_string(Method::kMutation), "mutation");
  EXPECT_EQ(to_string(Method::kSubscription), "subscription");
}

// ---------------------------------------------------------------------------------------------
// Problems.

TEST_F(ManifestTest, ListsEveryProblemWithItsPath) {
  auto m = load_text(R"({
    "lavs": "2.0",
    "name": "9lives",
    "version": "v1",
    "description": 5,
    "endpoints": [
      { "id": "a", "method": "get", "handler": { "type": "script" } },
      { "id": "a", "method": "query", "handler": "script",
        "permissions": { "maxExecutionTime": -1, "fileAccess": ["ok", 3] } },
      7,
      { "method": "query", "handler": { "type": "ftp" },
        "schema": { "input": "string", "output": { "x-broken": true } } }
    ],
    "view": { "component": { "type": "cdn" }, "fallback": "grid", "theme": { "bg": 1 } },
    "types": { "T": 3, "U": { "properties": { "v": { "x-broken": 1 } } } },
    "permissions": { "fileAccess": "x", "networkAccess": "yes", "maxMemory": "lots" }
  })");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(
      problem_strings(),
      UnorderedElementsAre(
          "lavs: must be \"1.0\"",
          "name: must start with a letter and hold only letters, digits, '_' and '-'",
          "version: must be a semantic version such as 1.0.0", "description: must be a string",
          "endpoints[0].method: must be one of query, mutation, subscription",
          "endpoints[0].handler.command: is required", "endpoints[1].handler: must be an object",
          "endpoints[1].permissions.maxExecutionTime: must be a non-negative number (milliseconds)",
          "endpoints[1].permissions.fileAccess[1]: must be a string",
          "endpoints[1].id: duplicate endpoint id 'a' (also endpoints[0])",
          "endpoints[2]: must be an object", "endpoints[3].id: is required",
          "endpoints[3].handler.type: unknown handler type 'ftp'",
          "endpoints[3].schema.input: must be a JSON Schema (an object or a boolean)",
          "endpoints[3].schema.output.x-broken: marked broken", "view.component.url: is required",
          "view.fallback: must be one of list, table, json", "view.theme.bg: must be a string",
          "types.T: must be an object", "types.U.properties.v.x-broken: marked broken",
          "permissions.fileAccess: must be an array of strings",
          "permissions.networkAccess: must be a boolean or an array of host names",
          "permissions.maxMemory: must be a non-negative number (bytes)"));
}

TEST_F(ManifestTest, NonObjectDocumentIsOneProblem) {
  for (std::string_view text : {"null", "[]", "\"lavs\"", "1", "true"}) {
    EXPECT_FALSE(load_text(text).has_value()) << text;
    EXPECT_THAT(problem_strings(), ElementsAre("manifest must be a JSON object")) << text;
  }
}

TEST_F(ManifestTest, EmptyObjectNamesEveryRequiredField) {
  EXPECT_FALSE(load_text("{}").has_value());
  EXPECT_THAT(problem_strings(),
              UnorderedElementsAre("lavs: is required", "name: is required", "version: is required",
                                   "endpoints: is required"));
}

/// Sets the member or element at `path` (object keys and array indexes) of `doc`, creating the
/// objects on the way that do not exist yet.
void set_at(json::value& doc, const std::vector<std::variant<std::string, std::size_t>>& path,
            json::value v) {
  json::value* cur = &doc;
  for (const auto& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (cur->is_null()) {
        *cur = json::object();
      }
      cur = &cur->as_object()[*key];
    } else {
      cur = &cur->as_array().at(std::get<std::size_t>(step));
    }
  }
  *cur = std::move(v);
}

struct FieldCase {
  std::vector<std::variant<std::string, std::size_t>> path;
  std::string value;     ///< JSON text
  std::string expected;  ///< the one problem, or "" when the document must load
};

TEST_F(ManifestTest, EveryFieldChecksItsType) {
  using P = std::vector<std::variant<std::string, std::size_t>>;
  const P ep = {"endpoints", std::size_t{0}};
  auto at = [&](std::initializer_list<std::variant<std::string, std::size_t>> rest) {
    P p = ep;
    p.insert(p.end(), rest.begin(), rest.end());
    return p;
  };
  const std::vector<FieldCase> cases = {
      {{"lavs"}, "1.0", "lavs: must be \"1.0\""},
      {{"lavs"}, "\"1.0.0\"", "lavs: must be \"1.0\""},
      {{"lavs"}, "null", "lavs: must be \"1.0\""},
      {{"name"}, "7", "name: must be a string"},
      {{"name"},
       "\"\"",
       "name: must start with a letter and hold only letters, digits, '_' and '-'"},
      {{"name"},
       "\"has space\"",
       "name: must start with a letter and hold only letters, digits, '_' and '-'"},
      {{"name"},
       "\"trailing\\n\"",
       "name: must start with a letter and hold only letters, digits, '_' and '-'"},
      {{"name"},
       "\"caf\\u00e9\"",
       "name: must start with a letter and hold only letters, digits, '_' and '-'"},
      {{"name"}, "\"A_b-9\"", ""},
      {{"version"}, "1", "version: must be a string"},
      {{"version"}, "\"1.0\"", "version: must be a semantic version such as 1.0.0"},
      {{"version"}, "\"x1.0.0\"", "version: must be a semantic version such as 1.0.0"},
      {{"version"}, "\"1.2.3-beta.1+build.5\"", ""},
      {{"version"}, "\"10.20.30\"", ""},
      {{"description"}, "[]", "description: must be a string"},
      {{"description"}, "\"\"", ""},
      {{"endpoints"}, "{}", "endpoints: must be an array"},
      {{"endpoints"}, "[]", "endpoints: must list at least one endpoint"},
      {{"endpoints"}, "null", "endpoints: must be an array"},
      {ep, "\"a\"", "endpoints[0]: must be an object"},
      {at({"id"}), "1", "endpoints[0].id: must be a string"},
      {at({"id"}), "\"-x\"",
       "endpoints[0].id: must start with a letter and hold only letters, digits, '_' and '-'"},
      {at({"method"}), "\"QUERY\"",
       "endpoints[0].method: must be one of query, mutation, subscription"},
      {at({"method"}), "0", "endpoints[0].method: must be one of query, mutation, subscription"},
      {at({"description"}), "false", "endpoints[0].description: must be a string"},
      {at({"handler"}), "null", "endpoints[0].handler: must be an object"},
      {at({"handler"}), "[]", "endpoints[0].handler: must be an object"},
      {at({"handler", "type"}), "1", "endpoints[0].handler.type: must be a string"},
      {at({"handler", "command"}), "[]", "endpoints[0].handler.command: must be a string"},
      {at({"schema"}), "true", "endpoints[0].schema: must be an object"},
      {at({"schema"}), "{}", ""},
      {at({"schema"}), R"({"examples": 1})", ""},
      {at({"schema", "input"}), "null",
       "endpoints[0].schema.input: must be a JSON Schema (an object or a boolean)"},
      {at({"schema", "output"}), "[]",
       "endpoints[0].schema.output: must be a JSON Schema (an object or a boolean)"},
      {at({"schema", "input"}), "false", ""},
      {at({"schema", "output"}), R"({"items": [{"x-broken": 0}]})",
       "endpoints[0].schema.output.items[0].x-broken: marked broken"},
      {at({"permissions"}), "[]", "endpoints[0].permissions: must be an object"},
      {at({"permissions"}), "{}", ""},
      {at({"permissions", "fileAccess"}), "\"**\"",
       "endpoints[0].permissions.fileAccess: must be an array of strings"},
      {at({"permissions", "fileAccess"}), "[]", ""},
      {at({"permissions", "networkAccess"}), "null",
       "endpoints[0].permissions.networkAccess: must be a boolean or an array of host names"},
      {at({"permissions", "networkAccess"}), "[\"a.com\", null]",
       "endpoints[0].permissions.networkAccess[1]: must be a string"},
      {at({"permissions", "maxExecutionTime"}), "\"5s\"",
       "endpoints[0].permissions.maxExecutionTime: must be a non-negative number (milliseconds)"},
      {at({"permissions", "maxExecutionTime"}), "-0.5",
       "endpoints[0].permissions.maxExecutionTime: must be a non-negative number (milliseconds)"},
      {at({"permissions", "maxMemory"}), "-1",
       "endpoints[0].permissions.maxMemory: must be a non-negative number (bytes)"},
      {at({"permissions", "maxMemory"}), "true",
       "endpoints[0].permissions.maxMemory: must be a non-negative number (bytes)"},
      {{"permissions"}, "\"all\"", "permissions: must be an object"},
      {{"permissions", "maxExecutionTime"},
       "null",
       "permissions.maxExecutionTime: must be a non-negative number (milliseconds)"},
      {{"types"}, "[]", "types: must be an object"},
      {{"types"}, "{\"A\": true}", "types.A: must be an object"},
      {{"types"}, "{\"a.b\": 1}", "types[\"a.b\"]: must be an object"},
      {{"types"}, "{}", ""},
      {{"view"}, "null", "view: must be an object"},
      {{"view"}, "{}", "view.component: is required"},
      {{"view"}, R"({"component": "x.js"})", "view.component: must be an object"},
      {{"view"}, R"({"component": {}})", "view.component.type: is required"},
      {{"view"}, R"({"component": {"type": 1}})", "view.component.type: must be a string"},
      {{"view"},
       R"({"component": {"type": "git"}})",
       "view.component.type: must be one of cdn, npm, local, inline"},
      {{"view"},
       R"({"component": {"type": "cdn", "url": "views/x.js"}})",
       "view.component.url: must be an absolute URI"},
      {{"view"},
       R"({"component": {"type": "cdn", "url": "https://x/a b.js"}})",
       "view.component.url: must be an absolute URI"},
      {{"view"},
       R"({"component": {"type": "cdn", "url": "https://x/a.js", "exportName": 1}})",
       "view.component.exportName: must be a string"},
      {{"view"}, R"({"component": {"type": "npm"}})", "view.component.package: is required"},
      {{"view"},
       R"({"component": {"type": "npm", "package": "p", "version": 2}})",
       "view.component.version: must be a string"},
      {{"view"}, R"({"component": {"type": "npm", "package": "p", "version": "^2"}})", ""},
      {{"view"},
       R"({"component": {"type": "local", "path": null}})",
       "view.component.path: must be a string"},
      {{"view"}, R"({"component": {"type": "local", "path": "views/v.js"}})", ""},
      {{"view"},
       R"({"component": {"type": "inline", "code": []}})",
       "view.component.code: must be a string"},
      {{"view"},
       R"({"component": {"type": "inline", "code": "export default 1"}, "icon": 3})",
       "view.icon: must be a string"},
      {{"view"},
       R"({"component": {"type": "inline", "code": ""}, "theme": []})",
       "view.theme: must be an object of strings"},
      {{"view"},
       R"({"component": {"type": "inline", "code": ""}, "theme": {"--a b": 1}})",
       "view.theme[\"--a b\"]: must be a string"},
      {{"view"},
       R"({"component": {"type": "inline", "code": ""}, "fallback": "json", "theme": {"c": "red"}})",
       ""},
      {{"x-vendor"}, R"({"anything": [1, null]})", ""},
      {at({"x-extra"}), "null", ""},
  };
  for (const auto& c : cases) {
    json::value doc = parse(kMinimal);
    set_at(doc, c.path, parse(c.value));
    auto m = load_value(doc);
    const std::string label = json::dump(doc);
    if (c.expected.empty()) {
      EXPECT_TRUE(m.has_value()) << label << "\n" << ::testing::PrintToString(problem_strings());
      if (m) {
        EXPECT_EQ(m->raw, doc) << label;  // unknown members are kept as written
      }
    } else {
      EXPECT_FALSE(m.has_value()) << label;
      EXPECT_THAT(problem_strings(), ElementsAre(c.expected)) << label;
    }
  }
}

TEST_F(ManifestTest, DuplicateIdsNameBothIndexes) {
  json::value doc = parse(kMinimal);
  auto& endpoints = doc.as_object()["endpoints"].as_array();
  const json::value first = endpoints[0];
  for (std::string_view id : {"b", "a", "c", "a"}) {
    json::value ep = first;
    ep.as_object()["id"] = id;
    endpoints.push_back(ep);
  }
  EXPECT_FALSE(load_value(doc).has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("endpoints[2].id: duplicate endpoint id 'a' (also endpoints[0])",
                          "endpoints[4].id: duplicate endpoint id 'a' (also endpoints[0])"));
}

TEST_F(ManifestTest, IdsDifferingInCaseAreDistinct) {
  json::value doc = parse(kMinimal);
  auto& endpoints = doc.as_object()["endpoints"].as_array();
  json::value ep = endpoints[0];
  ep.as_object()["id"] = "A";
  endpoints.push_back(ep);
  auto m = load_value(doc);
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("A"), nullptr);
  EXPECT_NE(m->find("a"), m->find("A"));
}

TEST_F(ManifestTest, HandlerKindProblemsUseTheEndpointPath) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"0.0.1","endpoints":[
      {"id":"a","method":"query","handler":{"type":"mcp","server":"gh"}},
      {"id":"b","method":"query","handler":{"type":"function","module":"m.js","function":"f"}}]})");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("endpoints[0].handler.tool: is required",
                          "endpoints[1].handler.type: unknown handler type 'function'"));
  EXPECT_THAT(kinds_.checked,
              ElementsAre("endpoints[0].handler=mcp", "endpoints[1].handler=function"));
}

TEST_F(ManifestTest, EndpointsKeepTheConfigTheirKindParsed) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"0.0.1","endpoints":[
      {"id":"a","method":"query","handler":{"type":"script","command":"./run.sh"}},
      {"id":"b","method":"query","handler":{"type":"mcp","server":"gh","tool":"t"}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  const auto* a = dynamic_cast<const FakeConfig*>(m->endpoints[0].handler_config.get());
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type, "script");
  EXPECT_EQ(a->target, "./run.sh");
  const auto* b = dynamic_cast<const FakeConfig*>(m->endpoints[1].handler_config.get());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, "mcp");
  EXPECT_EQ(b->target, "gh");
  // The handler object as written stays beside it.
  EXPECT_EQ(m->endpoints[1].handler.at("tool"), "t");
}

// ---------------------------------------------------------------------------------------------
// Types and schemas.

TEST_F(ManifestTest, TypesAreCompiledOnceEachAndPassedToEndpointSchemas) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "types": {"Todo": {"type":"object"}, "Tag": {"type":"string"}},
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"input":{"$ref":"#/types/Todo"},"output":{"type":"array","items":{"$ref":"#/types/Tag"}}}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_EQ(compiler_.calls, 4);
  EXPECT_EQ(m->types.size(), 2u);
}

TEST_F(ManifestTest, UnusedBrokenTypeIsReported) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "types": {"Used": {"type":"object"}, "Unused": {"properties": {"a": {"$ref": "#/types/Gone"}}}},
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"input":{"$ref":"#/types/Used"}}}]})");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("types.Unused.properties.a.$ref: '#/types/Gone' does not "
                          "name a type in 'types'"));
}

TEST_F(ManifestTest, BrokenTypeIsReportedOnceAtItsOwnPathHoweverManyUseIt) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "types": {"Todo": {"properties": {"done": {"x-broken": 1}}},
              "List": {"type": "array", "items": {"$ref": "#/types/Todo"}}},
    "endpoints":[
      {"id":"a","method":"query","handler":{"type":"script","command":"x"},
       "schema":{"input":{"$ref":"#/types/Todo"},"output":{"$ref":"#/types/List"}}},
      {"id":"b","method":"query","handler":{"type":"script","command":"x"},
       "schema":{"output":{"properties":{"x-broken":{}}, "items":{"$ref":"#/types/Todo"}}}}]})");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("types.Todo.properties.done.x-broken: marked broken",
                          "endpoints[1].schema.output.properties.x-broken: marked broken"));
}

TEST_F(ManifestTest, UnresolvedReferenceInEndpointSchemaIsPrefixed) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"output":{"type":"array","items":{"$ref":"#/types/Todo"}}}}]})");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("endpoints[0].schema.output.items.$ref: '#/types/Todo' does "
                          "not name a type in 'types'"));
}

TEST_F(ManifestTest, BrokenTypesDoNotCascadeIntoEveryReference) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0", "types": ["Todo"],
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"input":{"$ref":"#/types/Todo"},"output":{"$ref":"#/types/Todo"}}}]})");
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(), ElementsAre("types: must be an object"));
}

TEST_F(ManifestTest, CompilerThatFailsSilentlyStillRefusesTheManifest) {
  SilentFailingCompiler compiler;
  auto m = load_document(parse(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"input":{}}}]})"),
                         "/srv/s", kinds_, compiler, problems_);
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(),
              ElementsAre("endpoints[0].schema.input: is not a usable JSON Schema"));
}

TEST_F(ManifestTest, ThrowingCompilerBecomesAProblem) {
  ThrowingCompiler compiler;
  std::optional<Manifest> m;
  EXPECT_NO_THROW(m = load_document(parse(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
      "schema":{"input":{}}}]})"),
                                    "/srv/s", kinds_, compiler, problems_));
  EXPECT_FALSE(m.has_value());
  EXPECT_THAT(problem_strings(), ElementsAre("manifest could not be loaded: engine exploded"));
}

// ---------------------------------------------------------------------------------------------
// Permissions.

TEST_F(ManifestTest, EndpointPermissionsOverrideFieldByField) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "permissions": {"fileAccess":["./data/**"], "networkAccess": true, "maxExecutionTime": 1000,
                    "maxMemory": 4096},
    "endpoints":[
      {"id":"a","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"fileAccess": ["./other/*.json", "!./other/secret.json"], "maxExecutionTime": 0}},
      {"id":"b","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"networkAccess": ["api.example.com"], "maxExecutionTime": 2.2, "maxMemory": 0.5}},
      {"id":"c","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"fileAccess": [], "networkAccess": false}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  ASSERT_EQ(m->endpoints.size(), 3u);

  // maxExecutionTime 0 is "no limit of its own": the manifest's 1000 ms applies.
  EXPECT_EQ(json::value(m->endpoints[0].effective.to_json()),
            parse(R"({"fileAccess":["./other/*.json","!./other/secret.json"],"networkAccess":true,
                      "maxExecutionTime":1000,"maxMemory":4096})"));
  EXPECT_FALSE(m->endpoints[0].permissions.max_execution_time.has_value());
  // Fractions round up: 2.2 ms -> 3 ms, 0.5 bytes -> 1 byte.
  EXPECT_EQ(json::value(m->endpoints[1].effective.to_json()),
            parse(R"({"fileAccess":["./data/**"],"networkAccess":["api.example.com"],
                      "maxExecutionTime":3,"maxMemory":1})"));
  // An empty list replaces the manifest's list (no files at all), false replaces true.
  EXPECT_EQ(
      json::value(m->endpoints[2].effective.to_json()),
      parse(R"({"fileAccess":[],"networkAccess":false,"maxExecutionTime":1000,"maxMemory":4096})"));
  // The endpoint's own declaration stays as written.
  EXPECT_EQ(json::value(m->endpoints[2].permissions.to_json()),
            parse(R"({"fileAccess":[],"networkAccess":false})"));
}

TEST_F(ManifestTest, NetworkAccessHostListsAreParsedWhenTheManifestLoads) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "permissions": {"networkAccess": ["api.example.com:443", "*.example.org"]},
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"}},
      {"id":"b","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"networkAccess": []}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  const auto& a = m->endpoints[0].effective.network_access;
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->mode(), egress::NetworkPolicy::Mode::kList);
  EXPECT_TRUE(a->list().allows("api.example.com", 443));
  EXPECT_FALSE(a->list().allows("api.example.com", 80));
  EXPECT_TRUE(a->list().allows("x.example.org", 80));
  const auto& b = m->endpoints[1].effective.network_access;
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->mode(), egress::NetworkPolicy::Mode::kList);
  EXPECT_TRUE(b->list().empty());
}

TEST_F(ManifestTest, MalformedHostListsAreLoadProblems) {
  // What the egress proxy could not enforce never loads, wherever it is declared.
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "permissions": {"networkAccess": ["*.com"]},
    "endpoints":[{"id":"a","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"networkAccess": ["ok.example.com", "bad host name!"]}}]})");
  EXPECT_FALSE(m.has_value());
  ASSERT_EQ(problems_.size(), 2u) << ::testing::PrintToString(problem_strings());
  EXPECT_EQ(problems_[0].path, "permissions.networkAccess");
  EXPECT_EQ(problems_[0].message, egress::AllowList::parse({"*.com"}).error().message);
  EXPECT_TRUE(problems_[0].message.starts_with("network access entry 0 '*.com': "))
      << problems_[0].message;
  EXPECT_EQ(problems_[1].path, "endpoints[0].permissions.networkAccess");
  EXPECT_TRUE(problems_[1].message.starts_with("network access entry 1 'bad host name!': "))
      << problems_[1].message;
}

TEST(Permissions, EffectiveKeepsServiceFieldsTheEndpointLeavesOut) {
  Permissions service;
  service.file_access = std::vector<std::string>{"a"};
  service.max_memory = 10;
  Permissions endpoint;
  endpoint.network_access = egress::NetworkPolicy::parse({"h"}).value();
  endpoint.max_memory = 20;
  const Permissions e = Permissions::effective(service, endpoint);
  EXPECT_EQ(e.file_access, service.file_access);
  EXPECT_EQ(e.network_access, endpoint.network_access);
  EXPECT_FALSE(e.max_execution_time.has_value());
  EXPECT_EQ(e.max_memory, 20u);
  EXPECT_EQ(json::value(Permissions{}.to_json()), json::value(json::object()));
}

TEST_F(ManifestTest, HugeNumbersAreClampedNotRefused) {
  auto m = load_text(R"({"lavs":"1.0","name":"s","version":"1.0.0",
    "permissions": {"maxExecutionTime": 1e400, "maxMemory": 18446744073709551615},
    "endpoints":[
      {"id":"a","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"maxExecutionTime": 123456789012345678901234567890, "maxMemory": 1e30}},
      {"id":"b","method":"query","handler":{"type":"script","command":"x"},
       "permissions": {"maxExecutionTime": 1e-400, "maxMemory": 9007199254740993}}]})");
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  const auto cap = m->permissions.max_execution_time;
  ASSERT_TRUE(cap.has_value());
  // Still addable to a steady_clock time point without overflow.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::nanoseconds>(*cap).count(),
            std::numeric_limits<std::int64_t>::max() / 2);
  EXPECT_GE(*cap, std::chrono::hours(24 * 365 * 50));
  EXPECT_EQ(m->permissions.max_memory, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(m->endpoints[0].permissions.max_execution_time, cap);
  EXPECT_EQ(m->endpoints[0].permissions.max_memory, std::numeric_limits<std::uint64_t>::max());
  // 1e-400 parses as 0: no limit of its own. Integers keep every bit.
  EXPECT_EQ(m->endpoints[1].effective.max_execution_time, cap);
  EXPECT_EQ(m->endpoints[1].permissions.max_memory, 9007199254740993u);
  // What lavs/manifest sends back stays JSON: no Infinity.
  EXPECT_EQ(json::dump(m->raw).find("Infinity"), std::string::npos) << json::dump(m->raw);
}

TEST_F(ManifestTest, NonFiniteNumbersFromAnInMemoryDocumentAreHandled) {
  json::value doc = parse(kMinimal);
  doc.as_object()["permissions"] = json::object{
      {"maxExecutionTime", std::nan("")}, {"maxMemory", -std::numeric_limits<double>::infinity()}};
  EXPECT_FALSE(load_value(doc).has_value());
  EXPECT_THAT(problem_strings(),
              UnorderedElementsAre(
                  "permissions.maxExecutionTime: must be a non-negative number (milliseconds)",
                  "permissions.maxMemory: must be a non-negative number (bytes)"));
}

// ---------------------------------------------------------------------------------------------
// Files and folders.

TEST_F(ManifestTest, LoadAcceptsTheFileItselfAndCanonicalisesTheFolder) {
  TempDir tmp;
  tmp.write("svc/lavs.json", kMinimal);
  fs::create_directories(tmp.path() / "other");
  auto m = load(tmp.path() / "other" / ".." / "svc" / "lavs.json", kinds_, compiler_, problems_);
  ASSERT_TRUE(m.has_value()) << ::testing::PrintToString(problem_strings());
  EXPECT_EQ(m->dir, fs::canonical(tmp.path() / "svc"));
  EXPECT_EQ(m->file, m->dir / "lavs.json");
  EXPECT_TRUE(m->dir.is_absolute());
}

TEST_F(ManifestTest, MissingManifestIsAProblem) {
  TempDir tmp;
  EXPECT_FALSE(load(tmp.path(), kinds_, compiler_, problems_).has_value());
  ASSERT_EQ(problems_.size(), 1u);
  EXPECT_EQ(problems_[0].path, "");
  EXPECT_THAT(problems_[0].message, HasSubstr("cannot read"));
  EXPECT_THAT(problems_[0].message, HasSubstr("lavs.json"));

  problems_.clear();
  EXPECT_FALSE(load(tmp.path() / "nowhere", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("cannot read")));
}

TEST_F(ManifestTest, UnreadableManifestIsAProblem) {
  TempDir tmp;
  // A folder where the file should be: open() succeeds, read() fails, whoever runs the test.
  fs::create_directories(tmp.path() / "svc" / "lavs.json");
  EXPECT_FALSE(load(tmp.path() / "svc", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("cannot read")));
}

TEST_F(ManifestTest, InvalidJsonNamesTheLineAndColumn) {
  TempDir tmp;
  tmp.write("svc/lavs.json", "{\n  \"lavs\": \"1.0\",\n  oops\n}\n");
  EXPECT_FALSE(load(tmp.path() / "svc", kinds_, compiler_, problems_).has_value());
  ASSERT_EQ(problems_.size(), 1u);
  EXPECT_THAT(problems_[0].message, HasSubstr("not valid JSON at line 3, column 3"));

  problems_.clear();
  tmp.write("empty/lavs.json", "");
  EXPECT_FALSE(load(tmp.path() / "empty", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("not valid JSON at line 1, column 1")));

  problems_.clear();
  tmp.write("trailing/lavs.json", std::string(kMinimal) + "\n{}");
  EXPECT_FALSE(load(tmp.path() / "trailing", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("not valid JSON")));

  problems_.clear();
  tmp.write("deep/lavs.json", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_FALSE(load(tmp.path() / "deep", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("not valid JSON")));

  problems_.clear();
  tmp.write("utf8/lavs.json", "{\"lavs\": \"\xff\"}");
  EXPECT_FALSE(load(tmp.path() / "utf8", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("not valid JSON")));
}

TEST_F(ManifestTest, OversizedManifestIsRefusedBeforeParsing) {
  TempDir tmp;
  std::string big = R"({"lavs":"1.0","pad":")";
  big += std::string(std::size_t{4} * 1024 * 1024, 'x');
  big += "\"}";
  tmp.write("big/lavs.json", big);
  EXPECT_FALSE(load(tmp.path() / "big", kinds_, compiler_, problems_).has_value());
  EXPECT_THAT(problem_strings(), ElementsAre(HasSubstr("is larger than 4 MiB")));
}

TEST(Discover, FindsTheFolderItselfOrItsServiceSubfoldersSortedByName) {
  TempDir tmp;
  const fs::path root = fs::canonical(tmp.path());
  tmp.write("services/zeta/lavs.json", "{}");
  tmp.write("services/alpha/lavs.json", "{}");
  tmp.write("services/mid/lavs.json", "not even JSON: discovery does not parse");
  tmp.write("services/empty/readme.txt", "no manifest here");
  tmp.write("services/notes.txt", "a file");
  tmp.write("services/nested/deeper/lavs.json", "{}");  // not immediate: ignored
  fs::create_directories(tmp.path() / "services" / "dir-named" / "lavs.json");  // not a file

  const fs::path services = root / "services";
  EXPECT_THAT(discover(tmp.path() / "services"),
              ElementsAre(services / "alpha", services / "mid", services / "zeta"));
  EXPECT_THAT(discover(services / "alpha"), ElementsAre(services / "alpha"));
  EXPECT_THAT(discover(services / "alpha" / "lavs.json"), ElementsAre(services / "alpha"));
  EXPECT_THAT(discover(services / "empty"), IsEmpty());
  EXPECT_THAT(discover(services / "notes.txt"), IsEmpty());
  EXPECT_THAT(discover(root / "does-not-exist"), IsEmpty());

  // A folder holding lavs.json is one service, even with services below it.
  tmp.write("services/lavs.json", "{}");
  EXPECT_THAT(discover(services), ElementsAre(services));
}

// ---------------------------------------------------------------------------------------------
// Robustness: random subtrees of valid manifests replaced by random JSON values.

class Mutator {
 public:
  explicit Mutator(std::uint32_t seed) : rng_(seed) {}

  json::value random_value(int depth) {
    static const std::vector<std::string> kStrings = {
        "",    "1.0",  "query", "mutation",         "subscription", "script",       "mcp",
        "cdn", "npm",  "local", "inline",           "list",         "#/types/Todo", "#/types/Nope",
        "x",   "9bad", "a b",   "https://x.y/z.js", "1.0.0",        "\xc3\xa9"};
    static const std::vector<std::string> kKeys = {"lavs",
                                                   "name",
                                                   "version",
                                                   "description",
                                                   "endpoints",
                                                   "view",
                                                   "types",
                                                   "permissions",
                                                   "id",
                                                   "method",
                                                   "handler",
                                                   "schema",
                                                   "input",
                                                   "output",
                                                   "type",
                                                   "command",
                                                   "server",
                                                   "tool",
                                                   "component",
                                                   "url",
                                                   "fallback",
                                                   "theme",
                                                   "fileAccess",
                                                   "networkAccess",
                                                   "maxExecutionTime",
                                                   "maxMemory",
                                                   "$ref",
                                                   "x-broken",
                                                   "Todo",
                                                   "items",
                                                   "properties"};
    const std::size_t choice = pick(depth > 3 ? 8 : 10);
    switch (choice) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 0;
      case 2:
        return static_cast<std::int64_t>(rng_()) - (std::int64_t{1} << 31);
      case 3: {
        static const std::vector<double> kDoubles = {0.0,
                                                     -0.0,
                                                     0.5,
                                                     -1.5,
                                                     1e308,
                                                     -1e308,
                                                     std::numeric_limits<double>::infinity(),
                                                     -std::numeric_limits<double>::infinity(),
                                                     std::nan(""),
                                                     4.9e-324};
        return kDoubles[pick(kDoubles.size())];
      }
      case 4:
        return pick(2) == 0 ? json::value(std::numeric_limits<std::uint64_t>::max())
                            : json::value(std::numeric_limits<std::int64_t>::min());
      case 5:
      case 6:
      case 7:
        return json::value(json::string(kStrings[pick(kStrings.size())]));
      case 8: {
        json::array arr;
        const std::size_t n = pick(4);
        for (std::size_t i = 0; i < n; ++i) {
          arr.push_back(random_value(depth + 1));
        }
        return arr;
      }
      default: {
        json::object obj;
        const std::size_t n = pick(5);
        for (std::size_t i = 0; i < n; ++i) {
          obj[kKeys[pick(kKeys.size())]] = random_value(depth + 1);
        }
        return obj;
      }
    }
  }

  /// Replaces one random node (the root included) with a random value.
  void mutate(json::value& doc) {
    std::vector<json::value*> nodes;
    collect(doc, nodes);
    *nodes[pick(nodes.size())] = random_value(0);
  }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  static void collect(json::value& v, std::vector<json::value*>& out) {
    out.push_back(&v);
    if (v.is_object()) {
      for (auto& kv : v.as_object()) {
        collect(kv.value(), out);
      }
    } else if (v.is_array()) {
      for (auto& item : v.as_array()) {
        collect(item, out);
      }
    }
  }

  std::mt19937 rng_;
};

TEST_F(ManifestTest, RandomlyMutatedDocumentsNeverCrashAndNeverHalfLoad) {
  const std::vector<std::string_view> bases = {kSpecExample47, kSpecExample81, kSpecExample82,
                                               kSpecExample83, kMinimal};
  Mutator mutator(20240611);
  int loaded = 0;
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    json::value doc = parse(bases[static_cast<std::size_t>(round) % bases.size()]);
    const int mutations = 1 + round % 4;
    for (int i = 0; i < mutations; ++i) {
      mutator.mutate(doc);
    }
    auto m = load_value(doc);
    // Exactly one of: a manifest and no problem, or no manifest and at least one problem.
    ASSERT_NE(m.has_value(), !problems_.empty()) << json::dump(doc);
    for (const auto& p : problems_) {
      ASSERT_FALSE(p.message.empty()) << json::dump(doc);
    }
    if (m) {
      ++loaded;
      ASSERT_FALSE(m->endpoints.empty());
      ASSERT_EQ(json::dump(m->raw), json::dump(doc));  // dump: NaN != NaN
      for (const auto& ep : m->endpoints) {
        ASSERT_EQ(m->find(ep.id), &ep);
      }
    } else {
      ++refused;
    }
  }
  // Both outcomes must be exercised, or the loop tests little.
  EXPECT_GT(loaded, 100);
  EXPECT_GT(refused, 100);
}

TEST_F(ManifestTest, RandomBytesInTheFileNeverCrash) {
  TempDir tmp;
  std::mt19937 rng(7);
  const std::string base(kSpecExample47);
  for (int round = 0; round < 300; ++round) {
    std::string text = base;
    for (int i = 0; i < 1 + round % 8; ++i) {
      text[std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng)] =
          static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    }
    tmp.write("svc/lavs.json", text);
    problems_.clear();
    auto m = load(tmp.path() / "svc", kinds_, compiler_, problems_);
    ASSERT_NE(m.has_value(), !problems_.empty());
  }
}

}  // namespace
}  // namespace hearth::manifest
