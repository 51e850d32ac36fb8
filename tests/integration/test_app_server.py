"""The App Server (docs/app-server.md) against the real daemon and the scripted fake model server:
the handshake, sessions, turns that complete, wait for approvals, get cancelled or fail their
output schema, events that survive a reconnect, idempotency keys, and the evidence turns leave."""
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, ROOT, Daemon, error, hearth_bin, result

sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from server import FakeModel  # noqa: E402

APP_MD = """---
name: tasks
description: Tasks an agent works on inside the app.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.agent: ^1.0
    lime.storage: ^1.0
    lime.artifacts: ^1.0
permissions:
  - key: db
    scope: storage
    access: read-write
  - key: reports
    scope: artifact
    access: read-write
storage:
  namespace: tasks
  migrations: storage/migrations
entries:
  - key: board
    kind: page
    title: Board
    route: /board
artifactTypes:
  - key: report
---
# Tasks
"""

OUTPUT_SCHEMA = {"type": "object", "required": ["count", "stored"],
                 "properties": {"count": {"type": "integer"},
                                "stored": {"type": "array", "items": {"type": "string"}}},
                 "additionalProperties": False}


def app(*args):
    return subprocess.run([hearth_bin(), "app", *args], capture_output=True, text=True, timeout=60)


def install(tmp_path, app_md=APP_MD):
    pkg = tmp_path / "tasks"
    (pkg / "storage" / "migrations").mkdir(parents=True)
    (pkg / "APP.md").write_text(app_md)
    (pkg / "storage" / "migrations" / "001.sql").write_text("CREATE TABLE tasks (title TEXT);")
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    r = app("install", str(pkg), "--dev", *sd)
    assert r.returncode == 0, r.stderr
    assert app("enable", "tasks", *sd).returncode == 0, app("show", "tasks", "--json", *sd).stdout
    return state


@pytest.fixture
def installed(tmp_path):
    return install(tmp_path)


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def daemon_with(state, fake, stream=False):
    args = ["--model-url", fake.base_url, "--model", "fake"]
    if stream:
        args.append("--model-stream")
    return Daemon([EXAMPLES / "notes"], state_dir=state, extra_args=args)


def handshake(ws):
    r = result(ws.request("initialize", {"clientInfo": {"name": "test-host", "version": "1"}}))
    assert r["protocolVersion"] and r["serverInfo"]["name"] == "hearth"
    ws.send({"jsonrpc": "2.0", "method": "initialized"})


def start(ws, **extra):
    params = {"appId": "tasks", "workspaceId": "w1", "entryKey": "board", **extra}
    return result(ws.request("agentSession/start", params, id=2))


def events_until(ws, done, timeout=30):
    """agentSession/event params until `done(event)` holds for one (included)."""
    out = []
    while True:
        e = ws.notification("agentSession/event", timeout=timeout)["params"]
        out.append(e)
        if done(e):
            return out


def test_the_handshake_comes_first(installed):
    fake = FakeModel([])
    fake.start()
    try:
        with daemon_with(installed, fake) as d, d.ws() as ws:
            e = error(ws.request("agentSession/start", {"appId": "tasks", "workspaceId": "w1"}))
            assert e["code"] == -32600 and "initialize" in e["message"]
            for method in ["artifact/read", "evidence/export", "agentSession/read"]:
                assert error(ws.request(method, {"appId": "tasks"}))["code"] == -32600
            e = error(ws.request("initialize", {"clientInfo": {}}))
            assert e["code"] == -32602 and "clientInfo" in e["message"]
            result(ws.request("initialize", {"clientInfo": {"name": "host"}}))
            e = error(ws.request("agentSession/start", {"appId": "tasks", "workspaceId": "w1"}))
            assert "initialized" in e["message"]
            assert "already" in error(ws.request("initialize", {"clientInfo": {"name": "x"}}))["message"]
            ws.send({"jsonrpc": "2.0", "method": "initialized"})
            s = start(ws)
            assert s["appId"] == "tasks" and s["sessionId"].startswith("ses_")
            # Another connection is not initialized because this one is.
            with d.ws() as other:
                assert error(other.request("agentSession/read", {
                    "sessionId": s["sessionId"], "workspaceId": "w1"}))["code"] == -32600
                handshake(other)
                e = error(other.request("agentSession/read", {
                    "sessionId": s["sessionId"], "workspaceId": "w2"}))
                assert e["code"] == -32001 and "another workspace" in e["message"]
            # An app that does not declare lime.agent, or is unknown.
            e = error(ws.request("agentSession/start", {"appId": "nobody", "workspaceId": "w1"}))
            assert e["code"] == -32602
    finally:
        fake.stop()


