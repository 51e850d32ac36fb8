#pragma once
/// The LAVS manifest model (lavs-spec-v1 section 4) and its loader.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/problem.hpp"
#include "json/json.hpp"
#include "permissions/permissions.hpp"
#include "schema/schema.hpp"

namespace hearth::manifest {

/// An endpoint's `method` (spec 4.2.1).
enum class Method { kQuery, kMutation, kSubscription };
/// The wire name: "query", "mutation" or "subscription".
std::string_view to_string(Method m);

/// Permissions (spec 4.6), parsed here: the type lives below the manifest so that what enforces
/// them (confine, jsworker) need not know the manifest.
using Permissions = permissions::Permissions;

/// A handler object as its kind parsed it when the manifest loaded. Each handler kind derives
/// its own typed configuration from it; the manifest knows none of them (see HandlerKinds).
struct HandlerConfig {
  HandlerConfig() = default;
  HandlerConfig(const HandlerConfig&) = default;
  HandlerConfig& operator=(const HandlerConfig&) = default;
  virtual ~HandlerConfig() = default;
};

/// One entry of `endpoints`, checked and with its schemas compiled.
struct Endpoint {
  std::string id;
  Method method = Method::kQuery;
  std::string description;
  std::string handler_type;  ///< handler.type, e.g. "script"
  json::object handler;      ///< the handler object as written
  /// `handler` as its kind parsed it (HandlerKinds::parse); null for endpoints built without the
  /// loader, whose kinds parse `handler` when they create the handler.
  std::shared_ptr<const HandlerConfig> handler_config;
  std::shared_ptr<const schema::Schema> input_schema;   ///< null: any input
  std::shared_ptr<const schema::Schema> output_schema;  ///< null: any output
  Permissions permissions;                              ///< as declared on the endpoint
  Permissions effective;                                ///< endpoint over manifest
};

/// A loaded lavs.json (spec 4.1): every field checked, nothing half loaded.
struct Manifest {
  std::string lavs;
  std::string name;
  std::string version;
  std::string description;
  std::vector<Endpoint> endpoints;
  json::value view;  ///< null when absent
  json::object types;
  Permissions permissions;
  json::value raw;             ///< the document as read, returned by lavs/manifest
  std::filesystem::path dir;   ///< absolute, canonical service folder
  std::filesystem::path file;  ///< absolute path of lavs.json
  /// What loads but is likely a mistake (unknown_keys()): reported, refused only when strict.
  Problems warnings;

  /// The endpoint with this id, or nullptr.
  const Endpoint* find(std::string_view endpoint_id) const;
};

/// What the loader needs from the handler kinds (implemented by handlers::Registry), so that the
/// manifest does not depend on the handlers.
class HandlerKinds {
 public:
  virtual ~HandlerKinds() = default;
  /// Parses a handler object of kind `type`: appends every problem under `path` (e.g.
  /// "endpoints[1].handler") and returns the kind's typed configuration, null when there was a
  /// problem. Unknown kinds and kinds hearth does not run are problems too.
  virtual std::shared_ptr<const HandlerConfig> parse(std::string_view type,
                                                     const json::object& handler,
                                                     const std::string& path,
                                                     Problems& problems) const = 0;
  /// The members a handler object of kind `type` may have besides `type`; empty when the kind
  /// does not say (its members are then not checked for misspellings).
  virtual std::vector<std::string_view> handler_keys(std::string_view /*type*/) const { return {}; }
};

/// Members of a manifest that LAVS does not define (a misspelt `fileAcess` would otherwise read
/// as "nothing declared"): one problem each, at its JSON path, naming the closest known key.
/// Keys beginning with `x-` (extensions) and `$schema` are left alone, as is the inside of
/// schemas and `types` (JSON Schema), `env`, `headers`, `theme` and `variables`.
Problems unknown_keys(const json::value& doc, const HandlerKinds& kinds);

/// Loads `path` (a lavs.json file, or a folder holding one). Returns the manifest, or nullopt with
/// every problem found listed in `problems` (nothing is ever half loaded).
std::optional<Manifest> load(const std::filesystem::path& path, const HandlerKinds& kinds,
                             const schema::Compiler& compiler, Problems& problems);

/// The text of `path` (a lavs.json file, or a folder holding one), read within the size limit.
std::optional<std::string> read_text(const std::filesystem::path& path, Problems& problems);

/// Same as load(), from the text of the manifest file `file`.
std::optional<Manifest> load_text(std::string_view text, const std::filesystem::path& file,
                                  const HandlerKinds& kinds, const schema::Compiler& compiler,
                                  Problems& problems);

/// Same, from a document already parsed; `dir` is the service folder.
std::optional<Manifest> load_document(const json::value& doc, const std::filesystem::path& dir,
                                      const HandlerKinds& kinds, const schema::Compiler& compiler,
                                      Problems& problems);

/// The service folders under `path`: `path` itself when it holds lavs.json, else each immediate
/// subfolder that holds one (sorted by name).
std::vector<std::filesystem::path> discover(const std::filesystem::path& path);

}  // namespace hearth::manifest
