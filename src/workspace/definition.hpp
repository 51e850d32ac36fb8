#pragma once
/// A virtual workspace's definition: `workspace.yaml` in a folder (docs/workspace.md), read and
/// checked once. Every problem names its place (`components[0].states.search.schema.type: ...`);
/// a definition with any problem is not served.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/problem.hpp"
#include "common/result.hpp"
#include "json/json.hpp"
#include "schema/schema.hpp"

namespace hearth::workspace {

/// What the model may do with a public state.
enum class Access : std::uint8_t { kRead, kWrite, kReadWrite };

std::string_view to_string(Access access);  ///< "r", "w", "rw"

/// A LAVS endpoint a workspace calls: a side effect, its compensation, or a source.
struct EndpointCall {
  std::string service;
  std::string endpoint;
  /// The input, where an object {"$value": "/pointer"} stands for that part of the changed
  /// state's new value (the whole value for ""), and {"$state": "name", "pointer": "/p"} for a
  /// part of another state's (committed or new) value.
  json::value input;
};

struct SideEffect {
  EndpointCall call;
  /// The state the call's result replaces, in the same change (validated like any change).
  std::optional<std::string> assign;
  /// Undoes `call` when a later side effect of the same change fails; absent: irreversible.
  std::optional<EndpointCall> compensate;
};

/// Where a read-only state's value comes from.
struct Source {
  EndpointCall call;  ///< a query endpoint, or a subscription endpoint
  bool subscription = false;
  bool on_open = true;        ///< queried when the workspace opens (a subscription: always)
  bool after_commit = false;  ///< queried again after every committed change
  std::string pointer;        ///< the part of the result that becomes the value ("" all of it)
};

struct StateDef {
  std::string name;
  std::string component;
  std::string path;  ///< where it is defined ("components[0].states.search"), for messages
  bool is_public = true;
  Access access = Access::kRead;  ///< public states only
  std::string description;
  json::value schema_json;
  std::shared_ptr<const schema::Schema> schema;
  json::value initial;       ///< validated against the schema
  std::string side_effects;  ///< the description the model reads
  std::vector<SideEffect> effects;
  std::optional<Source> source;

  bool readable() const { return is_public && access != Access::kWrite; }
  bool writable() const { return is_public && access != Access::kRead; }
};

struct Utility {
  std::string name;
  std::string params;  ///< as declared: "text, limit = 10"
  std::string doc;     ///< the comment right above the declaration
  std::string file;
  bool is_async = false;
};

struct Example {
  std::string component;
  std::string title;
  std::string script;
};

struct Component {
  std::string id;
  std::string description;
  std::vector<std::string> states;  ///< in declaration order
};

struct Limits {
  std::chrono::milliseconds timeout{5000};
  std::uint64_t memory_bytes = std::uint64_t{100} << 20;
  std::size_t console_bytes = std::size_t{64} << 10;  ///< console output kept per script
  std::size_t state_bytes = std::size_t{1} << 20;     ///< one state's value as JSON text
  std::size_t script_bytes = std::size_t{256} << 10;
};

struct Grants {
  bool time = false;    ///< Date.now() and new Date(): pinned to the change's time
  bool random = false;  ///< Math.random(): seeded per change (the seed is recorded)
  /// false: no network; true: any host; a list: those hosts (networkAccess entries).
  std::variant<bool, std::vector<std::string>> network = false;
  std::optional<std::vector<std::string>> files;  ///< fileAccess globs under the folder
};

struct Definition {
  std::string name;  ///< the workspace id
  std::string description;
  std::filesystem::path dir;
  std::vector<Component> components;
  std::vector<StateDef> states;  ///< in declaration order
  std::vector<Utility> utilities;
  std::vector<std::string> utility_files;  ///< relative to dir
  std::string utilities_source;            ///< the files' text, in order
  std::vector<Example> examples;
  Limits limits;
  Grants grants;
  json::value completion_schema_json;  ///< null: any result
  std::shared_ptr<const schema::Schema> completion_schema;

  const StateDef* find(std::string_view name) const;
};

/// Reads `dir`/workspace.yaml (or .yml, .json). Problems are appended with their paths; the
/// definition is returned only when there were none.
std::optional<Definition> load_definition(const std::filesystem::path& dir, Problems& problems);

/// Checks a definition given as a JSON value (the file's contents), with `dir` for its files.
std::optional<Definition> parse_definition(const json::value& document,
                                           const std::filesystem::path& dir, Problems& problems);

/// The top-level function declarations of a utilities file, with their comments.
std::vector<Utility> scan_utilities(std::string_view source, const std::string& file);

/// A workspace id: 1-64 of [a-z0-9_-], starting with a letter or digit.
bool is_workspace_name(std::string_view name);

}  // namespace hearth::workspace