@pytest.mark.parametrize("stream", [False, True])
def test_a_turn_with_an_allowed_and_a_denied_change_completes(installed, stream):
    fake = FakeModel([
        {"expect": {"tools": ["lime_storage__get", "lime_storage__put", "lime_storage__query",
                              "lime_artifacts__create", "lime_artifacts__read",
                              "lime_artifacts__list", "ask_person", "complete"]},
         "reply": {"content": "Looking.", "tool_calls": [
             call("lime_storage__query", sql="SELECT count(*) FROM tasks")]}},
        {"expect": {"lastRole": "tool"},
         "reply": {"tool_calls": [call("lime_storage__put", key="plan", value={"steps": 2})]}},
        {"expect": {"lastRole": "tool"},
         "reply": {"tool_calls": [call("lime_storage__put", key="secret", value=1)]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": "denied"},
         "reply": {"tool_calls": [call("complete", result={"count": 0, "stored": ["plan"]})]}},
    ])
    fake.start()
    try:
        with daemon_with(installed, fake) as d:
            with d.ws() as ws:
                handshake(ws)
                s = start(ws)
                # The turn's own stream flag (the daemon streams by default only with
                # --model-stream).
                turn = result(ws.request("agentSession/turn/start", {
                    "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Plan the week",
                    "outputSchema": OUTPUT_SCHEMA, "idempotencyKey": "t1", "stream": stream}, id=3))
                assert turn["status"] == "queued"
                seen = []
                decisions = iter(["allow", "deny"])
                while True:
                    e = ws.notification("agentSession/event", timeout=30)["params"]
                    seen.append(e)
                    if e["type"] == "action.required":
                        decision = next(decisions)
                        r = result(ws.request("agentSession/action/respond", {
                            "sessionId": s["sessionId"], "workspaceId": "w1",
                            "actionId": e["payload"]["actionId"], "decision": decision}, id=9))
                        assert r["decision"] == decision
                    if e["type"] in ("completed", "cancelled") or (
                            e["type"] == "status" and e["payload"]["status"] == "failed"):
                        break
                assert fake.errors == []
                assert seen[-1]["type"] == "completed"
                assert seen[-1]["payload"]["result"] == {"count": 0, "stored": ["plan"]}
                # Every event is numbered in order, with the session, turn, trace and time.
                seqs = [e["seq"] for e in seen]
                assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
                assert all(e["sessionId"] == s["sessionId"] and e["traceId"] and e["timestamp"]
                           for e in seen)
                # The session's own first event has no turn; every other is this turn's.
                assert seen[0]["turnId"] is None and seen[0]["payload"]["status"] == "started"
                assert all(e["turnId"] == turn["turnId"] for e in seen[1:])
                types = [e["type"] for e in seen]
                assert types.count("action.required") == 2
                tool_states = [e["payload"]["status"] for e in seen if e["type"] == "tool.call"]
                assert "denied" in tool_states and tool_states.count("completed") == 2
                assert any(e["type"] == "progress" and "delta" in e["payload"] for e in seen) == stream
                assert all(r.get("stream", False) == stream for r in fake.requests)
                # The allowed change happened; the denied one did not.
                got = lambda key: result(d.rpc("capability/invoke", {
                    "appId": "tasks", "capability": "lime.storage", "method": "get",
                    "params": {"key": key}}))["value"]
                assert got("plan") == {"steps": 2} and got("secret") is None
                # The turn is stored with its result; a retried turn/start finds it.
                again = result(ws.request("agentSession/turn/start", {
                    "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Plan the week",
                    "idempotencyKey": "t1"}, id=4))
                assert again["turnId"] == turn["turnId"] and again["reused"] is True
                assert again["status"] == "completed"
                # An artifact of the app, read through the App Server (and the bridge's policy).
                made = result(d.rpc("capability/invoke", {
                    "appId": "tasks", "capability": "lime.artifacts", "method": "create",
                    "params": {"type": "report", "content": "week plan"}}))
                read = result(ws.request("artifact/read", {"appId": "tasks", "artifactId": made["id"]}, id=6))
                assert read["content"] == "week plan" and read["provenance"]["appName"] == "tasks"
                assert error(ws.request("artifact/read", {"appId": "tasks", "artifactId": "art_none"}, id=7))["code"] == -32602
                # Evidence: the turn, its approvals and its result, with the model's name.
                ev = result(ws.request("evidence/export", {"appId": "tasks"}, id=5))
                assert ev["verified"] is True
                kinds = [e["kind"] for e in ev["entries"]]
                for kind in ["agent.session.started", "agent.turn.started", "agent.action.allowed",
                             "agent.action.denied", "agent.turn.completed"]:
                    assert kind in kinds, kinds
                started = next(e for e in ev["entries"] if e["kind"] == "agent.turn.started")
                assert started["detail"]["model"] == "fake" and started["detail"]["input"] == "Plan the week"
                assert started["provenance"]["appName"] == "tasks"
                callers = [e["detail"]["caller"] for e in ev["entries"]
                           if e["kind"] == "capability.invoked"]
                # The model's query and allowed put, this test's two reads and its artifact, and
                # the App Server's artifact/read.
                assert callers == [f"agent:{s['sessionId']}"] * 2 + ["daemon"] * 3 + ["app-server"], callers
    finally:
        fake.stop()


def test_a_reconnecting_client_reads_what_it_missed_without_gaps_or_duplicates(installed):
    fake = FakeModel([
        {"reply": {"tool_calls": [call("lime_storage__get", key="a")]}},
        {"reply": {"tool_calls": [call("complete", result={"count": 1, "stored": []})]}},
    ])
    fake.start()
    try:
        with daemon_with(installed, fake) as d:
            with d.ws() as ws:
                handshake(ws)
                s = start(ws, idempotencyKey="board-1")
                # A retried start with the same key is the same session.
                assert start(ws, idempotencyKey="board-1")["sessionId"] == s["sessionId"]
                result(ws.request("agentSession/turn/start", {
                    "sessionId": s["sessionId"], "workspaceId": "w1", "input": {"q": "count"},
                    "outputSchema": OUTPUT_SCHEMA}, id=3))
                first = ws.notification("agentSession/event", timeout=30)["params"]
            # The connection dropped after one event. The turn goes on; a new connection (plain
            # HTTP here) reads from the last event it saw.
            time.sleep(0.5)
            with d.http() as http:
                e = error(http.rpc("agentSession/read", {"sessionId": s["sessionId"],
                                                         "workspaceId": "w1"}))
                assert e["code"] == -32600
                result(http.rpc("initialize", {"clientInfo": {"name": "http-host"}}))
                http.post(json.dumps({"jsonrpc": "2.0", "method": "initialized"}))
                deadline = time.time() + 20
                while True:
                    state = result(http.rpc("agentSession/read", {
                        "sessionId": s["sessionId"], "workspaceId": "w1",
                        "afterSeq": first["seq"]}))
                    if state["turns"] and state["turns"][0]["status"] == "completed":
                        break
                    assert time.time() < deadline
                    time.sleep(0.1)
                seqs = [e["seq"] for e in state["events"]]
                assert seqs == list(range(first["seq"] + 1, first["seq"] + 1 + len(seqs)))
                assert state["events"][-1]["type"] == "completed"
                assert state["session"]["lastSeq"] == seqs[-1]
                assert state["turns"][0]["result"] == {"count": 1, "stored": []}
            # A WebSocket that reads from a sequence number, then listens: the rest comes as
            # notifications, each once.
            with d.ws() as ws2:
                handshake(ws2)
                state = result(ws2.request("agentSession/read", {
                    "sessionId": s["sessionId"], "workspaceId": "w1", "afterSeq": 0}, id=7))
                assert [e["seq"] for e in state["events"]][0] == 1
        assert fake.errors == []
    finally:
        fake.stop()


def test_sessions_streaming_at_once_get_every_event_once_in_order_as_stored(installed):
    # Events that arrive together are stored in one transaction and then pushed: each session's
    # pushed events must still be exactly its stored ones, numbered without gaps.
    sessions = 4
    text = "a long answer, streamed in small pieces " * 20
    step = {"reply": {"content": text, "tool_calls": [call("complete", result={"count": 0, "stored": []})]}}
    fake = FakeModel([step] * sessions)
    fake.start()
    try:
        with daemon_with(installed, fake, stream=True) as d:
            out = [None] * sessions

            def run(i):
                with d.ws() as ws:
                    handshake(ws)
                    s = result(ws.request("agentSession/start", {
                        "appId": "tasks", "workspaceId": f"w{i}", "entryKey": "board"}, id=2))
                    result(ws.request("agentSession/turn/start", {
                        "sessionId": s["sessionId"], "workspaceId": f"w{i}", "input": "go",
                        "outputSchema": OUTPUT_SCHEMA}, id=3))
                    pushed = events_until(ws, lambda e: e["type"] in ("completed", "failed"))
                    stored = result(ws.request("agentSession/read", {
                        "sessionId": s["sessionId"], "workspaceId": f"w{i}", "afterSeq": 0}, id=4))
                    out[i] = (pushed, stored["events"])

            threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        for pushed, stored in out:
            assert pushed[-1]["type"] == "completed"
            assert sum(1 for e in pushed if e["type"] == "progress") >= 20
            seqs = [e["seq"] for e in pushed]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert [(e["seq"], e["type"], e["payload"]) for e in pushed] == \
                [(e["seq"], e["type"], e["payload"]) for e in stored if e["seq"] >= seqs[0]]
        assert fake.errors == []
    finally:
        fake.stop()


def test_cancel_mid_turn_and_an_output_that_fails_its_schema(installed):
    fake = FakeModel([
        {"delayMs": 5000, "reply": {"content": "slow"}},
        {"reply": {"tool_calls": [call("complete", result={"count": "many"})]}},
        {"reply": {"tool_calls": [call("complete", result={"count": 1})]}},
        {"reply": {"tool_calls": [call("complete", result={"stored": 3})]}},
    ])
    fake.start()
    try:
        with daemon_with(installed, fake) as d, d.ws() as ws:
            handshake(ws)
            s = start(ws)
            turn = result(ws.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": "slow one"}, id=3))
            events_until(ws, lambda e: e["type"] == "progress")
            r = result(ws.request("agentSession/turn/cancel", {
                "sessionId": s["sessionId"], "workspaceId": "w1"}, id=4))
            assert r["turnId"] == turn["turnId"]
            seen = events_until(ws, lambda e: e["type"] in ("cancelled", "completed"), timeout=10)
            assert seen[-1]["type"] == "cancelled"
            # The next turn's results fail the schema three times: error events, then failed.
            result(ws.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": "count",
                "outputSchema": OUTPUT_SCHEMA}, id=5))
            seen = events_until(ws, lambda e: e["type"] == "status" and e["payload"]["status"] == "failed")
            invalid = [e for e in seen if e["type"] == "error" and e["payload"]["kind"] == "output-invalid"]
            assert len(invalid) == 3 and invalid[0]["payload"]["violations"]
            assert not any(e["type"] == "completed" for e in seen)
            state = result(ws.request("agentSession/read", {
                "sessionId": s["sessionId"], "workspaceId": "w1"}, id=6))
            assert [t["status"] for t in state["turns"]] == ["cancelled", "failed"]
    finally:
        fake.stop()


