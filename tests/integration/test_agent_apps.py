"""`hearth app`: the Agent App reading commands through the real binary, and their output checked
against the format's published JSON Schemas (../shared/conformance/agentapp/schemas)."""
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from hearthtest import ROOT, hearth_bin

SCHEMAS = ROOT.parent / "shared" / "conformance" / "agentapp" / "schemas"

# A package whose front matter and layered files follow the published schemas.
APP_MD = """---
name: field-notes
description: Notes taken in the field, with an agent that summarises them.
version: 1.4.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
displayName: Field Notes
shortDescription: Take notes and let an agent summarise them.
license: Apache-2.0
homepage: https://example.org/field-notes
updatedAt: 2026-11-20T10:00:00Z
publisher:
  publisherId: example-org
  name: Example Org
support:
  email: help@example.org
compliance:
  privacyPolicyUrl: https://example.org/privacy
runtimeTargets: [local]
requires:
  capabilities:
    lime.storage: ^1.0
    lime.agent: ^1.0
triggers:
  keywords: [notes, field]
quickstart:
  entry: notes
runtimePackage:
  ui:
    path: dist/ui
  worker:
    path: dist/worker/index.js
entries:
  - key: notes
    kind: page
    title: Notes
    route: /notes
  - key: summarise
    kind: command
    title: Summarise
    command: summarise
services:
  - key: backend
    kind: app-backend
    language: python
    executionPlane: client-local
    protocol: stdio-jsonrpc
    command: services/backend.py
permissions:
  - key: notes-storage
    scope: storage
    access: read-write
storage:
  namespace: field-notes
  placement: local-sqlite
  isolation: per-app-database
  schema: storage/schema.json
  migrations: storage/migrations
artifactTypes:
  - key: summary
    schema: artifacts/summary.schema.json
secrets:
  - key: api-token
    required: true
---
# Field Notes

Take notes; ask the agent for a summary.
"""

RUNTIME_YAML = """# task contract
agentRuntime:
  bridge:
    kind: app-server-json-rpc
    transport: host-mediated
    protocolVersion: appserver.v0
  agentTask:
    eventSchema: lime.agent-task-event.v1
    resultSchema: lime.agent-task-result.v1
"""


def run(*args):
    return subprocess.run([hearth_bin(), "app", *args], capture_output=True, text=True, timeout=60)


def write_package(root: Path) -> Path:
    pkg = root / "field-notes"
    (pkg / "dist" / "ui").mkdir(parents=True)
    (pkg / "dist" / "worker").mkdir(parents=True)
    (pkg / "dist" / "worker" / "index.js").write_text("export {}\n")
    (pkg / "storage" / "migrations").mkdir(parents=True)
    (pkg / "storage" / "schema.json").write_text('{"namespace": "field-notes"}\n')
    (pkg / "storage" / "migrations" / "001_init.sql").write_text("CREATE TABLE notes(id TEXT);\n")
    (pkg / "artifacts").mkdir()
    (pkg / "artifacts" / "summary.schema.json").write_text('{"type": "object"}\n')
    (pkg / "services").mkdir()
    (pkg / "services" / "backend.py").write_text("print('backend')\n")
    (pkg / "APP.md").write_text(APP_MD)
    (pkg / "app.runtime.yaml").write_text(RUNTIME_YAML)
    return pkg


def validator(name):
    store = {}
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        store[schema["$id"]] = schema
    schema = json.loads((SCHEMAS / name).read_text())
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)


