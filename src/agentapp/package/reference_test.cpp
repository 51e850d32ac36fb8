// The reference-compatible commands on packages written here. Expected texts follow the
// format notes (docs/agent-apps.md, "Reference compatibility"): key order, messages, exit codes.
#include "agentapp/package/reference.hpp"

#include <gtest/gtest.h>

#include "agentapp/package/jsv.hpp"
#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

using testing::kVectorManifestHash;
using testing::kVectorPackageHash;
const auto& write_vector = testing::write_hash_vector;

ReferenceAnswer run(std::string_view command, const PackageDir& dir,
                    const ReferenceOptions& options = {}) {
  return run_reference(*reference_command(command), dir.str(), options);
}

/// The findings of a validate answer, one "severity path: message" line each.
std::vector<std::string> findings_of(const ReferenceAnswer& answer) {
  std::vector<std::string> out;
  for (const auto& f : answer.value.at("findings").as_array()) {
    const auto& o = f.as_object();
    std::string line = std::string(o.at("severity").as_string());
    if (const auto* code = o.if_contains("code")) {
      line += " (" + std::string(code->as_string()) + ")";
    }
    line += " " + std::string(o.at("path").as_string()) + ": " +
            std::string(o.at("message").as_string());
    out.push_back(line);
  }
  return out;
}

TEST(ReferenceProject, GivesEverySectionInOrderWithProvenance) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  const auto answer = run("project", dir);
  EXPECT_EQ(answer.exit_code, 0);
  EXPECT_EQ(answer.text, R"({
  "ok": true,
  "command": "project",
  "app": {
    "name": "hash-vector",
    "description": "Hash test vector.",
    "version": "1.0.0",
    "status": "draft",
    "appType": "custom",
    "runtimeTargets": [],
    "presentation": {}
  },
  "capabilityRequirements": {},
  "entries": [],
  "ui": {},
  "storage": {},
  "services": [],
  "workflows": [],
  "permissions": [],
  "knowledgeTemplates": [],
  "toolRequirements": [],
  "artifactTypes": [],
  "evals": [],
  "events": [],
  "secrets": [],
  "overlayTemplates": [],
  "lifecycle": {},
  "agentRuntime": {},
  "requirements": {},
  "boundary": {},
  "integrations": [],
  "operations": [],
  "install": {},
  "provenance": {
    "appName": "hash-vector",
    "appVersion": "1.0.0",
    "packageHash": ")" + std::string(kVectorPackageHash) +
                             R"(",
    "manifestHash": ")" + std::string(kVectorManifestHash) +
                             R"(",
    "standard": "agentapp",
    "standardVersion": "0.10.0"
  }
}
)");
}

TEST(ReferenceProject, SpreadsItemsTrustsADeclaredHashAndPrefersTheFrontMatter) {
  PackageDir dir("p");
  dir.write("APP.md",
            "---\nname: p\nversion: 2\nruntimePackage:\n  hash: sha256:declared\n"
            "entries:\n  - key: e\n    provenance: mine\n    kind: page\n  - ab\n  - 7\n"
            "integrations: [x]\n---\n");
  dir.write("app.integrations.yaml", "integrations:\n  - key: from-file\n");
  dir.write("app.runtime.yaml", "agentRuntime:\n  bridge:\n    kind: host-native\n");
  dir.write("app.requirements.yaml", "# empty but present\n");
  const auto answer = run("project", dir);
  ASSERT_EQ(answer.exit_code, 0);
  const auto& out = answer.value.as_object();
  const std::string provenance =
      R"({"appName":"p","appVersion":2,"packageHash":"sha256:declared","manifestHash":")" +
      std::string(out.at("provenance").at("manifestHash").as_string()) +
      R"(","standard":"agentapp","standardVersion":"0.10.0"})";
  EXPECT_EQ(jsv::stringify(out.at("entries")),
            R"([{"key":"e","provenance":)" + provenance + R"(,"kind":"page"},)" +
                R"({"0":"a","1":"b","provenance":)" + provenance + R"(},)" + R"({"provenance":)" +
                provenance + "}]");
  EXPECT_EQ(jsv::stringify(out.at("integrations")), R"(["x"])");
  EXPECT_EQ(jsv::stringify(out.at("agentRuntime")), R"({"bridge":{"kind":"host-native"}})");
  EXPECT_EQ(jsv::stringify(out.at("requirements")), "{}");
  EXPECT_EQ(jsv::stringify(out.at("app")),
            R"({"name":"p","version":2,"runtimeTargets":[],"presentation":{}})");
}

TEST(ReferenceValidate, PassesTheTestVectorWithItsManifestHash) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  const auto answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 0);
  EXPECT_EQ(answer.text, R"({
  "ok": true,
  "status": "passed",
  "command": "validate",
  "app": "hash-vector",
  "findings": [],
  "manifestHash": ")" + std::string(kVectorManifestHash) +
                             "\"\n}\n");
}