TOOLS_MD = APP_MD.replace("artifactTypes:", """toolRefs:
  - key: notes
    provider: lavs
    capability: simple-notes.getNotes
  - key: save-note
    provider: lavs
    capability: simple-notes.saveNote
  - key: weather
    provider: somewhere-else
    capability: forecast
artifactTypes:""")


def test_bound_tools_and_a_question_for_the_person(tmp_path):
    state = install(tmp_path, TOOLS_MD)
    review = json.loads(app("show", "tasks", "--json", "--state-dir", str(state)).stdout)["review"]
    assert [t["key"] for t in review["tools"]] == ["notes", "save-note", "weather"]
    fake = FakeModel([
        {"expect": {"tools": ["lime_storage__get", "lime_storage__put", "lime_storage__query",
                              "lime_artifacts__create", "lime_artifacts__read",
                              "lime_artifacts__list", "tool_notes", "tool_save-note",
                              "ask_person", "complete"]},
         "reply": {"tool_calls": [call("tool_notes")]}},
        {"expect": {"lastRole": "tool"},
         "reply": {"tool_calls": [call("ask_person", question="What should the note say?")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": "a heron at dawn"},
         "reply": {"tool_calls": [call("tool_save-note", NOTE="a heron at dawn")]}},
        {"expect": {"lastRole": "tool"},
         "reply": {"tool_calls": [call("complete", result={"count": 1, "stored": ["a heron at dawn"]})]}},
    ])
    fake.start()
    try:
        with daemon_with(state, fake) as d, d.ws() as ws:
            handshake(ws)
            s = start(ws)
            result(ws.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Write a note",
                "outputSchema": OUTPUT_SCHEMA}, id=3))
            seen = []
            while True:
                e = ws.notification("agentSession/event", timeout=30)["params"]
                seen.append(e)
                if e["type"] == "action.required":
                    p = e["payload"]
                    if p["kind"] == "input":
                        assert p["question"] == "What should the note say?"
                        result(ws.request("agentSession/action/respond", {
                            "sessionId": s["sessionId"], "workspaceId": "w1", "actionId": p["actionId"],
                            "decision": "allow", "answer": "a heron at dawn"}, id=8))
                    else:
                        # The mutation endpoint waits for the person; the query did not.
                        assert p["provider"] == "lavs" and p["target"] == "simple-notes.saveNote"
                        result(ws.request("agentSession/action/respond", {
                            "sessionId": s["sessionId"], "workspaceId": "w1", "actionId": p["actionId"],
                            "decision": "allow"}, id=9))
                if e["type"] in ("completed", "cancelled") or (
                        e["type"] == "status" and e["payload"]["status"] == "failed"):
                    break
            assert fake.errors == []
            assert seen[-1]["type"] == "completed"
            kinds = [e["payload"]["kind"] for e in seen if e["type"] == "action.required"]
            assert kinds == ["input", "approval"]
            notices = [e["payload"]["notice"] for e in seen if e["type"] == "progress" and "notice" in e["payload"]]
            assert any("weather" in n and "somewhere-else" in n for n in notices), notices
            # The endpoint ran: the note is in the service.
            notes = result(d.call("getNotes"))
            assert "a heron at dawn" in json.dumps(notes)
            ev = result(ws.request("evidence/export", {"appId": "tasks"}, id=10))
            called = [e["detail"] for e in ev["entries"] if e["kind"] == "agent.tool.called"]
            assert [c["target"] for c in called] == ["simple-notes.getNotes", "simple-notes.saveNote"]
            allowed = [e["detail"]["kind"] for e in ev["entries"] if e["kind"] == "agent.action.allowed"]
            assert allowed == ["input", "approval"]
    finally:
        fake.stop()


