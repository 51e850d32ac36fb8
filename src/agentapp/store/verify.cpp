#include "agentapp/store/verify.hpp"

#include <chrono>
#include <ctime>

#include "agentapp/package/nodefs.hpp"
#include "common/atomic_file.hpp"
#include "common/clock.hpp"
#include "json/yaml.hpp"

namespace hearth::agentapp {

namespace {

constexpr std::string_view kSignatureFile = "app.signature.yaml";
constexpr std::string_view kSchemeName = "hearth-ed25519";

Error denied(std::string message) {
  return Error::make(ErrorCode::kPermissionDenied, std::move(message));
}

std::string text_at(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* v = &root;
  for (const auto key : path) {
    v = v->is_object() ? v->get_object().if_contains(key) : nullptr;
    if (v == nullptr) return {};
  }
  if (v->is_string()) return std::string(v->get_string());
  // An unquoted all-digit value (the format's placeholder of 64 zeros) reads as a number.
  if (v->is_int64() || v->is_uint64()) return json::serialize(*v);
  return {};
}

bool all_zeros(std::string_view hex) {
  return !hex.empty() && hex.find_first_not_of('0') == std::string_view::npos;
}

std::string strip(std::string_view hash) {
  return std::string(hash.rfind("sha256:", 0) == 0 ? hash.substr(7) : hash);
}

struct Digests {
  std::string package;   // hex
  std::string manifest;  // hex
};

Result<Digests> digests_of(const std::filesystem::path& root) {
  auto package = nodefs::package_hash(root.string(), kSignatureFile);
  if (!package.ok()) return std::move(package).error();
  auto manifest = nodefs::manifest_hash((root / "APP.md").string());
  if (!manifest.ok()) return std::move(manifest).error();
  return Digests{strip(package.value()), strip(manifest.value())};
}

}  // namespace

std::string_view to_string(Trust trust) {
  switch (trust) {
    case Trust::kSigned:
      return "signed";
    case Trust::kUnsigned:
      return "unsigned";
    case Trust::kZeroHash:
      return "zero-hash";
  }
  return "unsigned";
}

Result<Verified> verify_package(const std::filesystem::path& root, const AppManifest& manifest,
                                const TrustStore& trust) {
  HEARTH_ASSIGN_OR_RETURN(auto digests, digests_of(root));
  Verified out;
  out.package_hash = "sha256:" + digests.package;
  out.manifest_hash = "sha256:" + digests.manifest;
  if (trust.package_revoked(out.package_hash)) {
    return denied("package " + out.package_hash + " is on the revocation list");
  }
  const auto sig_path = root / kSignatureFile;
  std::error_code ec;
  if (!std::filesystem::exists(sig_path, ec)) {
    out.trust = Trust::kUnsigned;
    return out;
  }
  auto text = nodefs::read_file(sig_path.string());
  if (!text.ok()) return denied(std::string(kSignatureFile) + ": " + text.error().message);
  auto doc = json::yaml_to_json(text.value());
  if (!doc.ok()) return denied(std::string(kSignatureFile) + ": " + doc.error().message);
  const json::value& sig = doc.value();
  const std::string package_hash = strip(text_at(sig, {"signature", "package", "hash"}));
  const std::string manifest_hash = strip(text_at(sig, {"signature", "manifest", "hash"}));
  if (all_zeros(package_hash) || all_zeros(manifest_hash)) {
    out.trust = Trust::kZeroHash;
    return out;
  }
  // 1. The hashes: the files are the ones that were signed.
  if (package_hash != digests.package) {
    return denied("the package's files are not the ones signed: package hash sha256:" +
                  digests.package + ", the signature names sha256:" + package_hash);
  }
  if (manifest_hash != digests.manifest) {
    return denied("APP.md is not the one signed: manifest hash sha256:" + digests.manifest +
                  ", the signature names sha256:" + manifest_hash);
  }
  // 2. The signature.
  const std::string scheme = text_at(sig, {"signature", "package", "signedBy"});
  if (scheme != kSchemeName) {
    return denied("signed with '" + scheme + "', a scheme hearth cannot verify (it verifies " +
                  std::string(kSchemeName) + ")");
  }
  const std::string publisher = text_at(sig, {"signature", "trust", "publisherId"});
  const std::string key = text_at(sig, {"signature", "package", "key"});
  const std::string signature = text_at(sig, {"signature", "package", "signature"});
  // 3. Revocation, before the key is even looked up.
  if (trust.key_revoked(key)) return denied("the signing key " + key + " has been revoked");
  auto pem = trust.key_of(publisher, key);
  if (!pem.ok()) return denied("untrusted signature: " + pem.error().message);
  SignedFacts facts{manifest.name, manifest.version, publisher, digests.package, digests.manifest};
  if (!verify_message(pem.value(), signed_message(facts), signature)) {
    return denied("the signature does not verify with " + publisher + "'s key " + key);
  }
  // 4. The publisher: the manifest cannot claim someone else.
  if (!manifest.publisher_id.empty() && manifest.publisher_id != publisher) {
    return denied("APP.md names publisher '" + manifest.publisher_id + "' but '" + publisher +
                  "' signed it");
  }
  out.trust = Trust::kSigned;
  out.publisher_id = publisher;
  out.key = key;
  return out;
}

json::object project_native(const AppManifest& manifest, const std::filesystem::path& package,
                            const Verified& verified) {
  const auto& fm = manifest.front_matter;
  const auto member = [](const json::object& o, std::string_view key) -> const json::value* {
    return o.if_contains(key);
  };
  const auto layered = [&package](std::string_view file) -> json::value {
    auto text = nodefs::read_file((package / std::string(file)).string());
    if (!text.ok()) return nullptr;
    auto doc = json::yaml_to_json(text.value());
    return doc.ok() && doc.value().is_object() ? std::move(doc.value()) : json::value(nullptr);
  };
  json::object provenance{{"appName", manifest.name},
                          {"appVersion", manifest.version},
                          {"packageHash", verified.package_hash},
                          {"manifestHash", verified.manifest_hash},
                          {"standard", "agentapp"},
                          {"standardVersion", "0.10.0"}};
  const auto with_provenance = [&](std::string_view key) {
    json::array out;
    const auto* list = member(fm, key);
    if (list == nullptr || !list->is_array()) return out;
    for (const auto& item : list->get_array()) {
      if (!item.is_object()) continue;
      json::object copy = item.get_object();
      copy["provenance"] = provenance;
      out.emplace_back(std::move(copy));
    }
    return out;
  };
  const auto object_or = [&](std::string_view key, const json::value& fallback) -> json::value {
    const auto* v = member(fm, key);
    return v != nullptr && v->is_object() ? *v : fallback;
  };
  const auto from_file = [&](std::string_view key, std::string_view file, std::string_view inner,
                             bool array) -> json::value {
    if (const auto* v = member(fm, key); v != nullptr && (array ? v->is_array() : v->is_object())) {
      return *v;
    }
    const json::value doc = layered(file);
    const json::value* found = nullptr;
    if (doc.is_object()) found = inner.empty() ? &doc : doc.get_object().if_contains(inner);
    if (found != nullptr && (array ? found->is_array() : found->is_object())) return *found;
    return array ? json::value(json::array()) : json::value(json::object());
  };
  json::object app;
  for (const std::string_view key :
       {"name", "description", "version", "status", "appType", "manifestVersion"}) {
    if (const auto* v = member(fm, key); v != nullptr && v->is_string()) app[key] = *v;
  }
  const auto* targets = member(fm, "runtimeTargets");
  app["runtimeTargets"] = targets != nullptr && targets->is_array() ? *targets : json::array();
  app["presentation"] = object_or("presentation", json::object());

  json::object out;
  out["ok"] = true;
  out["command"] = "project";
  out["app"] = std::move(app);
  out["capabilityRequirements"] = object_or("requires", json::object());
  out["entries"] = with_provenance("entries");
  out["ui"] = object_or("ui", json::object());
  out["storage"] = object_or("storage", json::object());
  out["services"] = with_provenance("services");
  out["workflows"] = with_provenance("workflows");
  out["permissions"] = with_provenance("permissions");
  out["knowledgeTemplates"] = with_provenance("knowledgeTemplates");
  out["toolRequirements"] = with_provenance("toolRefs");
  out["artifactTypes"] = with_provenance("artifactTypes");
  out["evals"] = with_provenance("evals");
  out["events"] = with_provenance("events");
  out["secrets"] = with_provenance("secrets");
  out["overlayTemplates"] = with_provenance("overlayTemplates");
  out["lifecycle"] = object_or("lifecycle", json::object());
  out["agentRuntime"] = from_file("agentRuntime", "app.runtime.yaml", "agentRuntime", false);
  out["requirements"] = from_file("requirements", "app.requirements.yaml", "", false);
  out["boundary"] = from_file("boundary", "app.boundary.yaml", "", false);
  out["integrations"] = from_file("integrations", "app.integrations.yaml", "integrations", true);
  out["operations"] = from_file("operations", "app.operations.yaml", "operations", true);
  out["install"] = from_file("install", "app.install.yaml", "install", false);
  out["provenance"] = std::move(provenance);
  return out;
}

Result<std::string> sign_package(const std::filesystem::path& root, std::string_view private_pem,
                                 std::string_view publisher_id) {
  if (!valid_publisher_id(publisher_id)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "invalid publisher id '" + std::string(publisher_id) + "'");
  }
  HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(root));
  if (!manifest.publisher_id.empty() && manifest.publisher_id != publisher_id) {
    return Error::make(ErrorCode::kInvalidParams, "APP.md names publisher '" +
                                                      manifest.publisher_id + "', not '" +
                                                      std::string(publisher_id) + "'");
  }
  HEARTH_ASSIGN_OR_RETURN(auto public_pem, public_key_of(private_pem));
  HEARTH_ASSIGN_OR_RETURN(auto fingerprint, key_fingerprint(public_pem));
  HEARTH_ASSIGN_OR_RETURN(auto digests, digests_of(root));
  SignedFacts facts{manifest.name, manifest.version, std::string(publisher_id), digests.package,
                    digests.manifest};
  HEARTH_ASSIGN_OR_RETURN(auto signature, sign_message(private_pem, signed_message(facts)));
  const std::string stamp = utc_timestamp(std::chrono::system_clock::now());
  const std::string text =
      "# Signed by hearth (docs/agent-apps.md, \"Signatures\"): Ed25519 over the name, version,\n"
      "# publisher and the two hashes below. The package hash leaves this file out.\n"
      "signature:\n"
      "  package:\n"
      "    algorithm: sha256\n"
      "    hash: \"" +
      digests.package +
      "\"\n"
      "    signedBy: " +
      std::string(kSchemeName) +
      "\n"
      "    key: \"" +
      fingerprint +
      "\"\n"
      "    signature: \"" +
      signature +
      "\"\n"
      "    timestamp: \"" +
      stamp +
      "\"\n"
      "  manifest:\n"
      "    algorithm: sha256\n"
      "    hash: \"" +
      digests.manifest +
      "\"\n"
      "  trust:\n"
      "    publisherId: " +
      std::string(publisher_id) + "\n";
  if (auto r = write_file_atomic(root / kSignatureFile, text); !r.ok()) {
    return std::move(r).error();
  }
  return fingerprint;
}

}  // namespace hearth::agentapp
