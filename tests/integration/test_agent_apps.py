"""`hearth app`: the Agent App reading commands through the real binary, and their output checked
against the format's published JSON Schemas (../shared/conformance/agentapp/schemas)."""
import fcntl
import json
import shutil
import signal
import subprocess
from pathlib import Path

import jsonschema
import pytest

from hearthtest import EXAMPLES, ROOT, Daemon, error, hearth_bin, result, wait_for

SCHEMAS = ROOT.parent / "shared" / "conformance" / "agentapp" / "schemas"

EXAMPLE = ROOT / "examples" / "apps" / "field-notes"


def run(*args):
    return subprocess.run([hearth_bin(), "app", *args], capture_output=True, text=True, timeout=60)


def write_package(root: Path) -> Path:
    """A copy of the example app (tests change their copy, never the example)."""
    pkg = root / "field-notes"
    shutil.copytree(EXAMPLE, pkg)
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
    assert prov["appName"] == "field-notes" and prov["appVersion"] == "0.1.0"
    assert prov["packageHash"].startswith("sha256:") and len(prov["packageHash"]) == 71
    assert prov["manifestHash"].startswith("sha256:")
    assert all(e["provenance"] == prov for e in projection["entries"])
    # The layered files, as projected, follow their own published schemas.
    for key, name in (("requirements", "app-requirements.schema.json"),
                      ("boundary", "app-boundary.schema.json")):
        errors = list(validator(name).iter_errors(projection[key]))
        assert not errors, (key, [e.message for e in errors])
    errors = list(validator("app-install.schema.json").iter_errors({"install": projection["install"]}))
    assert not errors, [e.message for e in errors]
    errors = list(validator("app-operations.schema.json").iter_errors(
        {"operations": projection["operations"]}))
    assert not errors, [e.message for e in errors]
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
    assert manifest["requires"]["capabilities"] == {
        "lime.storage": "^1.0", "lime.artifacts": "^1.0", "lime.agent": "^1.0"}


def test_readiness_follows_the_readiness_schema_except_the_reference_quirk(tmp_path):
    pkg = write_package(tmp_path)
    r = run("readiness", str(pkg), "--json")
    assert r.returncode == 0, r.stderr
    readiness = json.loads(r.stdout)
    assert readiness["status"] == "ready"
    assert not list(validator("app-readiness.schema.json").iter_errors(readiness))
    # Capabilities written as a list get "version": null, as the reference CLI writes them,
    # which the readiness schema refuses (docs/agent-apps.md, "Reference compatibility").
    text = (pkg / "APP.md").read_text().replace(
        "  capabilities:\n    lime.storage: ^1.0\n    lime.artifacts: ^1.0\n    lime.agent: ^1.0\n",
        "  capabilities: [lime.storage, lime.artifacts, lime.agent]\n")
    (pkg / "APP.md").write_text(text)
    readiness = json.loads(run("readiness", str(pkg), "--json").stdout)
    caps = [c for c in readiness["checks"] if c["kind"] == "capability"]
    assert [c["version"] for c in caps] == [None, None, None]
    assert list(validator("app-readiness.schema.json").iter_errors(readiness))


def test_validate_passes_a_complete_package_and_summarises_without_json(tmp_path):
    pkg = write_package(tmp_path)
    r = run("validate", str(pkg), "--json")
    assert r.returncode == 0, r.stdout
    report = json.loads(r.stdout)
    assert report["status"] == "passed"
    # One warning: the reference CLI expects a desktop host's IPC; hearth's host is a web page.
    assert [f["message"] for f in report["findings"]] == [
        "app-server-json-rpc bridge should declare hostBoundary: desktop-host-ipc for desktop hosts."]
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


