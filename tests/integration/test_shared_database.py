"""Several daemons serving as one from one PostgreSQL database (docs/deployment.md), against a
real server the tests start themselves (pgserver.py): workspace changes, registry definitions,
vault values, items that mutations publish and App Server events made through one daemon reach
the others; expectedVersion and idempotency keys hold across daemons; the database going away
is a clear error that heals when it returns; kill -9 of a daemon mid-commit loses nothing it
acknowledged and leaves nothing half written."""
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, ROOT, Daemon, error, hearth_bin, result, wait_for
from pgserver import PgServer

WORKSPACE_EXAMPLE = EXAMPLES / "workspace-search"
VAULT_KEY = "6b" * 32  # the same master key for every daemon of the database


@pytest.fixture(scope="module")
def pg():
    server = PgServer()
    yield server
    server.close()


@pytest.fixture
def database(pg):
    return pg.url(pg.fresh_database("shared"))


def env_with_key():
    return {**os.environ, "HEARTH_VAULT_KEY": VAULT_KEY}


def shared_daemon(database, paths=(), extra=(), state_dir=None, copy=True):
    return Daemon(list(paths), copy=copy, env=env_with_key(), state_dir=state_dir,
                  extra_args=["--database", database, *extra])


@pytest.fixture
def workspace_folder(tmp_path):
    shutil.copytree(WORKSPACE_EXAMPLE, tmp_path / "workspace-search")
    return tmp_path / "workspace-search"


def two_on(database, folder):
    """Two daemons serving the same workspace from one database."""
    args = ["--workspace", str(folder / "workspace")]
    a = shared_daemon(database, [folder], args, copy=False)
    try:
        b = shared_daemon(database, [folder], args, copy=False)
    except Exception:
        a.stop()
        raise
    return a, b


def ws_call(d, method, params):
    return d.rpc(method, {"workspaceId": "product-search", **params})


def all_history(d):
    entries = []
    while True:
        page = result(ws_call(d, "workspace/history", {
            "limit": 500, "afterSeq": entries[-1]["seq"] if entries else 0}))["entries"]
        if not page:
            return entries
        entries += page


def test_the_ready_document_names_the_shared_engine(database, workspace_folder):
    a, b = two_on(database, workspace_folder)
    try:
        for d in (a, b):
            storage = d.ready["storage"]
            assert storage["engine"] == "postgresql" and storage["shared"] is True
            assert "hearth_admin" in storage["location"]
    finally:
        a.stop()
        b.stop()


def test_a_workspace_change_through_one_daemon_reaches_the_other(database, workspace_folder):
    a, b = two_on(database, workspace_folder)
    try:
        with b.ws() as watcher:
            assert result(watcher.request("workspace/subscribe",
                                          {"workspaceId": "product-search"}))["subscribed"]
            out = result(ws_call(a, "workspace/execute",
                                 {"script": "filter_state.category = 'tea';"}))
            note = watcher.notification("workspace/changed")["params"]
            assert note["version"] == out["version"]
            assert "filter_state" in note["changed"]
            assert note["actor"] == "rpc" and note["kind"] == "script"
        state = result(ws_call(b, "workspace/state", {"name": "filter_state"}))
        assert state["version"] == out["version"] and state["value"]["category"] == "tea"
        # B's history is A's: one history for the workspace, whoever committed.
        assert all_history(a) == all_history(b)
    finally:
        a.stop()
        b.stop()


def test_expected_version_holds_across_daemons(database, workspace_folder):
    a, b = two_on(database, workspace_folder)
    try:
        v0 = result(ws_call(a, "workspace/state", {}))["version"]
        wait_for(lambda: result(ws_call(b, "workspace/state", {}))["version"] == v0)
        changed = result(ws_call(a, "workspace/execute", {
            "script": "search_box_state.search_pattern = 'tea';", "expectedVersion": v0}))
        # B was asked from the same version: the database says another change came first.
        err = error(ws_call(b, "workspace/execute", {
            "script": "search_box_state.search_pattern = 'milk';", "expectedVersion": v0}))
        assert err["code"] == -32010 and err["data"]["version"] == changed["version"]
        box = result(ws_call(b, "workspace/state", {"name": "search_box_state"}))["value"]
        assert box == {"search_pattern": "tea"}
    finally:
        a.stop()
        b.stop()