def test_registry_and_workspace_tools(tmp_path):
    """An app bound to an A2S capability (the registry example's weather, its demo key in the
    vault) and to a workspace's scripts (the trip planner): both wait for approval, both run."""
    import shutil
    from a2s_servers import RegistryExamples
    examples = RegistryExamples(ROOT, tmp_path, hearth_bin())
    fake = None
    try:
        shutil.copytree(ROOT / "examples/trip-planner", tmp_path / "trip")
        manifest = tmp_path / "trip/service/lavs.json"
        manifest.write_text(examples.rewrite(manifest.read_text()))
        state = examples.state_dir
        pkg = tmp_path / "pkg"
        (pkg / "storage" / "migrations").mkdir(parents=True)
        (pkg / "APP.md").write_text(APP_MD.replace("artifactTypes:", """toolRefs:
  - key: weather
    provider: registry
    capability: WeatherService/Forecast Weather
  - key: trip
    provider: workspace
    capability: trip-planner
artifactTypes:"""))
        (pkg / "storage" / "migrations" / "001.sql").write_text("CREATE TABLE tasks (title TEXT);")
        sd = ["--state-dir", str(state)]
        assert app("install", str(pkg), "--dev", *sd).returncode == 0
        assert app("enable", "tasks", *sd).returncode == 0
        fake = FakeModel([
            {"reply": {"tool_calls": [call("tool_weather", DATE="2026-12-04")]}},
            {"expect": {"lastRole": "tool"},
             "reply": {"tool_calls": [call("tool_trip", script="trip = {...trip, nights: 3}; return trip.nights;")]}},
            {"expect": {"lastRole": "tool", "lastMessageContains": "committed"},
             "reply": {"tool_calls": [call("complete", result={"count": 3, "stored": []})]}},
        ])
        fake.start()
        with Daemon([tmp_path / "trip/service"], copy=False, state_dir=state,
                    extra_args=["--registry", str(examples.registry), *examples.local_args,
                                "--workspace", str(tmp_path / "trip/workspace"),
                                "--model-url", fake.base_url, "--model", "fake"]) as d, d.ws() as ws:
            handshake(ws)
            s = start(ws)
            result(ws.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Plan three nights",
                "outputSchema": OUTPUT_SCHEMA}, id=3))
            targets = []
            while True:
                e = ws.notification("agentSession/event", timeout=60)["params"]
                if e["type"] == "action.required":
                    targets.append(e["payload"]["target"])
                    result(ws.request("agentSession/action/respond", {
                        "sessionId": s["sessionId"], "workspaceId": "w1",
                        "actionId": e["payload"]["actionId"], "decision": "allow"}, id=9))
                if e["type"] == "tool.call" and e["payload"]["status"] == "completed":
                    if e["payload"]["name"] == "tool_weather":
                        assert e["payload"]["result"]["status"] == "ok", e
                        assert "demo-" not in json.dumps(e)  # the vault's key never shows
                if e["type"] in ("completed", "cancelled") or (
                        e["type"] == "status" and e["payload"]["status"] == "failed"):
                    break
            assert e["type"] == "completed", e
            assert targets == ["WeatherService/Forecast Weather", "trip-planner"]
            assert fake.errors == []
            trip = result(d.rpc("workspace/state", {"workspaceId": "trip-planner", "name": "trip"}))
            assert trip["value"]["nights"] == 3
    finally:
        if fake:
            fake.stop()
        examples.stop()