def test_install_sign_trust_enable_and_uninstall(tmp_path):
    state = tmp_path / "state"
    pkg = write_package(tmp_path)
    sd = ["--state-dir", str(state)]
    r = run("keygen", str(tmp_path / "key"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "key").stat().st_mode & 0o077 == 0
    # Unsigned: refused without --dev.
    r = run("install", str(pkg), *sd)
    assert r.returncode == 1 and "--dev" in r.stderr
    r = run("sign", str(pkg), "--key", str(tmp_path / "key"), "--publisher", "hearth-examples")
    assert r.returncode == 0, r.stderr
    # Signed by a key nobody trusts: refused, --dev or not.
    r = run("install", str(pkg), "--dev", *sd)
    assert r.returncode == 1 and "untrusted" in r.stderr
    r = run("trust", "hearth-examples", "--key", str(tmp_path / "key.pub"), *sd)
    assert r.returncode == 0, r.stderr
    r = run("install", str(pkg), "--json", *sd)
    assert r.returncode == 0, r.stderr
    installed = json.loads(r.stdout)
    assert installed["trust"] == "signed" and installed["enabled"] is False
    review = installed["review"]
    assert [e["key"] for e in review["entries"]] == ["notes", "summarise"]
    assert review["backends"][0]["protocol"] == "stdio-jsonrpc"
    assert review["storage"]["placement"] == "local-sqlite"
    # hearth's own readiness follows the format's readiness schema: everything the bundled
    # example asks for (storage, artifacts, the agent, its backend and worker) hearth provides.
    readiness = review["readiness"]
    assert not list(validator("app-readiness.schema.json").iter_errors(readiness))
    assert readiness["status"] == "ready", readiness
    assert readiness["warnings"] == [] and readiness["blockers"] == []
    r = run("list", "--json", *sd)
    assert [a["name"] for a in json.loads(r.stdout)] == ["field-notes"]
    assert run("enable", "field-notes", *sd).returncode == 0
    shown = json.loads(run("show", "field-notes", "--json", *sd).stdout)
    assert shown["enabled"] is True
    # Enabling grants what the review listed, then enables.
    assert [e["action"] for e in shown["log"]] == ["install", "grant", "grant", "grant", "enable"]
    # hearth's own projection (real YAML, the verified hashes) follows the projection schema.
    projection = shown["projection"]
    assert not list(validator("app-projection.schema.json").iter_errors(projection))
    assert projection["provenance"]["packageHash"] == shown["packageHash"]
    assert projection["provenance"]["manifestHash"] == shown["manifestHash"]
    assert projection["requirements"]["requirements"][0]["id"] == "take-notes"
    assert not list(validator("app-readiness.schema.json").iter_errors(shown["readiness"]))
    assert run("disable", "field-notes", *sd).returncode == 0
    # The summary a person reads.
    r = run("list", *sd)
    assert r.stdout.strip() == "field-notes 0.1.0 disabled signed by hearth-examples"
    # Uninstall: one data policy must be chosen; export writes an archive first.
    assert run("uninstall", "field-notes", *sd).returncode == 2
    data = state / "apps" / "data" / "field-notes"
    assert (data / "app.db").exists()  # made when enabling applied the migrations
    assert shown["migrations"][0]["name"] == "001_init.sql"
    (data / "extra.txt").write_text("rows")
    r = run("uninstall", "field-notes", "--export-then-delete", str(tmp_path / "out.tar.gz"), *sd)
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)
    assert Path(record["record"]).exists() and not data.exists()
    assert (tmp_path / "out.tar.gz").stat().st_size > 0
    assert json.loads(run("list", "--json", *sd).stdout) == []


