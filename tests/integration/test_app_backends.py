"""App backends (docs/agent-apps.md, "App backends"): the real daemon starts an enabled app's
stdio-jsonrpc backend under the jail, supervises it and stops it on disable; the backend reaches
nothing but the capability bridge."""
import json
import os
import subprocess
import textwrap
from pathlib import Path

from hearthtest import EXAMPLES, ROOT, Daemon, error, hearth_bin, result, wait_for

EXAMPLE = ROOT / "examples" / "apps" / "field-notes"

PROBE_MD = """---
name: probe
description: A backend that tries what a backend may not do.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.storage: ^1.0
permissions:
  - key: db
    scope: storage
    access: read-write
services:
  - key: probe
    kind: app-backend
    language: python
    executionPlane: client-local
    protocol: stdio-jsonrpc
    command: services/probe.py
    network: deny-by-default
    resourceLimits:
      memoryMb: 256
      timeoutMs: 5000
---
# Probe
"""

PROBE_PY = textwrap.dedent('''\
    #!/usr/bin/env python3
    import json, os, socket, sys
    n = [0]
    def send(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    def host(method, params):
        n[0] += 1
        send({"jsonrpc": "2.0", "id": n[0], "method": method, "params": params})
        return json.loads(sys.stdin.readline())
    def attempt(f):
        try:
            return {"ok": f()}
        except OSError as e:
            return {"errno": e.errno, "error": str(e)}
    def connect(host_, port):
        s = socket.create_connection((host_, port), timeout=2)
        s.close()
        return True
    for line in sys.stdin:
        m = json.loads(line)
        if "method" not in m or "id" not in m:
            continue
        p = m.get("params") or {}
        meth = m["method"]
        if meth == "initialize":
            r = {"ready": True}
        elif meth == "read":
            r = attempt(lambda: len(open(p["path"], "rb").read()))
        elif meth == "write":
            r = attempt(lambda: open(p["path"], "w").write("x"))
        elif meth == "list":
            r = attempt(lambda: sorted(os.listdir(p["path"])))
        elif meth == "connect":
            r = attempt(lambda: connect(p["host"], p["port"]))
        elif meth == "env":
            r = dict(os.environ)
        elif meth == "pid":
            r = os.getpid()
        elif meth == "host":
            r = host(p["method"], p["params"])
        elif meth == "crash":
            os._exit(9)
        else:
            send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": meth}})
            continue
        send({"jsonrpc": "2.0", "id": m["id"], "result": r})
''')


def app(*args):
    return subprocess.run([hearth_bin(), "app", *args], capture_output=True, text=True, timeout=60)


def make_probe(root: Path) -> Path:
    pkg = root / "probe"
    (pkg / "services").mkdir(parents=True)
    (pkg / "APP.md").write_text(PROBE_MD)
    (pkg / "services" / "probe.py").write_text(PROBE_PY)
    return pkg


def backends(d, app_id):
    return result(d.rpc("app/backend/status", {"appId": app_id}))["backends"]