def test_app_page_files_are_served_to_their_mount_only(tmp_path):
    """/apps/<ticket>/: the app's UI files, with the views' sandbox headers, no token needed,
    nothing outside the UI folder, gone with the connection that opened the mount."""
    from hearthtest import raw_http
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    assert app("install", str(ROOT / "examples/apps/field-notes"), "--dev", *sd).returncode == 0
    with Daemon([EXAMPLES / "notes"], state_dir=state) as d:
        get = lambda path: raw_http(d.port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n\r\n".encode())
        with d.ws() as ws:
            # Not enabled: no entries, no mount.
            assert result(ws.request("app/ui/entries", {}))["apps"] == []
            assert error(ws.request("app/ui/open", {"appId": "field-notes", "entryKey": "notes"}))["code"] == -32001
        assert app("enable", "field-notes", *sd).returncode == 0
        with d.ws() as ws:
            apps = result(ws.request("app/ui/entries", {}))["apps"]
            assert [(a["appId"], [e["key"] for e in a["entries"]]) for a in apps] == [("field-notes", ["notes"])]
            assert error(ws.request("app/ui/open", {"appId": "field-notes", "entryKey": "summarise"}))["code"] == -32602
            m = result(ws.request("app/ui/open", {"appId": "field-notes", "entryKey": "notes"}))
            assert m["runtimeOrigin"] == "null" and m["route"] == "/notes"
            status, data = get(m["url"])
            assert status == 200
            head = data.split(b"\r\n\r\n", 1)[0].decode().lower()
            assert "sandbox allow-scripts allow-forms" in head and "connect-src 'none'" in head
            assert "nonce-" in head  # its inline script runs under this response's nonce
            ticket = m["url"].split("/")[2]
            for bad in [f"/apps/{ticket}/../../APP.md", f"/apps/{ticket}/%2e%2e/%2e%2e/APP.md",
                        f"/apps/{ticket}/..%2f..%2fAPP.md", f"/apps/{ticket}//etc/passwd",
                        f"/apps/{'0' * 32}/index.html", "/apps/"]:
                assert get(bad)[0] == 404, bad
            # The mount is this connection's: another cannot use it, and HTTP cannot open one.
            with d.ws() as other:
                e = error(other.request("app/ui/invoke", {"mountId": m["mountId"], "capability": "lime.storage",
                                                          "method": "get", "params": {"key": "k"}}))
                assert e["code"] == -32602
            assert error(d.rpc("app/ui/open", {"appId": "field-notes", "entryKey": "notes"}))["code"] == -32600
            # The frame's calls run as the mount's app, whatever app they name.
            r = result(ws.request("app/ui/invoke", {"mountId": m["mountId"], "capability": "lime.storage",
                                                    "method": "put", "params": {"key": "k", "value": 1},
                                                    "appId": "someone-else"}))
            assert r["stored"] is True
        # The connection closed: its mount and its files are gone.
        from hearthtest import wait_for
        assert wait_for(lambda: get(m["url"])[0] == 404, 5)
        log = json.loads(app("evidence", "field-notes", *sd).stdout)["entries"]
        assert any(e["detail"].get("caller") == "ui:notes" for e in log if e["kind"] == "capability.invoked")


def test_the_app_servers_own_endpoints_serve_nothing_before_the_handshake(installed):
    fake = FakeModel([])
    fake.start()
    try:
        with daemon_with(installed, fake) as d:
            with d.ws(path="/app-server/ws") as ws:
                for method, params in [("capability/list", {"appId": "tasks"}),
                                       ("agentSession/start", {"appId": "tasks", "workspaceId": "w1"}),
                                       ("evidence/export", {"appId": "tasks"})]:
                    assert error(ws.request(method, params))["code"] == -32600, method
                # Only the App Server is here: the daemon's other methods are not.
                assert error(ws.request("lavs/manifest", {}))["code"] == -32601
                handshake(ws)
                caps = result(ws.request("capability/list", {"appId": "tasks"}))["capabilities"]
                assert {c["capability"]: c["status"] for c in caps}["lime.agent"] == "available"
                assert start(ws)["appId"] == "tasks"
            with d.http() as http:
                def call(method, params, id=1):
                    status, _, data = http.post({"jsonrpc": "2.0", "id": id, "method": method,
                                                 "params": params}, path="/app-server")
                    assert status == 200
                    return json.loads(data)
                assert error(call("capability/list", {"appId": "tasks"}))["code"] == -32600
                result(call("initialize", {"clientInfo": {"name": "http-host"}}))
                http.post({"jsonrpc": "2.0", "method": "initialized"}, path="/app-server")
                assert result(call("capability/list", {"appId": "tasks"}))["appId"] == "tasks"
                # The token is required there as everywhere.
                status, _, _ = http.post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                          "params": {"clientInfo": {"name": "x"}}},
                                         path="/app-server", token=False)
                assert status == 401
    finally:
        fake.stop()