def test_concurrent_commits_through_two_daemons_each_count_once(database, workspace_folder):
    """Both daemons commit increments at once, from several clients: every acknowledged commit is
    in the state once, and the versions and history have no gap and no duplicate."""
    a, b = two_on(database, workspace_folder)
    acked = []
    lock = threading.Lock()
    try:
        def writer(d, n):
            with d.http() as http:
                for _ in range(n):
                    r = http.rpc("workspace/execute", {
                        "workspaceId": "product-search",
                        "script": "filter_state.maxPrice = (filter_state.maxPrice || 0) + 1;"})
                    if "result" in r and r["result"].get("committed"):
                        with lock:
                            acked.append(r["result"]["version"])
                    else:
                        # A change that started from a state another daemon had already moved
                        # on from is refused whole: nothing of it is committed.
                        assert r["error"]["code"] == -32010, r

        initial = result(ws_call(a, "workspace/state", {"name": "filter_state"}))["value"].get(
            "maxPrice")
        threads = [threading.Thread(target=writer, args=(d, 15)) for d in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(acked) > 0
        assert len(set(acked)) == len(acked), "two commits got the same version"
        start_version = min(acked) - 1
        # Each daemon hears of the other's last commits and ends at the same state.
        for d in (a, b):
            wait_for(lambda d=d: result(ws_call(d, "workspace/state", {}))["version"]
                     == start_version + len(acked))
            final = result(ws_call(d, "workspace/state", {"name": "filter_state"}))
            assert final["value"]["maxPrice"] == (initial or 0) + len(acked)
        hist = all_history(b)
        committed = sorted(e["version"] for e in hist if e["outcome"] == "committed"
                           and e["version"] > start_version)
        assert committed == list(range(start_version + 1, start_version + len(acked) + 1))
    finally:
        a.stop()
        b.stop()


def test_a_registry_definition_added_through_one_daemon_is_served_by_the_other(database,
                                                                                tmp_path):
    a = shared_daemon(database, extra=["--registry", str(EXAMPLES / "registry")])
    b = shared_daemon(database, extra=["--registry", str(EXAMPLES / "registry")])
    try:
        definition = {
            "serviceName": "team-weather",
            "serviceDescription": "The team's own weather service: forecasts for a city",
            "domain": "weather.team.example",
            "version": "1.0",
            "capabilities": [{
                "name": "City Forecast",
                "description": "A city's forecast for the next days",
                "request": "GET /forecast HTTP/1.1\nHost: weather.team.example\n\n",
            }],
        }
        # The checksum a definition carries: SHA-256 of its canonical form (docs/a2s.md).
        canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        definition["checksum"] = hashlib.sha256(canonical.encode()).hexdigest()
        out = result(a.rpc("registry/define", {"definition": definition}))
        assert out == {"serviceName": "team-weather", "replaced": False}
        wait_for(lambda: "result" in b.rpc("registry/get", {"service": "team-weather"}))
        got = result(b.rpc("registry/get", {"service": "team-weather"}))
        assert "team-weather" in json.dumps(got)
        found = result(b.rpc("registry/search", {"query": "team forecast for a city"}))
        assert "team-weather" in json.dumps(found)
        # A bad definition is refused with its problems, and a folder's service cannot be
        # shadowed or removed through the daemon.
        bad = error(a.rpc("registry/define", {"definition": {"serviceName": "x"}}))
        assert bad["code"] == -32602 and bad["data"]["problems"]
        removed = result(b.rpc("registry/undefine", {"service": "team-weather"}))
        assert removed["removed"] is True
        wait_for(lambda: "error" in a.rpc("registry/get", {"service": "team-weather"}))
    finally:
        a.stop()
        b.stop()


def test_vault_values_are_shared_and_never_readable_in_the_database(database, pg):
    a = shared_daemon(database, extra=["--registry", str(EXAMPLES / "registry")])
    b = shared_daemon(database, extra=["--registry", str(EXAMPLES / "registry")])
    try:
        secret = "s3cret-value-" + "x" * 20
        result(a.rpc("vault/set", {"scope": "api.example.com", "name": "API_KEY",
                                   "value": secret}))
        names = result(b.rpc("vault/list", {}))
        assert "API_KEY" in json.dumps(names)
        # Grants too; granting twice (through either daemon) adds nothing the second time.
        for d in (a, b, a):
            result(d.rpc("vault/trust", {"domain": "api.example.com", "names": ["API_KEY"]}))
        grants = json.dumps(result(b.rpc("vault/list", {})))
        assert "api.example.com" in grants
        dump = pg.psql(database.split("/")[-1].split("?")[0],
                       "SELECT encode(sealed, 'escape') FROM hearth_vault.variables")
        assert secret not in dump and "s3cret" not in dump
    finally:
        a.stop()
        b.stop()


def test_an_item_a_mutation_publishes_reaches_subscribers_of_every_daemon(database):
    a = shared_daemon(database, [EXAMPLES / "todo-manager-js"])
    b = shared_daemon(database, [EXAMPLES / "todo-manager-js"])
    try:
        with b.ws() as watcher:
            result(watcher.request("lavs/subscribe", {"service": "todo-manager-js",
                                                      "endpoint": "todoUpdates"}))
            first = watcher.notification("lavs/data")["params"]
            assert first["data"]["type"] == "snapshot"
            added = result(a.rpc("lavs/call", {"service": "todo-manager-js",
                                               "endpoint": "addTodo",
                                               "input": {"text": "through daemon A"}}))
            item = watcher.notification("lavs/data")["params"]
            assert item["data"] == {"type": "todoAdded", "todo": added}
            # A large item goes through the database, not the notice.
            big = "y" * 20000
            result(a.rpc("lavs/call", {"service": "todo-manager-js", "endpoint": "addTodo",
                                       "input": {"text": big}}))
            item = watcher.notification("lavs/data")["params"]
            assert item["data"]["todo"]["text"] == big
    finally:
        a.stop()
        b.stop()


def test_the_database_going_away_is_a_clear_error_and_calls_recover(pg, workspace_folder):
    database = pg.url(pg.fresh_database("away"))
    a = shared_daemon(database, [workspace_folder],
                      ["--workspace", str(workspace_folder / "workspace")], copy=False)
    try:
        result(ws_call(a, "workspace/execute", {"script": "filter_state.category = 'tea';"}))
        pg.stop()
        try:
            err = error(ws_call(a, "workspace/execute",
                                {"script": "filter_state.category = 'milk';"}))
            assert "database" in err["message"].lower(), err
            assert a.proc.poll() is None, "the daemon must keep serving"
        finally:
            pg.start()
        wait_for(lambda: "result" in ws_call(a, "workspace/execute",
                                             {"script": "filter_state.category = 'milk';"}),
                 timeout=20)
        state = result(ws_call(a, "workspace/state", {"name": "filter_state"}))
        assert state["value"]["category"] == "milk"
    finally:
        a.stop()


def test_kill_9_mid_commit_loses_nothing_acknowledged(pg, workspace_folder):
    """A daemon killed while clients commit through it: every commit it acknowledged is in the
    database, and the state, versions and history agree (nothing half written)."""
    database = pg.url(pg.fresh_database("kill"))
    args = ["--workspace", str(workspace_folder / "workspace")]
    acked = []
    stop = threading.Event()
    for round_ in range(3):
        d = shared_daemon(database, [workspace_folder], args, copy=False)

        def writer():
            with d.http() as http:
                while not stop.is_set():
                    try:
                        r = http.rpc("workspace/execute", {
                            "workspaceId": "product-search",
                            "script": "filter_state.maxPrice = (filter_state.maxPrice || 0) + 1;"})
                    except Exception:  # killed: this call is not acknowledged
                        return
                    if "result" in r and r["result"].get("committed"):
                        acked.append(r["result"]["version"])

        stop.clear()
        threads = [threading.Thread(target=writer) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.5 + random.random())
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        stop.set()
        for t in threads:
            t.join()
        d.cleanup()
    assert len(acked) > 10
    with shared_daemon(database, [workspace_folder], args, copy=False) as d:
        state = result(ws_call(d, "workspace/state", {"name": "filter_state"}))
        hist = all_history(d)
    committed = sorted(e["version"] for e in hist if e["outcome"] == "committed")
    # Every acknowledged version is in the history, and versions have no gap.
    assert set(acked) <= set(committed)
    assert committed == list(range(committed[0], committed[-1] + 1))
    assert state["version"] == committed[-1]
    # The counter counts every commit, acknowledged or not (a kill after the commit and before
    # the answer is a commit the client did not hear of): never fewer than acknowledged.
    increments = [e for e in hist if e["outcome"] == "committed" and "maxPrice" in e.get("script", "")]
    assert state["value"]["maxPrice"] == len(increments)
    assert state["value"]["maxPrice"] >= len(acked)


# --- Agent Apps and the App Server ------------------------------------------------------------

sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from server import FakeModel  # noqa: E402


def app_md(name, placement, isolation, table):
    return f"""---
name: {name}
description: An app whose tables live where its storage block says.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.agent: ^1.0
    lime.storage: ^1.0
permissions:
  - key: db
    scope: storage
    access: read-write
storage:
  namespace: {name}
  placement: {placement}
  isolation: {isolation}
  localDefault: false
  migrations: storage/migrations
entries:
  - key: board
    kind: page
    title: Board
    route: /board
---
# {name}
"""


def hearth_app(database, state, *args):
    env = {**env_with_key(), "HEARTH_DATABASE": database}
    return subprocess.run([hearth_bin(), "app", *args, "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=60, env=env)


def install_app(tmp_path, database, state, name, placement="server-postgresql",
                isolation="per-app-schema", table="notes"):
    pkg = tmp_path / "packages" / name
    (pkg / "storage" / "migrations").mkdir(parents=True)
    (pkg / "APP.md").write_text(app_md(name, placement, isolation, table))
    (pkg / "storage" / "migrations" / "001.sql").write_text(
        f"CREATE TABLE {table} (text TEXT NOT NULL);")
    r = hearth_app(database, state, "install", str(pkg), "--dev")
    assert r.returncode == 0, r.stderr
    r = hearth_app(database, state, "enable", name)
    assert r.returncode == 0, r.stderr + r.stdout


def invoke(d, app, method, params, workspace="w1"):
    return d.rpc("capability/invoke", {"appId": app, "capability": "lime.storage",
                                       "method": method, "params": params,
                                       "workspaceId": workspace})


def test_apps_on_the_server_get_a_schema_and_role_the_database_enforces(pg, tmp_path):
    name = pg.fresh_database("apps")
    database = pg.url(name)
    install_app(tmp_path, database, tmp_path / "cli-state", "notes", table="notes")
    install_app(tmp_path, database, tmp_path / "cli-state", "ledger", table="ledger")
    roles = pg.psql(name, "SELECT rolname FROM pg_roles WHERE rolname LIKE 'hearth_app_%' "
                          "ORDER BY 1").split()
    assert roles == ["hearth_app_ledger", "hearth_app_notes"]
    # Two daemons that never installed anything serve both apps from the database.
    a = shared_daemon(database, [EXAMPLES / "notes"])
    b = shared_daemon(database, [EXAMPLES / "notes"])
    try:
        result(a.rpc("vault/set", {"scope": "api.example.com", "name": "K", "value": "v"}))
        result(invoke(a, "notes", "query", {"sql": "INSERT INTO notes (text) VALUES (?)",
                                            "params": ["through A"]}))
        rows = result(invoke(b, "notes", "query", {"sql": "SELECT text FROM notes"}))["rows"]
        assert rows == [["through A"]]
        # The ledger app's SQL cannot read the notes app's schema, hearth's tables, or get out
        # of its role: the database refuses it, whatever the SQL says.
        for sql in ("SELECT * FROM hearth_app_notes.notes",
                    "SELECT * FROM hearth_workspaces.workspace",
                    "SELECT * FROM hearth_vault.variables",
                    "SET ROLE hearth_admin",
                    "SELECT set_config('role', 'hearth_app_notes', false)",
                    "INSERT INTO ledger (text) VALUES ('a'); DROP TABLE ledger"):
            e = error(invoke(b, "ledger", "query", {"sql": sql}))
            assert e["code"] == -32001, (sql, e)
        result(invoke(a, "ledger", "query", {"sql": "INSERT INTO ledger (text) VALUES (?)",
                                             "params": ["kept"]}))
    finally:
        a.stop()
        b.stop()
    # Uninstall with an export: the app's tables as JSON Lines in the archive, then gone.
    archive = tmp_path / "ledger-export.tar.gz"
    r = hearth_app(database, tmp_path / "cli-state", "uninstall", "ledger",
                   "--export-then-delete", str(archive))
    assert r.returncode == 0, r.stderr + r.stdout
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert any(n.endswith("tables/tables.json") for n in names), names
        rows = next(n for n in names if n.endswith("tables/ledger.jsonl"))
        lines = tar.extractfile(rows).read().decode().splitlines()
        assert len(lines) == 1 and "kept" in lines[0], lines
    assert pg.psql(name, "SELECT count(*) FROM pg_namespace WHERE nspname = 'hearth_app_ledger'") \
        == "0"
    # Uninstall with delete: the schema and the role go.
    r = hearth_app(database, tmp_path / "cli-state", "uninstall", "notes", "--delete-data")
    assert r.returncode == 0, r.stderr + r.stdout
    assert pg.psql(name, "SELECT count(*) FROM pg_roles WHERE rolname = 'hearth_app_notes'") == "0"
    assert pg.psql(name, "SELECT count(*) FROM pg_namespace WHERE nspname = 'hearth_app_notes'") \
        == "0"


def test_server_placement_is_refused_without_a_server(tmp_path):
    pkg = tmp_path / "p"
    (pkg / "storage" / "migrations").mkdir(parents=True)
    (pkg / "APP.md").write_text(app_md("remote", "server-postgresql", "per-app-schema", "t"))
    (pkg / "storage" / "migrations" / "001.sql").write_text("CREATE TABLE t (x TEXT);")
    env = {k: v for k, v in os.environ.items() if k != "HEARTH_DATABASE"}
    r = subprocess.run([hearth_bin(), "app", "install", str(pkg), "--dev", "--state-dir",
                        str(tmp_path / "s")], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "--database postgresql://" in (r.stderr + r.stdout)


def handshake(ws):
    result(ws.request("initialize", {"clientInfo": {"name": "test-host", "version": "1"}}))
    ws.send({"jsonrpc": "2.0", "method": "initialized"})


def test_app_server_sessions_and_events_are_shared(pg, tmp_path):
    database = pg.url(pg.fresh_database("appserver"))
    install_app(tmp_path, database, tmp_path / "cli-state", "tasks", placement="local-sqlite",
                isolation="per-app-database")
    fake = FakeModel([{"reply": {"tool_calls": [
        {"name": "complete", "arguments": {"result": {"done": True}}}]}}])
    fake.start()
    model = ["--model-url", fake.base_url, "--model", "fake"]
    a = shared_daemon(database, [EXAMPLES / "notes"], model)
    b = shared_daemon(database, [EXAMPLES / "notes"], model)
    try:
        with a.ws() as wa, b.ws() as wb:
            handshake(wa)
            handshake(wb)
            params = {"appId": "tasks", "workspaceId": "w1", "entryKey": "board",
                      "idempotencyKey": "board-7"}
            s = result(wa.request("agentSession/start", params, id=2))
            # The same key through the other daemon is the same session: the database decides.
            again = result(wb.request("agentSession/start", params, id=2))
            assert again["sessionId"] == s["sessionId"] and again["reused"] is True
            # B reads the session and listens; a turn A runs reaches B's client, in order.
            state = result(wb.request("agentSession/read", {"sessionId": s["sessionId"],
                                                             "workspaceId": "w1"}, id=3))
            last = state["events"][-1]["seq"]
            result(wa.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": {"q": "go"}}, id=4))
            seen = []
            while not seen or seen[-1]["type"] != "completed":
                seen.append(wb.notification("agentSession/event", timeout=30)["params"])
            seqs = [e["seq"] for e in seen]
            assert seqs == list(range(last + 1, last + 1 + len(seqs)))
    finally:
        a.stop()
        b.stop()
        fake.stop()
    # The app was installed by the CLI on another state dir: disabling it through the database
    # is seen by a daemon at its next call.
    r = hearth_app(database, tmp_path / "other-state", "disable", "tasks")
    assert r.returncode == 0, r.stderr + r.stdout
    with shared_daemon(database, [EXAMPLES / "notes"]) as c:
        e = error(invoke(c, "tasks", "get", {"key": "k"}))
        assert e["data"]["stage"] == "enabled"
