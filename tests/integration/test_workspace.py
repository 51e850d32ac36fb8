"""Virtual workspaces and the agent loop end to end: `hearth serve` with the workspace-search
example (a LAVS service and a workspace whose side effects call it), workspace/* over HTTP and
WebSocket, escape attempts, and agent runs against the scripted fake model server
(tests/fake_model/server.py) in plain and streamed mode, over JSON-RPC and the CLI."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hearthtest import Daemon, error, hearth_bin, result, wait_run_ended

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "workspace-search"
sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from server import FakeModel  # noqa: E402

TOOLS = ["attempt_completion", "execute_script"]


@pytest.fixture
def model():
    """The scripted model server, configured on the daemon as the model server "fake" (a run may
    name a server on this machine only when the daemon was configured with it)."""
    fake = FakeModel([])
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def daemon(model):
    tmp = Path(tempfile.mkdtemp(prefix="hearth-ws-"))
    shutil.copytree(EXAMPLE, tmp / "workspace-search")
    d = Daemon([tmp / "workspace-search"], copy=False,
               extra_args=["--workspace", str(tmp / "workspace-search" / "workspace"),
                           "--model-server", f"fake={model.base_url}"])
    yield d
    d.stop()
    d.cleanup()
    shutil.rmtree(tmp, ignore_errors=True)


def ws_call(d, method, params):
    return d.rpc(method, {"workspaceId": "product-search", **params})


def test_the_daemon_serves_the_workspace_and_its_sources(daemon):
    assert daemon.ready["workspaces"] == ["product-search"]
    listed = result(daemon.rpc("workspace/list"))["workspaces"]
    assert [w["workspaceId"] for w in listed] == ["product-search"]
    state = result(ws_call(daemon, "workspace/state", {}))
    names = {c["name"] for c in state["states"]["categories"]}
    assert {"coffee", "tea", "dairy"} <= names
    assert "recommendation" not in state["states"]  # write-only


def test_render_in_three_forms(daemon):
    text = result(ws_call(daemon, "workspace/render", {}))["text"]
    assert "VIRTUAL WORKSPACE: product-search" in text
    assert "{ search_pattern: string (≤300) }" in text
    assert "normalizeSearch(text)" in text and "Trims and lower-cases" in text
    assert "write-only" in text
    md = result(ws_call(daemon, "workspace/render", {"format": "markdown"}))["text"]
    assert "## search_box_state" in md
    view = result(ws_call(daemon, "workspace/render", {"format": "json"}))["view"]
    perms = {s["name"]: s["permission"] for s in view["states"]}
    assert perms["search_box_state"] == "rw" and perms["recommendation"] == "w"
    err = error(ws_call(daemon, "workspace/render", {"format": "html"}))
    assert err["code"] == -32602


def test_a_script_runs_the_side_effect_and_commits(daemon):
    out = result(ws_call(daemon, "workspace/execute",
                         {"script": "search_box_state.search_pattern = normalizeSearch('  MILK ');"
                                    " filter_state.maxPrice = 3;"}))
    assert out["committed"] is True and out["version"] >= 2
    assert set(out["changed"]) >= {"search_box_state", "filter_state", "search_results"}
    results = result(ws_call(daemon, "workspace/state", {"name": "search_results"}))["value"]
    assert results and all("milk" in (p["name"] + " ".join(p["tags"])).lower() for p in results)
    assert all(p["price"] <= 3 for p in results)
    # The model may write its recommendation but never read it back.
    out = result(ws_call(daemon, "workspace/execute",
                         {"script": "recommendation = {productId: search_results[0].id, reason: 'cheap'};"}))
    assert out["committed"] is True
    err = error(ws_call(daemon, "workspace/state", {"name": "recommendation"}))
    assert err["code"] == -32001
    err = error(ws_call(daemon, "workspace/execute", {"script": "return recommendation.reason;"}))
    assert "write-only" in err["message"]
    history = result(ws_call(daemon, "workspace/history", {}))["entries"]
    assert [e["outcome"] for e in history][-3:] == ["committed", "committed", "failed"]
    effect = [e for e in history if e["effects"]][0]["effects"][0]
    assert effect["service"] == "product-catalog" and effect["status"] == "ok"


def test_schema_violations_and_dry_runs_commit_nothing(daemon):
    before = result(ws_call(daemon, "workspace/state", {}))
    err = error(ws_call(daemon, "workspace/execute", {"script": "filter_state.maxPrice = -5;"}))
    assert err["code"] == -32602
    assert err["data"]["state"] == "filter_state"
    assert err["data"]["path"] == "maxPrice"
    assert err["data"]["keyword"] == "minimum"
    dry = result(ws_call(daemon, "workspace/execute",
                         {"script": "search_box_state.search_pattern = 'tea';", "dryRun": True}))
    assert dry["dryRun"] is True and dry["committed"] is False
    assert dry["effects"][0]["status"] == "would run"
    assert dry["effects"][0]["input"]["pattern"] == "tea"
    assert result(ws_call(daemon, "workspace/state", {})) == before


@pytest.mark.parametrize("script,says", [
    ("await (async()=>{}).constructor('return process')();", "process is not defined"),
    ("(async()=>{}).constructor('return process.env')();", "process is not defined"),
    ("globalThis.constructor.constructor('return this')().require('fs');", "require"),
    ("categories.push({name: 'x', count: 1});", "categories is read-only"),
    ("Object.getOwnPropertyDescriptor(globalThis, 'recommendation').get().reason;", "write-only"),
    ("search_box_state.__proto__.x = 1; search_box_state = JSON.parse('{\"__proto__\":{}}');", "__proto__"),
    ("while (true) {}", "time limit"),
    ("const a = []; for (;;) a.push(new Array(1e6).fill(7));", "memory"),
    ("readFile('/etc/passwd');", "does not grant file access"),
    ("await fetch('http://127.0.0.1:9/');", "does not grant network access"),
    ("Date.now();", "clock is not granted"),
    ("Math.random();", "randomness is not granted"),
])
def test_escape_attempts_fail_clearly_and_change_nothing(daemon, script, says):
    before = result(ws_call(daemon, "workspace/state", {}))
    err = error(ws_call(daemon, "workspace/execute",
                        {"script": "search_box_state.search_pattern = 'x'; " + script}))
    assert says in err["message"], err
    assert result(ws_call(daemon, "workspace/state", {})) == before


def test_revert_and_expected_version(daemon):
    v0 = result(ws_call(daemon, "workspace/state", {}))["version"]
    out = result(ws_call(daemon, "workspace/execute",
                         {"script": "search_box_state.search_pattern = 'tea';", "expectedVersion": v0}))
    changed_version = out["version"]
    err = error(ws_call(daemon, "workspace/execute",
                        {"script": "search_box_state.search_pattern = 'milk';", "expectedVersion": v0}))
    assert err["code"] == -32010 and err["data"]["version"] == changed_version
    reverted = result(ws_call(daemon, "workspace/revert", {"version": changed_version}))
    assert reverted["committed"] is True and reverted["reverts"] == changed_version
    box = result(ws_call(daemon, "workspace/state", {"name": "search_box_state"}))["value"]
    assert box == {"search_pattern": ""}


def test_subscribers_hear_of_changes(daemon):
    with daemon.ws() as ws:
        sub = ws.request("workspace/subscribe", {"workspaceId": "product-search"})
        assert result(sub)["subscribed"] is True
        result(ws_call(daemon, "workspace/execute", {"script": "filter_state.category = 'tea';"}))
        note = ws.notification("workspace/changed")
        assert "filter_state" in note["params"]["changed"]
    err = error(ws_call(daemon, "workspace/subscribe", {}))
    assert err["code"] == -32601




def agent_steps(stream):
    expect = {"tools": TOOLS, "stream": stream}
    return [
        # 1. a script that does not compile
        {"expect": {**expect, "lastRole": "user"},
         "reply": {"content": "Let me search.", "tool_calls": [
             {"name": "execute_script", "arguments": {"script": "search_box_state.search_pattern = ;"}}]}},
        # 2. a script that breaks the schema
        {"expect": {**expect, "lastRole": "tool", "lastMessageContains": "SyntaxError"},
         "reply": {"tool_calls": [
             {"name": "execute_script", "arguments": {"script": "filter_state.maxPrice = -1;"}}]}},
        # 3. a correct one
        {"expect": {**expect, "lastRole": "tool", "lastMessageContains": "minimum"},
         "reply": {"tool_calls": [{"name": "execute_script", "arguments": {
             "script": "search_box_state.search_pattern = 'tea'; filter_state.maxPrice = 4;"}}]}},
        # 4. done
        {"expect": {**expect, "lastRole": "tool", "lastMessageContains": "Earl grey"},
         "reply": {"content": "Found it.", "tool_calls": [
             {"name": "attempt_completion", "arguments": {"result": "The cheapest tea under 4 is chamomile."}}]}},
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_an_agent_recovers_from_bad_scripts_and_completes(daemon, model, stream):
    fake = model
    fake.reset(agent_steps(stream))
    base = fake.base_url
    if True:
        with daemon.ws() as ws:
            run = result(ws.request("agent/run", {
                "workspaceId": "product-search", "task": "Find a cheap tea",
                "model": {"baseUrl": base, "model": "fake", "stream": stream}}))
            events = []
            while True:
                msg = ws.notification("agent/event", timeout=60)
                events.append(msg["params"])
                if msg["params"]["type"].startswith("task."):
                    break
        assert fake.errors == []
        assert fake.remaining() == 0
        final = events[-1]
        assert final["type"] == "task.completed", final
        assert "chamomile" in final["result"]
        types = [e["type"] for e in events]
        assert types.count("tool.failed") == 2 and "tool.result" in types
        if stream:
            assert "model.delta" in types
        status = result(daemon.rpc("agent/read", {"runId": run["runId"]}))
        assert status["status"] == "completed" and status["turns"] == 4
        assert Path(run["transcript"]).stat().st_mode & 0o777 == 0o600
        lines = [json.loads(l) for l in Path(run["transcript"]).read_text().splitlines()]
        assert lines[0]["type"] == "run.started"
        assert any(l["type"] == "task.completed" for l in lines)
        # The model saw the fresh render in every tool result.
        tool_messages = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
        assert all("VIRTUAL WORKSPACE: product-search" in m["content"] for m in tool_messages)


def test_retry_after_is_honoured_and_failures_end_a_run(daemon, model):
    steps = [
        {"status": 429, "headers": {"Retry-After": "1"}},
        {"expect": {"tools": TOOLS},
         "reply": {"tool_calls": [{"name": "execute_script", "arguments": {"script": "throw new Error('a')"}}]}},
        {"reply": {"tool_calls": [{"name": "execute_script", "arguments": {"script": "throw new Error('b')"}}]}},
        {"reply": {"content": "<think>I am not sure.</think>"}},  # no call and no answer
    ]
    fake = model
    fake.reset(steps)
    base = fake.base_url
    if True:
        started = time.time()
        run = result(daemon.rpc("agent/run", {"workspaceId": "product-search", "task": "x",
                                              "model": {"baseUrl": base, "model": "fake"}}))
        status = wait_run_ended(daemon, run["runId"], 30)
        assert status["status"] == "failed"
        assert "3" in status["reason"]
        assert time.time() - started >= 1.0  # waited as Retry-After said
        assert fake.errors == [] and fake.remaining() == 0


def test_cancel_stops_a_run(daemon, model):
    fake = model
    fake.reset([{"delayMs": 3000, "reply": {"content": "slow"}}])
    base = fake.base_url
    if True:
        run = result(daemon.rpc("agent/run", {"workspaceId": "product-search", "task": "x",
                                              "model": {"baseUrl": base, "model": "fake"}}))
        time.sleep(0.3)
        result(daemon.rpc("agent/cancel", {"runId": run["runId"]}))
        status = wait_run_ended(daemon, run["runId"], 10)
        assert status["status"] == "cancelled"


def test_agent_run_needs_a_model(daemon):
    err = error(daemon.rpc("agent/run", {"workspaceId": "product-search", "task": "x"}))
    assert err["code"] == -32602 and "model" in err["message"]


def run_cli(*args, state_dir, stdin=None):
    return subprocess.run([hearth_bin(), *map(str, args), "--state-dir", str(state_dir)],
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_the_cli_works_a_workspace_without_a_daemon(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "ex")
    ws_dir = tmp_path / "ex" / "workspace"
    state = tmp_path / "state"
    services = ["--services", tmp_path / "ex"]
    r = run_cli("workspace", "render", ws_dir, *services, state_dir=state)
    assert r.returncode == 0, r.stderr
    assert "VIRTUAL WORKSPACE: product-search (v1)" in r.stdout  # v1: categories came in
    r = run_cli("workspace", "exec", ws_dir, *services, state_dir=state,
                stdin="search_box_state.search_pattern = 'coffee';")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["committed"] and "search_results" in out["changed"]
    r = run_cli("workspace", "exec", ws_dir, "filter_state.minPrice = -1;", *services, state_dir=state)
    assert r.returncode == 2 and "minimum" in r.stderr
    r = run_cli("workspace", "history", ws_dir, *services, state_dir=state)
    assert r.returncode == 0 and "committed" in r.stdout and "failed" in r.stdout
    r = run_cli("workspace", "revert", ws_dir, str(out["version"]), *services, state_dir=state)
    assert r.returncode == 0, r.stderr
    r = run_cli("workspace", "state", ws_dir, "search_box_state", *services, state_dir=state)
    assert json.loads(r.stdout) == {"search_pattern": ""}
    r = run_cli("workspace", "revert", ws_dir, str(out["version"] - 1), "--to", *services, state_dir=state)
    assert r.returncode == 0, r.stderr
    r = run_cli("workspace", "state", ws_dir, "search_box_state", *services, state_dir=state)
    assert json.loads(r.stdout) == {"search_pattern": ""}
    # Without the services its side effects call, the workspace is refused, saying why.
    r = run_cli("workspace", "render", ws_dir, state_dir=state)
    assert r.returncode != 0 and "--services" in r.stderr


def test_agent_run_from_the_cli(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "ex")
    steps = [
        {"expect": {"tools": TOOLS, "stream": True},
         "reply": {"tool_calls": [{"name": "execute_script",
                                   "arguments": {"script": "search_box_state.search_pattern = 'honey';"}}]}},
        {"expect": {"lastMessageContains": "Honey"},
         "reply": {"tool_calls": [{"name": "attempt_completion", "arguments": {"result": "honey found"}}]}},
    ]
    fake = FakeModel(steps, api_key="sk-test-123")
    base = fake.start()
    try:
        env = dict(os.environ, HEARTH_MODEL_KEY="sk-test-123")
        r = subprocess.run([hearth_bin(), "agent", "run", tmp_path / "ex" / "workspace", "Find honey",
                            "--model-url", base, "--model", "fake", "--stream",
                            "--services", tmp_path / "ex", "--state-dir", tmp_path / "state"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        outcome = json.loads(r.stdout.strip().splitlines()[-1])
        assert outcome["status"] == "completed" and outcome["result"] == "honey found"
        assert fake.errors == []
        transcript = Path(outcome["transcript"]).read_text()
        assert "sk-test-123" not in transcript
    finally:
        fake.stop()


def test_the_trip_planner_example_plans_over_the_registry(tmp_path):
    """examples/trip-planner: a trip change searches flights and hotels and fetches the forecast
    through LAVS endpoints backed by the registry examples (their local servers, their demo
    credentials in the vault); a script then picks the cheapest with the utilities."""
    from a2s_servers import RegistryExamples
    examples = RegistryExamples(ROOT, tmp_path, hearth_bin())
    d = None
    try:
        shutil.copytree(ROOT / "examples/trip-planner", tmp_path / "trip")
        manifest = tmp_path / "trip/service/lavs.json"
        manifest.write_text(examples.rewrite(manifest.read_text()))
        state, local, registry = examples.state_dir, examples.local_args, examples.registry
        d = Daemon([tmp_path / "trip/service"], copy=False, state_dir=state,
                   extra_args=["--registry", str(registry), *local,
                               "--workspace", str(tmp_path / "trip/workspace")])

        def call(method, params):
            return d.rpc(method, {"workspaceId": "trip-planner", **params})

        out = result(call("workspace/execute", {"script":
            "trip = {...trip, departDate: '2026-12-04', nights: 2, budget: 900};"}))
        assert set(out["changed"]) == {"trip", "flights", "hotels", "weather"}, out
        assert [e["status"] for e in out["effects"]] == ["ok", "ok", "ok"]
        out = result(call("workspace/execute", {"script": """
            const flight = cheapest(flights.flights, 'price_usd');
            const hotel = cheapest(hotels.hotels, 'rate_usd');
            itinerary = {flight, hotel, total: tripCost(flight, hotel, trip.nights),
                         notes: `weather: ${weather.summary}`};
            return itinerary.total;"""}))
        plan = result(call("workspace/state", {"name": "itinerary"}))["value"]
        assert plan["hotel"]["name"] == "Mission Street Hotel"
        assert plan["total"] == out["output"] == plan["flight"]["price_usd"] + 2 * 159
        # An unknown airport fails the flight search: nothing of the change is kept, and the error
        # carries the service's resolution for the model.
        err = error(call("workspace/execute", {"script": "trip.to = 'XXX';"}))
        assert err["code"] == -32003 and "searchFlights" in err["message"]
        assert result(call("workspace/state", {"name": "trip"}))["value"]["to"] == "SFO"
        assert "demo-" not in json.dumps(result(call("workspace/history", {})))
    finally:
        if d:
            d.stop()
            d.cleanup()
        examples.stop()


def test_revert_to_a_version_history_since_a_version_and_aliases(daemon):
    v0 = result(ws_call(daemon, "workspace/state", {}))["version"]
    result(ws_call(daemon, "workspace/execute", {"script": "search_box_state.search_pattern = 'tea';"}))
    out = result(ws_call(daemon, "workspace/execute", {"script": "filter_state.maxPrice = 3;"}))
    assert out["stats"]["effects"] == 1
    error(ws_call(daemon, "workspace/execute", {"script": "throw new Error('x')"}))
    since = result(ws_call(daemon, "workspace/history", {"sinceVersion": v0}))["entries"]
    assert [e["outcome"] for e in since] == ["committed", "committed", "failed"]
    back = result(ws_call(daemon, "workspace/revert", {"toVersion": v0}))
    assert back["committed"] is True
    state = result(ws_call(daemon, "workspace/state", {}))["states"]
    assert state["search_box_state"] == {"search_pattern": ""}
    assert state["filter_state"]["maxPrice"] is None
    err = error(ws_call(daemon, "workspace/revert", {}))
    assert err["code"] == -32602
    err = error(ws_call(daemon, "workspace/revert", {"version": 1, "toVersion": 0}))
    assert err["code"] == -32602
    # The spec's names: format tui, withGuide.
    tui = result(ws_call(daemon, "workspace/render", {"format": "tui", "withGuide": False}))["text"]
    assert "VIRTUAL WORKSPACE" in tui and "UTILITIES" not in tui


def test_a_workspace_opened_at_runtime(daemon, tmp_path):
    folder = tmp_path / "notes-ws"
    folder.mkdir()
    (folder / "workspace.yaml").write_text(
        "name: scratch\ncomponents:\n  - id: c\n    states:\n"
        "      note: {permission: rw, schema: {type: string, maxLength: 10}, initial: ''}\n")
    opened = result(daemon.rpc("workspace/open", {"path": str(folder)}))
    assert opened["workspaceId"] == "scratch"
    again = result(daemon.rpc("workspace/open", {"path": str(folder)}))
    assert again["workspaceId"] == "scratch"
    out = result(daemon.rpc("workspace/execute", {"workspaceId": "scratch", "script": "note = 'hi';"}))
    assert out["committed"] is True
    ids = sorted(w["workspaceId"] for w in result(daemon.rpc("workspace/list"))["workspaces"])
    assert ids == ["product-search", "scratch"]
    (folder / "workspace.yaml").write_text("name: Bad\n")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "workspace.yaml").write_text("name: bad\ncomponents: []\n")
    err = error(daemon.rpc("workspace/open", {"path": str(bad)}))
    assert err["code"] == -32602 and err["data"]["problems"][0]["path"] == "components"
    err = error(daemon.rpc("workspace/open", {"path": "relative/path"}))
    assert err["code"] == -32602


def test_the_model_key_comes_from_the_vault_and_its_reads_are_audited(daemon, model):
    def vault(*args, stdin=None):
        r = subprocess.run([hearth_bin(), "vault", *args, "--state-dir", str(daemon.state_dir)],
                           input=stdin, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    vault("set", "global", "MODEL_KEY", stdin="sk-vault-777")
    fake = model
    fake.reset([{"reply": {"tool_calls": [{"name": "attempt_completion",
                                          "arguments": {"result": "nothing to do"}}]}}],
               api_key="sk-vault-777")
    base = fake.base_url
    domain = base.split("/")[2]  # 127.0.0.1:PORT, as A2S domains are written
    run_params = {"workspaceId": "product-search", "task": "x", "model": {
        "baseUrl": base, "model": "fake", "apiKeyRef": "global::MODEL_KEY"}}
    # A global variable goes only where a trust grant sends it.
    err = error(daemon.rpc("agent/run", run_params))
    assert err["code"] == -32001 and f"hearth vault trust {domain} MODEL_KEY" in err["message"]
    assert fake.requests == []
    vault("trust", domain, "MODEL_KEY", "NOPE")
    run = result(daemon.rpc("agent/run", run_params))
    assert wait_run_ended(daemon, run["runId"], 30)["status"] == "completed"
    assert fake.errors == []
    err = error(daemon.rpc("agent/run", {"workspaceId": "product-search", "task": "x", "model": {
        "baseUrl": base, "model": "fake", "apiKeyRef": "global::NOPE"}}))
    assert "no global::NOPE" in err["message"]
    audit = Path(daemon.ready["auditLog"]).read_text()
    assert "agent/modelKey" in audit and "sk-vault-777" not in audit
    assert "sk-vault-777" not in Path(run["transcript"]).read_text()