constexpr std::string_view kDemoAppMd = R"(---
name: demo-app
description: Demo.
version: 1.2.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
runtimeTargets: [local]
requires:
  capabilities:
    lime.agent: ^1.0
    lime.storage: ">=0.3"
entries:
  - key: home
    kind: page
    title: Home
  - key: run
    kind: command
    title: Run
    command: run
  - key: old
    kind: scene
    title: Old
  - kind: bogus
services:
  - key: backend
    kind: app-backend
    executionPlane: client-local
    protocol: remote-http
storage:
  namespace: demo
  placement: server-postgresql
  schema: ./storage/schema.json
skillRefs:
  - id: s1
    path: skills/s1
    required: "true"
---
# Demo
)";

TEST(ReferenceValidate, ReportsEachCheckInTheReferenceOrder) {
  PackageDir dir("demo-app");
  dir.write("APP.md", kDemoAppMd);
  std::filesystem::create_directories(dir.path() / "skills/s1");
  const auto answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(answer.value.at("status"), "needs-review");
  // Long messages are split over lines, which this check takes for missing commas.
  // NOLINTBEGIN(bugprone-suspicious-missing-comma)
  const std::vector<std::string> expected = {
      "warning APP.md: v0.5 recommends declaring triggers.keywords or triggers.scenarios for AI "
      "auto-discovery.",
      "warning APP.md: v0.5 recommends declaring quickstart.entry for first-launch UX.",
      "warning APP.md: v0.5 open-platform: publisher.publisherId is required for catalog "
      "identity. Set publisher: { publisherId, name } in the frontmatter.",
      "warning APP.md: v0.5 catalog: displayName is recommended so launchers can show a "
      "human-readable name.",
      "warning APP.md: v0.5 catalog: shortDescription is recommended for catalog cards (<= 140 "
      "chars).",
      "warning APP.md: v0.5 open-platform: license is recommended (SPDX id, e.g. Apache-2.0, "
      "MIT, UNLICENSED).",
      "warning APP.md: v0.5 open-platform: at least one of homepage / documentation / "
      "repository is recommended.",
      "warning APP.md: v0.5 open-platform: support.email or support.url is recommended for "
      "ongoing user support.",
      "warning APP.md: v0.5 open-platform: updatedAt (ISO 8601) is recommended so catalogs can "
      "sort by freshness.",
      "warning APP.md: v0.5 open-platform: compliance.privacyPolicyUrl is recommended; users / "
      "tenants need to review privacy before install.",
      "error skills/s1/SKILL.md: Bundled Skill must include SKILL.md per Agent Skills standard.",
      "warning app.runtime.yaml: v0.6 recommends app.runtime.yaml for apps that start lime.agent "
      "tasks. Declare task event/result, structured output, approval, session, tool discovery, "
      "checkpoint, and observability policies.",
      "warning app.requirements.yaml: v0.7 recommends app.requirements.yaml so business "
      "requirements, MVP scope, non-goals, and acceptance criteria are explicit.",
      "warning app.boundary.yaml: v0.7 recommends app.boundary.yaml so App, Host, Cloud, "
      "connector, external system, and human responsibilities are explicit.",
      "warning app.operations.yaml: v0.7 recommends app.operations.yaml so side effects, "
      "approval, dry-run, and evidence requirements are explicit.",
      "warning app.install.yaml: v0.8 recommends app.install.yaml so in-lime, standalone, and "
      "runtime-backed installation modes are explicit.",
      "warning app.runtime.yaml: Apps using lime.agent should declare "
      "agentRuntime.bridge.kind=app-server-json-rpc so hosts can map SDK tasks to App Server "
      "JSON-RPC.",
      "warning storage: Declare storage.isolation, for example per-app-database, per-app-schema, "
      "or per-app-namespace.",
      "warning storage: PostgreSQL should not be a consumer desktop install prerequisite. Use it "
      "for cloud, enterprise, or team-shared backends, and keep local desktop defaults on SQLite.",
      "warning services: App-backend service should declare language: backend.",
      "warning services: client-local app-backend backend should use stdio-jsonrpc, local-http, "
      "local-socket, or wasm, not remote-http.",
      "warning services: client-local app-backend backend should declare command, binary, or path "
      "so the host can supervise lifecycle.",
      "warning entries: Page entry is missing route: home.",
      "warning (deprecated-compat) entries: Deprecated legacy entry kind for old: scene. Use page, "
      "command, workflow, artifact, background-task, or settings for manifestVersion 0.3.",
      "warning entries: Entry is missing key: {\"kind\":\"bogus\"}.",
      "error entries: Unknown entry kind for entry: bogus.",
      "warning entries: Entry is missing title: entry.",
      "warning runtimePackage: Product-level apps should declare runtimePackage so hosts can load "
      "UI, worker, storage, and workflow implementation.",
      "warning storage: Referenced schema does not exist: ./storage/schema.json.",
      "warning permissions: Executable entries, services, or secrets should declare permissions "
      "for host policy review.",
  };
  // NOLINTEND(bugprone-suspicious-missing-comma)
  EXPECT_EQ(findings_of(answer), expected);
}