def test_a_changed_file_or_a_revoked_key_blocks_the_install(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    pkg = write_package(tmp_path)
    run("keygen", str(tmp_path / "key"))
    run("sign", str(pkg), "--key", str(tmp_path / "key"), "--publisher", "hearth-examples")
    run("trust", "hearth-examples", "--key", str(tmp_path / "key.pub"), *sd)
    (pkg / "dist" / "ui" / "index.html").write_text("<script>steal()</script>")
    r = run("install", str(pkg), "--dev", *sd)
    assert r.returncode == 1 and "not the ones signed" in r.stderr
    shutil.rmtree(pkg)
    pkg = write_package(tmp_path)
    run("sign", str(pkg), "--key", str(tmp_path / "key"), "--publisher", "hearth-examples")
    fingerprint = run("keygen", str(tmp_path / "unused")).stdout  # a second key, not trusted
    assert fingerprint
    sig = (pkg / "app.signature.yaml").read_text()
    key = sig.split('key: "')[1].split('"')[0]
    assert run("revoke", key, "--kind", "key", *sd).returncode == 0
    r = run("install", str(pkg), *sd)
    assert r.returncode == 1 and "revoked" in r.stderr


def test_the_daemon_bridges_an_enabled_apps_capability_calls(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    pkg = write_package(tmp_path)
    assert run("install", str(pkg), "--dev", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        invoke = lambda capability, method, params=None, **kw: d.rpc("capability/invoke", {
            "appId": "field-notes", "capability": capability, "method": method,
            "params": params or {}, **kw})
        # Installed but not enabled: nothing of it runs.
        e = error(invoke("lime.storage", "query", {"sql": "SELECT 1"}))
        assert e["code"] == -32001 and e["data"]["stage"] == "enabled"
        assert run("enable", "field-notes", *sd).returncode == 0
        # The migrations ran at enable: the notes table is there.
        r = result(invoke("lime.storage", "query",
                          {"sql": "INSERT INTO notes (text) VALUES (?)", "params": ["heron"]}))
        assert r == {"rows": []}
        r = result(invoke("lime.storage", "query", {"sql": "SELECT text FROM notes"}))
        assert r["rows"] == [["heron"]]
        # Declared and provided, but outside what the SQL of an app may do.
        e = error(invoke("lime.storage", "query", {"sql": "SELECT * FROM hearth_kv"}))
        assert e["code"] == -32001
        # Not declared by the app (whether hearth provides it or not).
        assert error(invoke("lime.secrets", "get"))["data"]["stage"] == "declared"
        assert error(invoke("lime.ui", "toast"))["data"]["stage"] == "declared"
        # A deny rule for one workspace.
        assert run("deny", "field-notes", "lime.storage", "--workspace", "w1", *sd).returncode == 0
        e = error(invoke("lime.storage", "get", {"key": "k"}, workspaceId="w1"))
        assert e["data"]["stage"] == "granted"
        assert "value" in result(invoke("lime.storage", "get", {"key": "k"}, workspaceId="w2"))
        # Artifacts follow their schema and carry the package's provenance.
        bad = error(invoke("lime.artifacts", "create", {"type": "notes-summary", "content": {"count": -1}}))
        assert bad["code"] == -32602
        art = result(invoke("lime.artifacts", "create", {
            "type": "notes-summary",
            "content": {"count": 1, "topWords": ["heron"], "firstLines": ["heron"]}}))
        shown = json.loads(run("show", "field-notes", "--json", *sd).stdout)
        assert art["provenance"]["packageHash"] == shown["packageHash"]
        listed = result(d.rpc("capability/list", {"appId": "field-notes"}))["capabilities"]
        status = {c["capability"]: c["status"] for c in listed}
        assert status["lime.storage"] == "available" and "lime.ui" not in status
        # The example reads its artifacts back (artifact read-write), re-hashed on the way.
        assert json.loads(result(invoke("lime.artifacts", "read", {"id": art["id"]}))["content"]) == {
            "count": 1, "topWords": ["heron"], "firstLines": ["heron"]}
    # What the app left behind, readable without the daemon; the chain verifies.
    r = run("evidence", "field-notes", *sd)
    assert r.returncode == 0, r.stderr
    evidence = json.loads(r.stdout)
    assert evidence["verified"] is True
    kinds = [e["kind"] for e in evidence["entries"]]
    assert "capability.invoked" in kinds and "capability.denied" in kinds and "artifact.created" in kinds
    assert all(e["provenance"]["appVersion"] == "0.1.0" for e in evidence["entries"])
    artifacts = json.loads(run("artifacts", "field-notes", *sd).stdout)["artifacts"]
    assert [a["id"] for a in artifacts] == [art["id"]]
    grants = json.loads(run("grants", "field-notes", *sd).stdout)
    assert any(g["capability"] == "lime.storage" and g["workspace"] == "w1" and
               g["decision"] == "deny" for g in grants)
    # Every denial is in the app's log too.
    log = json.loads(run("show", "field-notes", "--json", *sd).stdout)["log"]
    stages = [e["detail"]["stage"] for e in log if e["action"] == "capability.denied"]
    assert stages == ["declared", "declared", "granted"]


def test_upgrade_waits_for_approval_then_rolls_back(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    pkg = write_package(tmp_path)
    assert run("install", str(pkg), "--dev", *sd).returncode == 0
    text = (pkg / "APP.md").read_text().replace("version: 0.1.0", "version: 0.2.0")
    text = text.replace("    lime.artifacts: ^1.0\n", "    lime.artifacts: ^1.0\n    lime.evidence: ^1.0\n")
    (pkg / "APP.md").write_text(text)
    r = run("upgrade", str(pkg), "--dev", *sd)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "new capabilities: lime.evidence" in r.stdout
    assert json.loads(run("list", "--json", *sd).stdout)[0]["version"] == "0.1.0"
    r = run("upgrade", str(pkg), "--dev", "--approve", "--json", *sd)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["version"] == "0.2.0"
    r = run("rollback", "field-notes", *sd)
    assert r.returncode == 0 and "back at 0.1.0" in r.stdout


def test_a_required_secret_must_be_in_the_vault_before_enabling(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    pkg = write_package(tmp_path)
    text = (pkg / "APP.md").read_text().replace(
        "artifactTypes:\n", "secrets:\n  - key: sync-token\n    required: true\nartifactTypes:\n")
    (pkg / "APP.md").write_text(text)
    r = run("install", str(pkg), "--dev", "--json", *sd)
    assert r.returncode == 0, r.stderr
    readiness = json.loads(r.stdout)["review"]["readiness"]
    assert readiness["status"] == "needs-setup"
    # The vault's names have no '-': the setup action names the variable that holds it.
    assert readiness["setupActions"][0]["target"] == "hearth vault set app.field-notes sync_token"
    r = run("enable", "field-notes", *sd)
    assert r.returncode == 1 and "hearth vault set app.field-notes sync_token" in r.stderr
    r = subprocess.run([hearth_bin(), "vault", "set", "app.field-notes", "sync_token", *sd],
                       input="s3cret", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = run("enable", "field-notes", *sd)
    assert r.returncode == 0, r.stderr


def test_a_broken_app_store_leaves_the_rest_served(tmp_path):
    state = tmp_path / "state"
    (state / "apps").mkdir(parents=True)
    (state / "apps" / "apps.db").write_bytes(b"not a database" * 100)
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        e = error(d.rpc("capability/list", {"appId": "field-notes"}))
        assert e["code"] == -32603 and "Agent Apps are not available" in e["message"]
        assert "endpoints" in json.dumps(result(d.rpc("lavs/manifest", {"service": "simple-notes"})))


def staging_entries(state):
    return sorted(p.name for p in (state / "apps" / "staging").iterdir())


def test_a_killed_install_leaves_staging_that_the_next_start_or_install_removes(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    staging = state / "apps" / "staging"
    # A large package: its copy into staging takes long enough to be caught half-way.
    pkg = write_package(tmp_path)
    for i in range(4):
        (pkg / "data" / f"blob{i}.bin").parent.mkdir(exist_ok=True)
        (pkg / "data" / f"blob{i}.bin").write_bytes(bytes(48 << 20))
    proc = subprocess.Popen([hearth_bin(), "app", "install", str(pkg), "--dev", *sd],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        caught = False
        while proc.poll() is None and not caught:
            caught = staging.is_dir() and any(
                (e / "package").is_dir() for e in staging.iterdir() if e.is_dir())
        assert caught, "the install ended before it could be killed"
        proc.kill()
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    killed = staging_entries(state)
    assert len(killed) == 2 and killed[1] == killed[0] + ".lock", killed
    # A leftover from a hearth before the lock files (no lock file at all).
    (staging / "0123abcd" / "package").mkdir(parents=True)
    (staging / "0123abcd" / "package" / "APP.md").write_text("x")
    # An install running in another process: its lock is held, so its entry stays.
    held = open(staging / "feedface.lock", "w")
    fcntl.flock(held, fcntl.LOCK_EX)
    (staging / "feedface" / "package").mkdir(parents=True)
    try:
        # The daemon's start removes what the killed install left.
        with Daemon([EXAMPLES / "notes"], state_dir=state):
            assert staging_entries(state) == ["feedface", "feedface.lock"]
        # So does the next install, successful or not.
        (staging / "0000dead.lock").write_text("")
        (staging / "0000dead" / "package").mkdir(parents=True)
        shutil.rmtree(pkg / "data")
        assert run("install", str(pkg), "--dev", *sd).returncode == 0
        assert staging_entries(state) == ["feedface", "feedface.lock"]
        (staging / "1111dead" / "package").mkdir(parents=True)
        assert run("install", str(pkg), "--dev", *sd).returncode == 1  # already installed
        assert staging_entries(state) == ["feedface", "feedface.lock"]
    finally:
        held.close()
    # Its installer gone, the next one removes it too.
    assert run("upgrade", str(pkg), "--dev", *sd).returncode == 1  # the package installed
    assert staging_entries(state) == []


def make_writable(tree: Path):
    tree.chmod(0o755)
    for p in tree.rglob("*"):
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_an_installed_file_changed_since_install_blocks_enable_and_the_daemon_disables_it(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    pkg = write_package(tmp_path)
    assert run("install", str(pkg), "--dev", *sd).returncode == 0
    installed = Path(json.loads(run("show", "field-notes", "--json", *sd).stdout)["dir"])
    backend = (installed / "services" / "backend.py").read_bytes()
    page = (installed / "dist" / "ui" / "index.html").read_bytes()
    outside = tmp_path / "outside.py"
    outside.write_bytes(backend)

    def change_backend():
        (installed / "services" / "backend.py").write_text("import os\nos.system('id')\n")

    def add_file():
        (installed / "services" / "extra.py").write_text("import os\n")

    def remove_page():
        (installed / "dist" / "ui" / "index.html").unlink()

    def link_backend():  # the same bytes, through a link
        (installed / "services" / "backend.py").unlink()
        (installed / "services" / "backend.py").symlink_to(outside)

    for change, expected in (
            (change_backend, "services/backend.py changed since install"),
            (add_file, "services/extra.py was added since install (a file)"),
            (remove_page, "dist/ui/index.html was removed since install"),
            (link_backend, "services/backend.py is a symbolic link now (a file at install)")):
        make_writable(installed)
        change()
        r = run("enable", "field-notes", *sd)
        assert r.returncode == 1 and expected in r.stderr, (expected, r.stderr)
        shown = json.loads(run("show", "field-notes", "--json", *sd).stdout)
        assert shown["enabled"] is False
        assert shown["integrity"] == {"ok": False, "problems": [expected]}
        assert shown["readiness"]["status"] == "blocked" and expected in shown["readiness"]["blockers"]
        assert not list(validator("app-readiness.schema.json").iter_errors(shown["readiness"]))
        assert shown["log"][-1]["action"] == "enable-refused"
        assert shown["log"][-1]["detail"]["integrity"] == [expected]
        # Put back as installed.
        for name in ("backend.py", "extra.py"):
            (installed / "services" / name).unlink(missing_ok=True)
        (installed / "services" / "backend.py").write_bytes(backend)
        (installed / "dist" / "ui" / "index.html").write_bytes(page)

    # Enabled while intact; changed while the daemon is down: its start disables the app.
    assert run("enable", "field-notes", *sd).returncode == 0
    make_writable(installed)
    (installed / "dist" / "ui" / "index.html").write_text("<script>steal()</script>")
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        assert wait_for(lambda: not json.loads(run("show", "field-notes", "--json", *sd).stdout)["enabled"])
        e = error(d.rpc("capability/invoke", {"appId": "field-notes", "capability": "lime.storage",
                                              "method": "query", "params": {"sql": "SELECT 1"}}))
        assert e["data"]["stage"] == "enabled"
        assert result(d.rpc("app/backend/status", {"appId": "field-notes"}))["backends"] == []
        assert wait_for(lambda: "dist/ui/index.html changed since install" in d.stderr_path.read_text())
    log = json.loads(run("show", "field-notes", "--json", *sd).stdout)["log"]
    failed = [e for e in log if e["action"] == "integrity-failed"]
    assert len(failed) == 1
    assert failed[0]["detail"]["when"] == "daemon start"
    assert failed[0]["detail"]["problems"] == ["dist/ui/index.html changed since install"]
    assert failed[0]["detail"]["disabled"] is True
    evidence = json.loads(run("evidence", "field-notes", *sd).stdout)
    assert evidence["verified"] is True
    assert [e["detail"]["problems"] for e in evidence["entries"] if e["kind"] == "integrity.failed"] == [
        ["dist/ui/index.html changed since install"]]
