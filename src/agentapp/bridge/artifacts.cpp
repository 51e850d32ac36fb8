// lime.artifacts: content-addressed artifacts of the types the app declares, checked against
// their schemas, with provenance (records.hpp).
#include <fstream>
#include <optional>
#include <sstream>

#include "agentapp/bridge/capability.hpp"
#include "schema/schema.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

/// The declaration of artifact type `type` in the app's front matter, or nullptr.
const json::object* declared_artifact_type(const json::object& fm, std::string_view type) {
  const auto* list = fm.if_contains("artifactTypes");
  const json::object* declared = nullptr;
  if (list != nullptr && list->is_array()) {
    for (const auto& t : list->get_array()) {
      const auto* key = t.is_object() ? t.get_object().if_contains("key") : nullptr;
      if (key != nullptr && key->is_string() && key->get_string() == type) {
        declared = &t.get_object();
      }
    }
  }
  return declared;
}

/// The compiled schema a declared artifact type names, nullptr when it names none.
Result<std::shared_ptr<const schema::Schema>> compile_artifact_schema(const fs::path& package,
                                                                      const json::object& declared,
                                                                      std::string_view type) {
  const auto* path = declared.if_contains("schema");
  if (path == nullptr || !path->is_string()) return std::shared_ptr<const schema::Schema>();
  const fs::path rel = fs::path(std::string(path->get_string())).lexically_normal();
  if (rel.is_absolute() || rel.empty() || *rel.begin() == "..") {
    return Error::make(ErrorCode::kInvalidParams,
                       "artifact type " + std::string(type) + ": its schema is not in the package");
  }
  std::ifstream in(package / rel, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = json::parse_text(text.str());
  if (!in || !parsed.ok() || !parsed.value().is_object()) {
    return Error::make(ErrorCode::kInvalidParams, "artifact type " + std::string(type) +
                                                      ": its schema " + rel.string() +
                                                      " is not a JSON object");
  }
  // hearth's engine is draft-07: the declared dialect is set aside (docs/agent-apps.md).
  parsed.value().as_object().erase("$schema");
  Problems problems;
  auto compiled = schema::make_draft7_compiler()->compile(parsed.value(), {}, problems);
  if (!compiled) {
    return Error::make(ErrorCode::kInvalidParams,
                       "artifact type " + std::string(type) + ": its schema cannot be used");
  }
  return compiled;
}

class ArtifactsCapability final : public Capability {
 public:
  std::string_view name() const override { return "lime.artifacts"; }

  const std::vector<Method>& methods() const override {
    static const std::vector<Method> kMethods = {{"create", {"artifact", "write"}},
                                                 {"read", {"artifact", "read"}},
                                                 {"list", {"artifact", "read"}}};
    return kMethods;
  }

  Result<json::value> invoke(CallContext& context) const override {
    ArtifactStore artifacts(context.data.database(), context.data_dir / "artifacts",
                            context.provenance, context.evidence);
    const std::string& method = context.call.method;
    if (method == "create") return create(context, artifacts);
    if (method == "read") {
      HEARTH_ASSIGN_OR_RETURN(auto id, context.string_param("id"));
      HEARTH_ASSIGN_OR_RETURN(auto record, artifacts.read(id));
      context.summary["artifact"] = id;
      return json::value(std::move(record));
    }
    HEARTH_ASSIGN_OR_RETURN(auto list, artifacts.list());
    return json::value(json::object{{"artifacts", std::move(list)}});
  }

 private:
  static Result<json::value> create(CallContext& context, ArtifactStore& artifacts) {
    HEARTH_ASSIGN_OR_RETURN(auto type, context.string_param("type"));
    const auto* content = context.param("content");
    if (content == nullptr) {
      return Error::make(ErrorCode::kInvalidParams,
                         "lime.artifacts.create: params.content is required");
    }
    // Writing an artifact of a type the app does not declare is outside its policy.
    const json::object* declared = declared_artifact_type(context.manifest.front_matter, type);
    if (declared == nullptr) {
      return context.refuse("policy",
                            "the app declares no artifact type '" + std::string(type) + "'");
    }
    HEARTH_ASSIGN_OR_RETURN(auto schema, compile_artifact_schema(context.app.dir, *declared, type));
    const bool text = content->is_string();
    const std::string bytes = text ? std::string(content->get_string()) : json::serialize(*content);
    const auto* media = context.param("mediaType");
    const std::string media_type = media != nullptr && media->is_string()
                                       ? std::string(media->get_string())
                                       : (text ? "text/plain" : "application/json");
    const auto* metadata = context.param("metadata");
    static const json::object kNoMetadata;
    HEARTH_ASSIGN_OR_RETURN(
        auto record,
        artifacts.create(
            type, media_type, bytes,
            metadata != nullptr && metadata->is_object() ? metadata->get_object() : kNoMetadata,
            schema.get()));
    context.summary["artifact"] = record["id"];
    return json::value(std::move(record));
  }
};

}  // namespace

std::unique_ptr<Capability> make_artifacts_capability() {
  return std::make_unique<ArtifactsCapability>();
}

}  // namespace hearth::agentapp