def test_a_turn_a_stopped_daemon_left_running_is_failed_at_the_next_start(installed):
    fake = FakeModel([{"delayMs": 20000, "reply": {"content": "too late"}}])
    fake.start()
    try:
        d = daemon_with(installed, fake)
        try:
            with d.ws() as ws:
                handshake(ws)
                s = start(ws)
                result(ws.request("agentSession/turn/start", {
                    "sessionId": s["sessionId"], "workspaceId": "w1", "input": "slow"}, id=3))
                events_until(ws, lambda e: e["type"] == "progress")
            d.proc.kill()  # no shutdown: the turn is left "running" in the store
            d.proc.wait()
        finally:
            d.cleanup()
        with daemon_with(installed, fake) as d2, d2.ws() as ws:
            handshake(ws)
            state = result(ws.request("agentSession/read", {"sessionId": s["sessionId"], "workspaceId": "w1"}))
            assert [t["status"] for t in state["turns"]] == ["failed"]
            assert "stopped during the turn" in state["turns"][0]["error"]["message"]
            assert state["events"][-1]["payload"]["status"] == "failed"
    finally:
        fake.stop()


SHAPES_MD = APP_MD.replace("artifactTypes:", """toolRefs:
  - key: add
    provider: lavs
    capability: shapes.add
  - key: count
    provider: lavs
    capability: shapes.count
artifactTypes:""")