def test_a_backend_runs_jailed_and_reaches_only_the_bridge(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(make_probe(tmp_path)), "--dev", *sd).returncode == 0
    assert app("install", str(EXAMPLE), "--dev", *sd).returncode == 0
    assert app("enable", "probe", *sd).returncode == 0
    assert app("enable", "field-notes", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        call = lambda method, params=None: d.rpc("app/backend/call", {
            "appId": "probe", "method": method, "params": params or {}})
        # The other app's data, written through the bridge.
        result(d.rpc("capability/invoke", {"appId": "field-notes", "capability": "lime.storage",
                                           "method": "put", "params": {"key": "secret", "value": 42}}))
        other_db = state / "apps" / "data" / "field-notes" / "app.db"
        assert other_db.exists()
        own_db = state / "apps" / "data" / "probe" / "app.db"
        # Files: neither the other app's storage, nor its own (only through the bridge), nor
        # hearth's store, vault or token, nor the user's files.
        for path in [other_db, own_db, state / "apps" / "apps.db", d.token_file,
                     Path.home() / ".bashrc", "/etc/shadow"]:
            r = result(call("read", {"path": str(path)}))
            assert "errno" in r, (path, r)
        assert "errno" in result(call("list", {"path": str(state)}))
        # Its own package is read-only to it.
        pkg_dir = Path(json.loads(app("show", "probe", "--json", *sd).stdout)["dir"])
        assert "ok" in result(call("read", {"path": str(pkg_dir / "APP.md")}))
        assert "errno" in result(call("write", {"path": str(pkg_dir / "APP.md")}))
        assert "errno" in result(call("write", {"path": str(tmp_path / "dropped")}))
        assert not (tmp_path / "dropped").exists()
        # Network deny-by-default: not even the daemon on loopback.
        assert "errno" in result(call("connect", {"host": "127.0.0.1", "port": d.port}))
        # An environment made for it: no daemon variables.
        env = result(call("env"))
        assert env["HEARTH_APP"] == "probe" and env["HOME"] == "/tmp"
        assert not any(k.startswith(("SSL_", "HEARTH_TOKEN")) for k in env)
        assert set(env) - {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONDONTWRITEBYTECODE",
                           "PYTHONUNBUFFERED", "HEARTH_APP", "HEARTH_APP_VERSION",
                           "HEARTH_APP_SERVICE", "HEARTH_APP_DIR", "LC_CTYPE", "PWD"} == set()
        # The bridge, as its own app: reading the other app's storage by naming it is refused.
        r = result(call("host", {"method": "capability/invoke", "params": {
            "appId": "field-notes", "capability": "lime.storage", "method": "get",
            "params": {"key": "secret"}}}))
        assert r["error"]["code"] == -32001 and r["error"]["data"]["stage"] == "identity"
        r = result(call("host", {"method": "capability/invoke", "params": {
            "capability": "lime.storage", "method": "get", "params": {"key": "secret"}}}))
        assert r["result"]["value"] is None  # its own storage has no such key
        r = result(call("host", {"method": "capability/invoke", "params": {
            "capability": "lime.storage", "method": "put", "params": {"key": "mine", "value": 1}}}))
        assert "result" in r
        r = result(call("host", {"method": "lavs/call", "params": {"endpoint": "list"}}))
        assert r["error"]["code"] == -32601
    # The call the backend made is in the app's evidence, with the backend as the caller.
    evidence = json.loads(app("evidence", "probe", *sd).stdout)
    assert evidence["verified"] is True
    invoked = [e for e in evidence["entries"] if e["kind"] == "capability.invoked"]
    assert invoked and all(e["detail"]["caller"] == "backend:probe" for e in invoked)
    kinds = [e["kind"] for e in evidence["entries"]]
    assert "backend.started" in kinds and "capability.denied" in kinds


def test_a_crashing_backend_is_restarted_and_a_disabled_app_stops(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(make_probe(tmp_path)), "--dev", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        # Installed, not enabled: nothing runs, and a call says why.
        assert backends(d, "probe") == []
        e = error(d.rpc("app/backend/call", {"appId": "probe", "method": "pid"}))
        assert "not enabled" in e["message"]
        assert app("enable", "probe", *sd).returncode == 0
        result(d.rpc("app/backend/call", {"appId": "probe", "method": "pid"}))
        first = backends(d, "probe")[0]["pid"]
        e = error(d.rpc("app/backend/call", {"appId": "probe", "method": "crash"}))
        assert "signal 9" in e["message"] or "code 9" in e["message"], e
        # Restarting for the backoff (0.5 s), then running again.
        assert wait_for(lambda: backends(d, "probe")[0]["starts"] == 2 and
                        backends(d, "probe")[0]["state"] == "running", 10)
        status = backends(d, "probe")[0]
        assert status["starts"] == 2 and status["lastExit"]
        result(d.rpc("app/backend/call", {"appId": "probe", "method": "pid"}))
        launcher = status["pid"]
        assert launcher != first
        assert Path(f"/proc/{launcher}").exists()
        # Disabled from the CLI: the daemon stops the backend on its next look at the store.
        assert app("disable", "probe", *sd).returncode == 0
        assert wait_for(lambda: backends(d, "probe") == [], 5)
        assert wait_for(lambda: not Path(f"/proc/{launcher}").exists(), 5)
        e = error(d.rpc("app/backend/call", {"appId": "probe", "method": "pid"}))
        assert "not enabled" in e["message"]
        # Parameters are checked.
        assert error(d.rpc("app/backend/call", {"appId": "probe"}))["code"] == -32602
        assert error(d.rpc("app/backend/call", {"appId": "nobody", "method": "x"}))["code"] == -32602


def test_the_example_apps_backend_summarises_notes(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(EXAMPLE), "--dev", *sd).returncode == 0
    readiness = json.loads(app("show", "field-notes", "--json", *sd).stdout)["readiness"]
    backend_checks = [c for c in readiness["checks"] if c.get("kind") == "backend"]
    assert backend_checks and all(c["severity"] == "info" for c in backend_checks), readiness
    assert app("enable", "field-notes", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        r = result(d.rpc("app/backend/call", {
            "appId": "field-notes", "service": "backend", "method": "notes.summarise",
            "params": {"notes": ["Heron at the weir", "heron again, and a kingfisher"]}}))
        assert r["count"] == 2 and r["topWords"][0] == "heron"
        e = error(d.rpc("app/backend/call", {
            "appId": "field-notes", "service": "backend", "method": "notes.summarise",
            "params": {"notes": 3}}))
        assert e["code"] == -32003 and e["data"]["code"] == -32602
        # Without a service: the app's only backend.
        r = result(d.rpc("app/backend/call", {"appId": "field-notes", "method": "notes.summarise",
                                               "params": {"notes": ["one"]}}))
        assert r["count"] == 1
        # The worker module, in a jailed JS worker: it reads the notes and saves the artifact
        # through the bridge.
        for text in ["Heron at the weir", "heron again\nand a kingfisher", "otter tracks"]:
            result(d.rpc("capability/invoke", {
                "appId": "field-notes", "capability": "lime.storage", "method": "query",
                "params": {"sql": "INSERT INTO notes (text) VALUES (?)", "params": [text]}}))
        r = result(d.rpc("app/backend/call", {
            "appId": "field-notes", "service": "summariser", "method": "summarise",
            "params": {"limit": 2}}))
        assert r["summary"] == {"count": 2, "topWords": ["heron", "weir", "again", "kingfisher"],
                                "firstLines": ["Heron at the weir", "heron again"]}
        # What the worker saved, as the CLI lists it.
        artifacts = json.loads(app("artifacts", "field-notes", *sd).stdout)["artifacts"]
        assert [a["id"] for a in artifacts] == [r["artifact"]]
        status = {b["service"]: b for b in backends(d, "field-notes")}
        assert status["summariser"]["kind"] == "worker" and status["backend"]["state"] == "running"
    evidence = json.loads(app("evidence", "field-notes", *sd).stdout)["entries"]
    callers = {e["detail"].get("caller") for e in evidence if e["kind"] == "capability.invoked"}
    assert "worker:summariser" in callers


def test_a_backend_or_worker_whose_package_changed_is_not_started(tmp_path):
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(make_probe(tmp_path)), "--dev", *sd).returncode == 0
    assert app("install", str(EXAMPLE), "--dev", *sd).returncode == 0
    assert app("enable", "probe", *sd).returncode == 0
    assert app("enable", "field-notes", *sd).returncode == 0
    probe_dir = Path(json.loads(app("show", "probe", "--json", *sd).stdout)["dir"])
    notes_dir = Path(json.loads(app("show", "field-notes", "--json", *sd).stdout)["dir"])
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        call = lambda method: d.rpc("app/backend/call", {"appId": "probe", "method": method})
        result(call("pid"))
        # Changed while it runs: the restart after its exit checks the files first.
        for p in (probe_dir, probe_dir / "services", probe_dir / "services" / "probe.py"):
            p.chmod(0o755)
        (probe_dir / "services" / "probe.py").write_text(PROBE_PY.replace("r = {\"ready\": True}",
                                                                          "r = {\"owned\": True}"))
        error(call("crash"))
        assert wait_for(lambda: not json.loads(app("show", "probe", "--json", *sd).stdout)["enabled"], 10)
        assert wait_for(lambda: backends(d, "probe") == [], 5)
        assert "not enabled" in error(call("pid"))["message"]
        assert wait_for(lambda: "services/probe.py changed since install" in d.stderr_path.read_text())
        # A worker module changed before its first call: its JS worker is never made.
        for p in (notes_dir, notes_dir / "dist", notes_dir / "dist" / "worker",
                  notes_dir / "dist" / "worker" / "summarise.mjs"):
            p.chmod(0o755)
        (notes_dir / "dist" / "worker" / "summarise.mjs").write_text(
            "export function summarise() { return 'not what was installed'; }\n")
        e = error(d.rpc("app/backend/call", {"appId": "field-notes", "service": "summariser",
                                             "method": "summarise", "params": {}}))
        assert "dist/worker/summarise.mjs changed since install" in e["message"], e
        assert not json.loads(app("show", "field-notes", "--json", *sd).stdout)["enabled"]
        assert wait_for(lambda: backends(d, "field-notes") == [], 5)
    for name, when, problem in (("probe", "backend restart", "services/probe.py changed since install"),
                                ("field-notes", "worker start",
                                 "dist/worker/summarise.mjs changed since install")):
        log = json.loads(app("show", name, "--json", *sd).stdout)["log"]
        failed = [e["detail"] for e in log if e["action"] == "integrity-failed"]
        assert [(f["when"], f["problems"]) for f in failed] == [(when, [problem])], failed
        evidence = json.loads(app("evidence", name, *sd).stdout)["entries"]
        assert "integrity.failed" in [e["kind"] for e in evidence]
        r = app("enable", name, *sd)
        assert r.returncode == 1 and problem in r.stderr


BROKEN_MD = """---
name: broken
description: A backend whose command fails.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.storage: ^1.0
permissions:
  - key: db
    scope: storage
    access: read-write
services:
  - key: backend
    kind: app-backend
    language: python
    executionPlane: client-local
    protocol: stdio-jsonrpc
    command: python3
    args: [./services/backend.py]
---
# Broken
"""


def test_a_backend_whose_command_fails_shows_failing_with_its_stderr_and_is_logged_once(tmp_path):
    pkg = tmp_path / "broken"
    (pkg / "services").mkdir(parents=True)
    (pkg / "APP.md").write_text(BROKEN_MD)
    (pkg / "services" / "backend.py").write_text(
        "import sys\nsys.stderr.write('cannot open the pantry database\\n')\nsys.exit(3)\n")
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(pkg), "--dev", *sd).returncode == 0
    assert app("enable", "broken", *sd).returncode == 0
    # Before anything ran, readiness says what it can know: ready.
    assert json.loads(app("show", "broken", "--json", *sd).stdout)["readiness"]["status"] == "ready"
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        # Started as written (python3 with the script), it fails at once: failing, not running,
        # with what it wrote to stderr, and tried again later each time (0.5, 1, 2 s...).
        assert wait_for(lambda: backends(d, "broken") and backends(d, "broken")[0]["starts"] >= 3
                        and backends(d, "broken")[0]["state"] == "failing", 20), backends(d, "broken")
        status = backends(d, "broken")[0]
        assert status["failures"] >= 3 and status["nextStartInMs"] >= 0
        assert "exited with code 3" in status["reason"]
        assert "cannot open the pantry database" in status["stderrTail"]
        e = error(d.rpc("app/backend/call", {"appId": "broken", "method": "anything"}))
        assert e["data"]["state"] == "failing"
        assert "cannot open the pantry database" in e["data"]["stderrTail"]
        # hearth app show: the backend's report and a failing readiness check.
        shown = json.loads(app("show", "broken", "--json", *sd).stdout)
        assert [b["service"] for b in shown["backends"]] == ["backend"]
        assert shown["backends"][0]["state"] == "failing"
        assert "cannot open the pantry database" in shown["backends"][0]["stderrTail"]
        readiness = shown["readiness"]
        assert readiness["status"] == "ready-degraded", readiness
        check = next(c for c in readiness["checks"] if c["kind"] == "backend")
        assert check["state"] == "failing" and "cannot open the pantry database" in check["stderrTail"]
        assert any("backend is failing" in w or "backend backend is failing" in w
                   for w in readiness["warnings"]), readiness["warnings"]
        # The log says it once, not at every start.
        log = d.stderr_path.read_text()
        assert log.count("exited with code 3") == 1, log
    # The evidence too: one failed start recorded, no exit of a run that never was.
    evidence = json.loads(app("evidence", "broken", *sd).stdout)["entries"]
    kinds = [e["kind"] for e in evidence]
    assert kinds.count("backend.failed") == 1 and "backend.exited" not in kinds, kinds


def test_a_backend_that_never_answers_initialize_is_failing_with_what_it_wrote(tmp_path):
    pkg = tmp_path / "broken"
    (pkg / "services").mkdir(parents=True)
    (pkg / "APP.md").write_text(BROKEN_MD.replace("args: [./services/backend.py]",
                                                  "path: ./services/backend.py"))
    (pkg / "services" / "backend.py").write_text(
        "import sys, time\nsys.stderr.write('waiting for a config that never comes\\n')\n"
        "sys.stderr.flush()\ntime.sleep(600)\n")
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(pkg), "--dev", *sd).returncode == 0
    assert app("enable", "broken", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        # initialize waits 10 s for its answer.
        assert wait_for(lambda: backends(d, "broken") and backends(d, "broken")[0]["state"] == "failing", 30)
        status = backends(d, "broken")[0]
        assert "did not answer initialize" in status["reason"]
        assert "waiting for a config that never comes" in status["stderrTail"]
        shown = json.loads(app("show", "broken", "--json", *sd).stdout)
        assert "waiting for a config" in shown["backends"][0]["stderrTail"]