def test_projection_follows_the_published_projection_schema(tmp_path):
    pkg = write_package(tmp_path)
    r = run("project", str(pkg))
    assert r.returncode == 0, r.stderr
    projection = json.loads(r.stdout)
    errors = sorted(validator("app-projection.schema.json").iter_errors(projection), key=str)
    assert not errors, [e.message for e in errors]
    prov = projection["provenance"]
    assert prov["appName"] == "field-notes" and prov["appVersion"] == "1.4.0"
    assert prov["packageHash"].startswith("sha256:") and len(prov["packageHash"]) == 71
    assert prov["manifestHash"].startswith("sha256:")
    assert all(e["provenance"] == prov for e in projection["entries"])
    assert projection["agentRuntime"]["bridge"]["kind"] == "app-server-json-rpc"
    # Any change of a file changes the package hash; the manifest hash follows APP.md only.
    (pkg / "services" / "backend.py").write_text("print('changed')\n")
    again = json.loads(run("project", str(pkg)).stdout)["provenance"]
    assert again["packageHash"] != prov["packageHash"]
    assert again["manifestHash"] == prov["manifestHash"]


def test_front_matter_follows_the_published_manifest_schema(tmp_path):
    pkg = write_package(tmp_path)
    r = run("read-properties", str(pkg))
    assert r.returncode == 0, r.stderr
    manifest = json.loads(r.stdout)
    errors = sorted(validator("app-manifest.schema.json").iter_errors(manifest), key=str)
    assert not errors, [e.message for e in errors]
    assert manifest["requires"]["capabilities"] == {"lime.storage": "^1.0", "lime.agent": "^1.0"}


def test_readiness_follows_the_readiness_schema_except_the_reference_quirk(tmp_path):
    pkg = write_package(tmp_path)
    r = run("readiness", str(pkg), "--json")
    assert r.returncode == 0, r.stderr
    readiness = json.loads(r.stdout)
    assert readiness["status"] == "needs-setup"  # the required secret
    assert not list(validator("app-readiness.schema.json").iter_errors(readiness))
    # Capabilities written as a list get "version": null, as the reference CLI writes them,
    # which the readiness schema refuses (docs/agent-apps.md, "Reference compatibility").
    text = (pkg / "APP.md").read_text().replace(
        "  capabilities:\n    lime.storage: ^1.0\n    lime.agent: ^1.0\n",
        "  capabilities: [lime.storage, lime.agent]\n")
    (pkg / "APP.md").write_text(text)
    readiness = json.loads(run("readiness", str(pkg), "--json").stdout)
    caps = [c for c in readiness["checks"] if c["kind"] == "capability"]
    assert [c["version"] for c in caps] == [None, None]
    assert list(validator("app-readiness.schema.json").iter_errors(readiness))


def test_validate_passes_a_complete_package_and_summarises_without_json(tmp_path):
    pkg = write_package(tmp_path)
    r = run("validate", str(pkg), "--json")
    assert r.returncode == 0, r.stdout
    report = json.loads(r.stdout)
    assert report["status"] == "passed"
    paths = {f["path"] for f in report["findings"]}
    assert paths <= {"app.runtime.yaml", "app.requirements.yaml", "app.boundary.yaml",
                     "app.operations.yaml", "app.install.yaml"}, report["findings"]
    r = run("validate", str(pkg))
    assert r.returncode == 0
    assert r.stdout.startswith("field-notes: passed\n")
    assert f"manifestHash {report['manifestHash']}" in r.stdout


def test_exit_codes_and_messages(tmp_path):
    r = run("project", str(tmp_path / "nothing"))
    assert (r.returncode, r.stdout, r.stderr.strip()) == (2, "", "Missing APP.md")
    r = run("validate", str(tmp_path / "nothing"), "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "failed"
    r = run("readiness")
    assert (r.returncode, r.stderr.strip()) == (2, "Missing app path")
    pkg = write_package(tmp_path)
    r = run("migrate-check", str(pkg), "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["ok"] is False
    r = run("migrate-check", str(pkg), "--target", "0.4", "--json")
    assert r.returncode == 0, r.stdout
    assert json.loads(r.stdout)["targetVersion"] == "0.4.0"
    r = run("readiness", str(pkg), "--workspace", str(tmp_path / "none"))
    assert r.returncode == 1 and "workspace" in r.stdout