def test_bound_lavs_tools_take_the_endpoints_mcp_arguments(tmp_path):
    # An input given as a #/types reference reaches the model resolved; an input that is not an
    # object travels as the argument "input" and reaches the endpoint unwrapped.
    service = tmp_path / "shapes"
    service.mkdir()
    (service / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "shapes", "version": "1.0.0",
        "types": {"Pair": {"type": "object", "required": ["a", "b"],
                           "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
        "endpoints": [
            {"id": "add", "method": "query", "schema": {"input": {"$ref": "#/types/Pair"}},
             "handler": {"type": "function", "module": "shapes.mjs", "function": "add"}},
            {"id": "count", "method": "query",
             "schema": {"input": {"type": "array", "items": {"type": "number"}}},
             "handler": {"type": "function", "module": "shapes.mjs", "function": "count"}}]}))
    (service / "shapes.mjs").write_text(
        "export function add(i) { return { sum: i.a + i.b }; }\n"
        "export function count(i) { return { n: i.length }; }\n")
    state = install(tmp_path, SHAPES_MD)
    fake = FakeModel([
        {"expect": {"tools": ["lime_storage__get", "lime_storage__put", "lime_storage__query",
                              "lime_artifacts__create", "lime_artifacts__read",
                              "lime_artifacts__list", "tool_add", "tool_count",
                              "ask_person", "complete"]},
         "reply": {"tool_calls": [call("tool_add", a=1, b=2)]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"sum":3'},
         "reply": {"tool_calls": [call("tool_count", input=[4, 5, 6])]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"n":3'},
         "reply": {"tool_calls": [call("complete", result={"count": 3, "stored": []})]}},
    ])
    fake.start()
    try:
        args = ["--model-url", fake.base_url, "--model", "fake"]
        with Daemon([service], state_dir=state, extra_args=args) as d, d.ws() as ws:
            handshake(ws)
            s = start(ws)
            result(ws.request("agentSession/turn/start", {
                "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Add and count",
                "outputSchema": OUTPUT_SCHEMA}, id=3))
            seen = events_until(ws, lambda e: e["type"] in ("completed", "cancelled") or (
                e["type"] == "status" and e["payload"]["status"] == "failed"))
            assert fake.errors == []
            assert seen[-1]["type"] == "completed", seen[-1]
            tools = {t["function"]["name"]: t["function"]["parameters"] for t in fake.requests[0]["tools"]}
            assert tools["tool_add"]["type"] == "object"
            assert tools["tool_add"]["required"] == ["a", "b"] and "$ref" not in json.dumps(tools["tool_add"])
            assert tools["tool_count"] == {"type": "object", "required": ["input"], "properties": {
                "input": {"type": "array", "items": {"type": "number"}}}}
    finally:
        fake.stop()


# An app whose own backend lists tools (tools/list, as MCP servers do), declared the way MCP
# server configurations are written (command + args), with the side effects of its operations
# in app.operations.yaml.
PANTRY_MD = """---
name: pantry
description: A pantry and the shopping list made from it.
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
entries:
  - key: pantry
    kind: page
    title: Pantry
    route: /pantry
services:
  - key: backend
    kind: app-backend
    language: python
    executionPlane: client-local
    protocol: stdio-jsonrpc
    command: python3
    args: [./services/backend.py]
    path: ./services
---
# Pantry
"""

PANTRY_OPERATIONS = """operations:
  - key: add_pantry_item
    type: storage-write
    sideEffect: app_storage_write
    autoExecute: true
  - key: publish_shopping_list
    type: publish
    sideEffect: external_publish
    approvalRequired: true
    evidenceRequired: true
"""

PANTRY_PY = textwrap.dedent('''\
    import json, sys
    pantry, published, calls = [], [], []
    TOOLS = [
        {"name": "list_pantry", "description": "List what is in the pantry.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "add_pantry_item", "description": "Add an item to the pantry.",
         "inputSchema": {"type": "object", "required": ["item"],
                         "properties": {"item": {"type": "string"}}}},
        {"name": "publish_shopping_list", "description": "Publish the shopping list to the family.",
         "inputSchema": {"type": "object", "properties": {"note": {"type": "string"}}}},
        {"name": "clear_pantry", "description": "Remove every item.",
         "inputSchema": {"type": "object", "properties": {"dryRun": {"type": "boolean"}}}},
    ]
    def run(name, args):
        if name == "list_pantry":
            return {"items": list(pantry)}
        if name == "add_pantry_item":
            pantry.append(args["item"])
            return {"added": args["item"], "count": len(pantry)}
        if name == "publish_shopping_list":
            published.append(list(pantry))
            return {"published": True, "items": list(pantry)}
        if name == "clear_pantry":
            if args.get("dryRun"):
                return {"wouldRemove": list(pantry)}
            removed = list(pantry)
            pantry.clear()
            return {"removed": removed}
        raise KeyError(name)
    for line in sys.stdin:
        m = json.loads(line)
        if "id" not in m or "method" not in m:
            continue
        method, p = m["method"], m.get("params") or {}
        if method == "initialize":
            r = {"name": "pantry-backend"}
        elif method == "tools/list":
            r = {"tools": TOOLS}
        elif method == "tools/call":
            calls.append(p)
            try:
                out = run(p["name"], p.get("arguments") or {})
                r = {"content": [{"type": "text", "text": json.dumps(out)}], "structuredContent": out}
            except KeyError as e:
                r = {"content": [{"type": "text", "text": "no tool %s" % e}], "isError": True}
        elif method == "state":
            r = {"pantry": pantry, "published": published, "calls": calls}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"],
                                         "error": {"code": -32601, "message": method}}) + "\\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
        sys.stdout.flush()
''')


def install_pantry(tmp_path, operations=PANTRY_OPERATIONS):
    pkg = tmp_path / "pantry"
    (pkg / "services").mkdir(parents=True)
    (pkg / "APP.md").write_text(PANTRY_MD)
    (pkg / "app.operations.yaml").write_text(operations)
    (pkg / "services" / "backend.py").write_text(PANTRY_PY)
    state = tmp_path / "state"
    sd = ["--state-dir", str(state)]
    r = app("install", str(pkg), "--dev", *sd)
    assert r.returncode == 0, r.stderr
    r = app("enable", "pantry", *sd)
    assert r.returncode == 0, r.stderr
    return state


def run_turn(ws, session, decide, input="Stock the pantry", timeout=30):
    """Starts a turn and answers each action.required with decide(payload) (allow or deny);
    returns the events up to the end of the turn."""
    result(ws.request("agentSession/turn/start", {
        "sessionId": session, "workspaceId": "w1", "input": input}, id=3))
    seen = []
    n = 100
    while True:
        e = ws.notification("agentSession/event", timeout=timeout)["params"]
        seen.append(e)
        if e["type"] == "action.required":
            n += 1
            result(ws.request("agentSession/action/respond", {
                "sessionId": session, "workspaceId": "w1", "actionId": e["payload"]["actionId"],
                "decision": decide(e["payload"])}, id=n))
        if e["type"] in ("completed", "cancelled") or (
                e["type"] == "status" and e["payload"]["status"] == "failed"):
            return seen


def test_the_apps_backend_tools_are_offered_under_its_operations_policies(tmp_path):
    state = install_pantry(tmp_path)
    sd = ["--state-dir", str(state)]
    builtins = ["lime_storage__get", "lime_storage__put", "lime_storage__query", "ask_person",
                "complete"]
    own = ["list_pantry", "add_pantry_item", "publish_shopping_list", "clear_pantry"]
    fake = FakeModel([
        {"expect": {"tools": builtins + own},
         "reply": {"tool_calls": [call("list_pantry")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"items":[]'},
         "reply": {"tool_calls": [call("add_pantry_item", item="flour")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"added":"flour"'},
         "reply": {"tool_calls": [call("publish_shopping_list", note="for Saturday")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"published":true'},
         "reply": {"tool_calls": [call("publish_shopping_list", note="again")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": "the person denied this call"},
         "reply": {"tool_calls": [call("complete", result={"items": 1})]}},
    ])
    fake.start()
    try:
        with daemon_with(state, fake) as d, d.ws() as ws:
            handshake(ws)
            s = result(ws.request("agentSession/start", {"appId": "pantry", "workspaceId": "w1",
                                                         "entryKey": "pantry"}, id=2))
            decisions = iter(["allow", "allow", "deny"])
            asked = []
            seen = run_turn(ws, s["sessionId"], lambda p: (asked.append(p), next(decisions))[1])
            assert fake.errors == []
            assert seen[-1]["type"] == "completed", seen[-1]
            # The backend's own names, descriptions and input schemas reach the model.
            offered = {t["function"]["name"]: t["function"] for t in fake.requests[0]["tools"]}
            assert offered["add_pantry_item"]["parameters"] == {
                "type": "object", "required": ["item"], "properties": {"item": {"type": "string"}}}
            assert offered["add_pantry_item"]["description"].startswith("Add an item to the pantry.")
            assert "approval" not in offered["add_pantry_item"]["description"]
            assert "approval" in offered["publish_shopping_list"]["description"]
            # What waited: the undeclared tool (its side effect unknown) and each publish; the
            # add ran on its own (autoExecute).
            assert [(p["tool"], p["policy"]["sideEffect"]) for p in asked] == [
                ("list_pantry", "unknown"), ("publish_shopping_list", "external_publish"),
                ("publish_shopping_list", "external_publish")]
            assert all(p["kind"] == "approval" and p["provider"] == "backend" for p in asked)
            assert asked[1]["target"] == "backend/publish_shopping_list"
            assert asked[1]["arguments"] == {"note": "for Saturday"}
            calls = [e["payload"] for e in seen if e["type"] == "tool.call"]
            added = [c for c in calls if c["name"] == "add_pantry_item"]
            assert [c["status"] for c in added] == ["started", "completed"]
            assert added[0]["policy"]["approvalRequired"] is False
            assert added[1]["result"] == {"added": "flour", "count": 1}
            statuses = [(c["name"], c["status"]) for c in calls if c["status"] != "started"]
            assert statuses == [("list_pantry", "completed"), ("add_pantry_item", "completed"),
                                ("publish_shopping_list", "completed"),
                                ("publish_shopping_list", "denied")]
            # The allowed publish happened, the denied one did not; the backend was told the turn.
            state_now = result(d.rpc("app/backend/call", {"appId": "pantry", "method": "state"}))
            assert state_now["pantry"] == ["flour"] and state_now["published"] == [["flour"]]
            assert [c["name"] for c in state_now["calls"]] == [
                "list_pantry", "add_pantry_item", "publish_shopping_list"]
            assert state_now["calls"][0]["_meta"] == {"sessionId": s["sessionId"],
                                                      "turnId": seen[1]["turnId"],
                                                      "workspaceId": "w1"}
            # Evidence: each call with the package that ran it; the denial, with what was denied.
            ev = result(ws.request("evidence/export", {"appId": "pantry"}, id=50))
            assert ev["verified"] is True
            shown = json.loads(app("show", "pantry", "--json", *sd).stdout)
            # The person approved these with the review.
            assert [(o["key"], o["sideEffect"]) for o in shown["review"]["operations"]] == [
                ("add_pantry_item", "app_storage_write"),
                ("publish_shopping_list", "external_publish")]
            assert ev["provenance"]["packageHash"] == shown["packageHash"]
            assert ev["provenance"]["manifestHash"] == shown["manifestHash"]
            assert ev["provenance"]["standard"] == "agentapp"
            turn_entries = [e for e in ev["entries"] if e["kind"].startswith("agent.")]
            assert turn_entries and all(e["provenance"]["packageHash"] == shown["packageHash"]
                                        for e in turn_entries)
            tool_calls = [e["detail"] for e in ev["entries"] if e["kind"] == "agent.tool.called"]
            assert [(c["tool"], c["approvedBy"], c["ok"]) for c in tool_calls] == [
                ("list_pantry", "person", True), ("add_pantry_item", "policy", True),
                ("publish_shopping_list", "person", True)]
            assert all(c["packageHash"] == shown["packageHash"] for c in tool_calls)
            assert tool_calls[1]["arguments"] == {"item": "flour"}
            assert tool_calls[1]["result"] == {"added": "flour", "count": 1}
            assert tool_calls[1]["sideEffect"] == "app_storage_write"
            denied = [e["detail"] for e in ev["entries"] if e["kind"] == "agent.action.denied"]
            assert len(denied) == 1
            assert denied[0]["tool"] == "publish_shopping_list"
            assert denied[0]["arguments"] == {"note": "again"}
            assert denied[0]["policy"]["operation"] == "publish_shopping_list"
    finally:
        fake.stop()


def test_a_dry_run_is_shown_in_the_approval_and_a_tool_that_cannot_make_one_is_not_offered(tmp_path):
    state = install_pantry(tmp_path, """operations:
  - key: add_pantry_item
    type: storage-write
    sideEffect: app_storage_write
    autoExecute: true
  - key: publish_shopping_list
    type: publish
    sideEffect: external_publish
    approvalRequired: true
    dryRunRequired: true
  - key: clear_pantry
    type: bulk-update
    sideEffect: bulk_update
    approvalRequired: true
    dryRunRequired: true
    evidenceRequired: true
  - key: list_pantry
    type: read
    sideEffect: none
""")
    fake = FakeModel([
        # publish_shopping_list must make a dry run and has no dryRun argument: not offered.
        {"expect": {"tools": ["lime_storage__get", "lime_storage__put", "lime_storage__query",
                              "ask_person", "complete", "list_pantry", "add_pantry_item",
                              "clear_pantry"]},
         "reply": {"tool_calls": [call("add_pantry_item", item="rice")]}},
        {"expect": {"lastRole": "tool"}, "reply": {"tool_calls": [call("clear_pantry")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"removed":["rice"]'},
         "reply": {"tool_calls": [call("list_pantry")]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": '"items":[]'},
         "reply": {"tool_calls": [call("complete", result={})]}},
    ])
    fake.start()
    try:
        with daemon_with(state, fake) as d, d.ws() as ws:
            handshake(ws)
            s = result(ws.request("agentSession/start", {"appId": "pantry", "workspaceId": "w1"}, id=2))
            asked = []
            seen = run_turn(ws, s["sessionId"], lambda p: (asked.append(p), "allow")[1])
            assert fake.errors == []
            assert seen[-1]["type"] == "completed", seen[-1]
            notices = [e["payload"]["notice"] for e in seen
                       if e["type"] == "progress" and "notice" in e["payload"]]
            assert any("publish_shopping_list" in n and "dry run" in n for n in notices), notices
            # One approval, for the clear, showing what the dry run said it would remove; the
            # read (side effect none) did not wait.
            assert [p["tool"] for p in asked] == ["clear_pantry"]
            assert asked[0]["dryRun"]["result"] == {"wouldRemove": ["rice"]}
            backend = result(d.rpc("app/backend/call", {"appId": "pantry", "method": "state"}))
            assert [(c["name"], c["arguments"].get("dryRun")) for c in backend["calls"]] == [
                ("add_pantry_item", None), ("clear_pantry", True), ("clear_pantry", False),
                ("list_pantry", None)]
            ev = result(ws.request("evidence/export", {"appId": "pantry"}, id=50))
            kinds = [e["kind"] for e in ev["entries"]]
            assert "agent.tool.dryRun" in kinds
            cleared = next(e["detail"] for e in ev["entries"]
                           if e["kind"] == "agent.tool.called" and e["detail"]["tool"] == "clear_pantry")
            assert cleared["dryRun"] == {"wouldRemove": ["rice"]} and cleared["approvedBy"] == "person"
    finally:
        fake.stop()