TEST(ReferenceValidate, NormalisesTheVersionFlagAndRunsOnlyThatVersionsChecks) {
  PackageDir dir("demo-app");
  dir.write("APP.md", kDemoAppMd);
  std::filesystem::create_directories(dir.path() / "skills/s1/x");
  dir.write("skills/s1/SKILL.md", "# s1\n");
  ReferenceOptions options;
  options.version = "0.5";
  const auto answer = run("validate", dir, options);
  const auto findings = findings_of(answer);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front(),
            "warning APP.md: manifestVersion 0.10.0 does not match requested --version 0.5.0.");
  for (const auto& f : findings) {
    EXPECT_EQ(f.find("v0.6"), std::string::npos) << f;
    EXPECT_EQ(f.find("services:"), std::string::npos) << f;
  }
  EXPECT_EQ(normalise_version_flag("0.7.x"), "0.7.x");
  EXPECT_EQ(normalise_version_flag("0.7.3"), "0.7.0");
  EXPECT_EQ(normalise_version_flag("0.10"), "0.10.0");
  EXPECT_EQ(normalise_version_flag("0.11"), "0.11");
  EXPECT_EQ(normalise_version_flag("0.3"), "0.3.0");
  EXPECT_EQ(normalise_version_flag("0.5."), "0.5.");
  EXPECT_EQ(normalise_version_flag("0.05"), "0.05");
  EXPECT_EQ(normalise_version_flag("0.2.1"), "0.2.1");
  EXPECT_EQ(normalise_version_flag("1.0"), "1.0");
}

TEST(ReferenceValidate, AFolderWithoutAppMdFailsWithExitCodeOne) {
  PackageDir dir("empty");
  auto answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(jsv::stringify(answer.value),
            R"({"ok":false,"status":"failed","command":"validate","app":"empty","findings":)"
            R"([{"severity":"error","path":"APP.md","message":"Missing required APP.md."}]})");
  answer = run_reference(ReferenceCommand::kMigrateCheck, dir.str() + "/missing", {});
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(answer.value.at("findings").at(0).at("message"), "App path is not a directory.");
}

TEST(ReferenceReadiness, ListsRequirementCapabilityAndPackageChecks) {
  PackageDir dir("demo-app");
  dir.write("APP.md", kDemoAppMd);
  const auto answer = run("readiness", dir);
  EXPECT_EQ(answer.exit_code, 0);
  EXPECT_EQ(answer.text, R"({
  "ok": true,
  "status": "needs-setup",
  "command": "readiness",
  "app": "demo-app",
  "workspace": null,
  "checks": [
    {
      "severity": "warning",
      "kind": "skill",
      "key": "s1",
      "required": true,
      "message": "skill requirement must be satisfied by the host before running."
    },
    {
      "severity": "info",
      "kind": "service",
      "key": "backend",
      "required": false,
      "message": "service requirement is optional."
    },
    {
      "severity": "info",
      "kind": "capability",
      "key": "lime.agent",
      "required": true,
      "version": "^1.0",
      "message": "Host must satisfy capability lime.agent@^1.0."
    },
    {
      "severity": "info",
      "kind": "capability",
      "key": "lime.storage",
      "required": true,
      "version": ">=0.3",
      "message": "Host must satisfy capability lime.storage@>=0.3."
    },
    {
      "severity": "warning",
      "kind": "runtimePackage",
      "key": "runtimePackage",
      "required": true,
      "message": "Product-level apps should declare a runtime package."
    }
  ]
}
)");
}

TEST(ReferenceReadiness, AMissingWorkspaceFailsAndListCapabilitiesHaveNullVersions) {
  PackageDir dir("r");
  dir.write("APP.md",
            "---\nname: r\nrequires:\n  capabilities: [lime.ui, lime.storage]\n"
            "install:\n  modes: [standalone, runtime_backed]\n---\n");
  ReferenceOptions options;
  options.workspace = dir.str() + "/no-such-workspace";
  const auto answer = run("readiness", dir, options);
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(answer.value.at("status"), "failed");
  const auto& checks = answer.value.at("checks").as_array();
  ASSERT_EQ(checks.size(), 7u);
  EXPECT_EQ(jsv::stringify(checks[0]),
            R"({"severity":"info","kind":"capability","key":"lime.ui","required":true,)"
            R"("version":null,"message":"Host must satisfy capability lime.ui."})");
  EXPECT_EQ(checks[2].at("key"), "standalone");
  EXPECT_EQ(checks[3].at("key"), "runtime_backed");
  EXPECT_EQ(jsv::stringify(checks[4]), R"({"severity":"error","kind":"workspace","key":")" +
                                           *options.workspace +
                                           R"(","message":"Workspace path is not a directory."})");
  EXPECT_EQ(checks[5].at("kind"), "entry");
  EXPECT_EQ(checks[6].at("kind"), "runtime");
}

