#include "agentapp/store/native.hpp"

#include <algorithm>
#include <array>

#include "agentapp/package/nodefs.hpp"
#include "agentapp/store/signature.hpp"
#include "common/suggest.hpp"
#include "json/yaml.hpp"

namespace hearth::agentapp {

namespace {

/// The front matter between a first line `---` and the next line `---` (a byte order mark and
/// CRLF line ends are accepted here, unlike in the reference reading).
std::optional<std::string> front_matter_text(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  if (text.rfind("---\n", 0) != 0) return std::nullopt;
  std::size_t pos = 4;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    const std::string_view line(text.data() + pos,
                                (nl == std::string::npos ? text.size() : nl) - pos);
    if (line == "---" || line == "...") return text.substr(4, pos - 4);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return std::nullopt;
}

std::string string_member(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

bool valid_app_name(std::string_view name) {
  return valid_publisher_id(name);
}

std::vector<std::string> declared_capabilities(const json::object& fm) {
  std::vector<std::string> out;
  const auto add = [&out](std::string_view v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.emplace_back(v);
  };
  const auto add_list = [&add](const json::value* list) {
    if (list == nullptr || !list->is_array()) return;
    for (const auto& v : list->get_array()) {
      if (v.is_string()) add(v.get_string());
    }
  };
  if (const auto* req = fm.if_contains("requires"); req != nullptr && req->is_object()) {
    if (const auto* caps = req->get_object().if_contains("capabilities")) {
      if (caps->is_object()) {
        for (const auto& member : caps->get_object()) add(member.key());
      } else {
        add_list(caps);
      }
    }
  }
  add_list(fm.if_contains("capabilities"));
  for (const char* section : {"entries", "services"}) {
    const auto* items = fm.if_contains(section);
    if (items == nullptr || !items->is_array()) continue;
    for (const auto& item : items->get_array()) {
      if (item.is_object()) add_list(item.get_object().if_contains("requiredCapabilities"));
    }
  }
  return out;
}

json::array operations_of(const json::object& fm, const std::filesystem::path& package) {
  const auto list_in = [](const json::value* v) -> const json::array* {
    if (v == nullptr) return nullptr;
    if (v->is_array()) return &v->get_array();
    if (const auto* o = v->if_object()) {
      const auto* inner = o->if_contains("operations");
      if (inner != nullptr && inner->is_array()) return &inner->get_array();
    }
    return nullptr;
  };
  json::value file;
  const json::array* list = list_in(fm.if_contains("operations"));
  if (list == nullptr) {
    if (auto text = nodefs::read_file((package / "app.operations.yaml").string()); text.ok()) {
      if (auto doc = json::yaml_to_json(text.value()); doc.ok() && doc.value().is_object()) {
        file = std::move(doc.value());
        list = list_in(file.get_object().if_contains("operations"));
      }
    }
  }
  json::array out;
  if (list == nullptr) return out;
  for (const auto& item : *list) {
    if (item.is_object() && !string_member(item.get_object(), "key").empty()) out.push_back(item);
  }
  return out;
}

Result<AppManifest> read_manifest(const std::filesystem::path& package) {
  const auto bytes = nodefs::read_file((package / "APP.md").string());
  if (!bytes.ok()) {
    return Error::make(ErrorCode::kInvalidParams, "APP.md: " + bytes.error().message);
  }
  const auto fm = front_matter_text(bytes.value());
  if (!fm) {
    return Error::make(ErrorCode::kInvalidParams,
                       "APP.md: no front matter (the file must begin with a line '---' and the "
                       "manifest end with another)");
  }
  auto parsed = json::yaml_to_json(*fm);
  if (!parsed.ok()) {
    return Error::make(ErrorCode::kInvalidParams, "APP.md front matter: " + parsed.error().message);
  }
  if (!parsed.value().is_object()) {
    return Error::make(ErrorCode::kInvalidParams, "APP.md front matter: not a mapping");
  }
  AppManifest m;
  m.front_matter = std::move(parsed.value().as_object());
  const auto& o = m.front_matter;
  std::vector<std::string> problems;
  const auto need_string = [&](std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
      problems.push_back("/" + std::string(key) + ": required");
    } else if (!v->is_string() || v->get_string().empty()) {
      problems.push_back("/" + std::string(key) + ": must be a non-empty string");
    }
  };
  for (const auto* key : {"name", "description", "version", "status", "appType"}) need_string(key);
  m.name = string_member(o, "name");
  m.version = string_member(o, "version");
  m.status = string_member(o, "status");
  m.app_type = string_member(o, "appType");
  m.manifest_version = string_member(o, "manifestVersion");
  if (!m.name.empty() && !valid_app_name(m.name)) {
    problems.push_back("/name: '" + m.name +
                       "' is not a valid app name (lowercase letters, digits, '-', '_', '.'; "
                       "1-64; first a letter or digit)");
  }
  if (const auto* d = o.if_contains("description");
      d != nullptr && d->is_string() && d->get_string().size() > 1024) {
    problems.push_back("/description: longer than 1024 characters");
  }
  static constexpr std::array<std::string_view, 5> kStatus = {"draft", "ready", "needs-review",
                                                              "deprecated", "archived"};
  if (!m.status.empty() && std::find(kStatus.begin(), kStatus.end(), m.status) == kStatus.end()) {
    problems.push_back("/status: '" + m.status +
                       "' is not one of draft, ready, needs-review, "
                       "deprecated, archived");
  }
  static constexpr std::array<std::string_view, 5> kTypes = {
      "agent-app", "workflow-app", "domain-app", "customer-app", "custom"};
  if (!m.app_type.empty() && std::find(kTypes.begin(), kTypes.end(), m.app_type) == kTypes.end()) {
    problems.push_back("/appType: '" + m.app_type +
                       "' is not one of agent-app, workflow-app, domain-app, customer-app, custom");
  }
  if (const auto* mv = o.if_contains("manifestVersion")) {
    static constexpr std::array<std::string_view, 8> kVersions = {
        "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0"};
    if (!mv->is_string() ||
        std::find(kVersions.begin(), kVersions.end(), mv->get_string()) == kVersions.end()) {
      problems.push_back("/manifestVersion: not a version hearth supports (0.3.0 to 0.10.0)");
    }
  }
  if (const auto* pub = o.if_contains("publisher")) {
    const auto* id = pub->is_object() ? pub->get_object().if_contains("publisherId") : nullptr;
    if (id == nullptr || !id->is_string() || !valid_publisher_id(id->get_string())) {
      problems.push_back(
          "/publisher/publisherId: required, lowercase letters, digits, '-', '_', "
          "'.' (1-64)");
    } else {
      m.publisher_id = std::string(id->get_string());
    }
  }
  if (!problems.empty()) {
    std::string message = "APP.md is not a manifest hearth can install:";
    for (const auto& p : problems) message += "\n  " + p;
    return Error::make(ErrorCode::kInvalidParams, message);
  }
  return m;
}

std::vector<std::string> unknown_front_matter_keys(const json::object& front_matter) {
  // The properties of the format's app-manifest schema (0.10.0).
  static constexpr std::array<std::string_view, 64> kKnown{"agentRuntime",
                                                           "appType",
                                                           "artifactTypes",
                                                           "author",
                                                           "boundary",
                                                           "capabilities",
                                                           "categories",
                                                           "changelog",
                                                           "compatibility",
                                                           "compliance",
                                                           "contributors",
                                                           "copyright",
                                                           "createdAt",
                                                           "deprecatedAt",
                                                           "description",
                                                           "displayName",
                                                           "displayNameI18n",
                                                           "distribution",
                                                           "documentation",
                                                           "endOfLifeAt",
                                                           "entries",
                                                           "evals",
                                                           "events",
                                                           "homepage",
                                                           "install",
                                                           "integrations",
                                                           "issues",
                                                           "keywords",
                                                           "knowledgeTemplates",
                                                           "license",
                                                           "licenseUrl",
                                                           "lifecycle",
                                                           "maintainers",
                                                           "manifestVersion",
                                                           "metadata",
                                                           "name",
                                                           "operations",
                                                           "overlayTemplates",
                                                           "permissions",
                                                           "presentation",
                                                           "publisher",
                                                           "quickstart",
                                                           "releasedAt",
                                                           "repository",
                                                           "requirements",
                                                           "requires",
                                                           "runtimePackage",
                                                           "runtimeTargets",
                                                           "secrets",
                                                           "services",
                                                           "shortDescription",
                                                           "shortDescriptionI18n",
                                                           "skillRefs",
                                                           "skills",
                                                           "status",
                                                           "storage",
                                                           "support",
                                                           "supportWindow",
                                                           "toolRefs",
                                                           "triggers",
                                                           "ui",
                                                           "updatedAt",
                                                           "version",
                                                           "workflows"};
  std::vector<std::string> out;
  for (const auto& member : front_matter) {
    const std::string_view key = member.key();
    if (key.starts_with("x-") || std::find(kKnown.begin(), kKnown.end(), key) != kKnown.end()) {
      continue;
    }
    std::string message = "APP.md: unknown front-matter key '" + std::string(key) + "'";
    if (auto near = closest_word(key, kKnown)) message += "; did you mean '" + *near + "'?";
    out.push_back(message + " (it is ignored)");
  }
  return out;
}

}  // namespace hearth::agentapp