TEST(ReferenceMigrateCheck, ListsTheGapsToTheTargetVersion) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  auto answer = run("migrate-check", dir);
  EXPECT_EQ(answer.exit_code, 1);
  std::vector<std::string> fields;
  for (const auto& gap : answer.value.at("gaps").as_array()) {
    fields.emplace_back(gap.at("field").as_string());
  }
  EXPECT_EQ(fields, (std::vector<std::string>{"triggers",
                                              "quickstart",
                                              "skills",
                                              "app.capabilities.yaml",
                                              "app.entries.yaml",
                                              "app.permissions.yaml",
                                              "app.errors.yaml",
                                              "app.i18n.yaml",
                                              "app.signature.yaml",
                                              "evals/readiness.yaml",
                                              "evals/health.yaml",
                                              "locales/",
                                              "app.runtime.yaml",
                                              "app.requirements.yaml",
                                              "app.boundary.yaml",
                                              "app.integrations.yaml",
                                              "app.operations.yaml",
                                              "app.install.yaml",
                                              "install",
                                              "storage"}));
  EXPECT_EQ(answer.value.at("sourceVersion"), "0.3.0");
  EXPECT_EQ(answer.value.at("targetVersion"), "0.10.0");
  EXPECT_EQ(answer.value.at("status"), "needs-setup");

  ReferenceOptions options;
  options.target = "0.4";
  answer = run("migrate-check", dir, options);
  EXPECT_EQ(answer.exit_code, 0);
  EXPECT_EQ(jsv::stringify(answer.value),
            R"({"ok":true,"status":"ready","command":"migrate-check","app":"hash-vector",)"
            R"("findings":[],"sourceVersion":"0.3.0","targetVersion":"0.4.0","gaps":[]})");
}

TEST(ReferenceCommands, ExitWithCodeTwoWhereTheReferenceCliThrows) {
  PackageDir dir("t");
  auto answer = run("read-properties", dir);
  EXPECT_EQ(answer.exit_code, 2);
  EXPECT_EQ(answer.message, "Missing APP.md");
  EXPECT_TRUE(answer.text.empty());

  dir.write("APP.md", "---\nname: t\nentries:\n  - null\n---\n");
  answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 2);
  EXPECT_EQ(answer.message, "Cannot read properties of null (reading 'key')");
  EXPECT_EQ(run("readiness", dir).exit_code, 0);  // entries are only counted there

  dir.write("APP.md", "---\nname: t\nskillRefs:\n  - path: 5\n---\n");
  answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 2);
  EXPECT_EQ(answer.message,
            "The \"path\" argument must be of type string. Received type number (5)");

  answer = run_reference(ReferenceCommand::kProject, "", {});
  EXPECT_EQ(answer.exit_code, 2);
  EXPECT_EQ(answer.message, "Missing app path");
}

TEST(ReferenceCommands, ReadPropertiesExitsWithOneWhenTheFrontMatterSaysOkFalse) {
  PackageDir dir("t");
  dir.write("APP.md", "---\nok: false\nname: t\n---\n");
  const auto answer = run("read-properties", dir);
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(answer.text, "{\n  \"ok\": false,\n  \"name\": \"t\"\n}\n");
}

TEST(ReferenceCommands, ReadAnAppMdWithoutFrontMatterAsAnEmptyObject) {
  PackageDir dir("t");
  dir.write("APP.md", "\xEF\xBB\xBF---\nname: t\n---\n");
  EXPECT_EQ(run("read-properties", dir).text, "{}\n");
  EXPECT_EQ(run("to-catalog", dir).text, "{}\n");
  const auto answer = run("validate", dir);
  EXPECT_EQ(answer.exit_code, 1);
  EXPECT_EQ(answer.value.at("findings").as_array().size(), 5u);
}

TEST(ReferenceCatalog, CopiesOnlyTheCatalogKeysInItsOrder) {
  PackageDir dir("c");
  dir.write("APP.md",
            "---\nmetadata:\n  x: 1\ndisplayName: C\nname: c\npublisher:\n  publisherId: p\n"
            "install:\n  modes: [in_lime]\nversion: null\n---\n");
  EXPECT_EQ(jsv::stringify(run("to-catalog", dir).value),
            R"({"name":"c","version":null,"install":{"modes":["in_lime"]},"metadata":{"x":1}})");
}

}  // namespace
}  // namespace hearth::agentapp
