"""The agent paths keep the vault's and the workspace's promises (docs/security.md, "Model servers
and their keys", "What a workspace shows", "What a remote party can make the daemon hold"):

- a model key goes only to the server it is bound to: the daemon's configured key to its own
  server, a key a run names only where the vault's scope or a trust grant sends it;
- a model server a run names itself gets no key, must be https and may not be this machine or a
  private network;
- a private or write-only state's value leaves the workspace nowhere: not in workspace/execute's
  answer, not in the agent's tool results, not in the views' agent actions, not in the history;
- a model's answer has a size limit, and a long run's requests and transcript stay bounded.
"""
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hearthtest import Daemon, error, hearth_bin, result, sanitized, wait_for, wait_run_ended

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "workspace-search"
sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from server import FakeModel  # noqa: E402

COMPLETE = {"reply": {"tool_calls": [{"name": "attempt_completion",
                                      "arguments": {"result": "done"}}]}}


def vault(state_dir, *args, stdin=None):
    r = subprocess.run([hearth_bin(), "vault", *args, "--state-dir", str(state_dir)],
                       input=stdin, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr




class Listener:
    """A TCP port that counts the connections made to it (and answers none)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self):
        self.sock.close()


@pytest.fixture
def world(tmp_path):
    """Two model servers configured on the daemon ("default" with the daemon's key, "other"
    without one) and the secrets an attacker would want: the daemon's key, a registry service's
    key, a global variable no domain was trusted with, and the other server's own key."""
    a, b = FakeModel([]), FakeModel([])
    a.start()
    b.start()
    state = tmp_path / "state"
    b_domain = b.base_url.split("/")[2]
    vault(state, "set", "global", "DAEMON_KEY", stdin="sk-daemon-111")
    vault(state, "set", "api.example.com", "API_KEY", stdin="sk-registry-222")
    vault(state, "set", "global", "LOOSE", stdin="sk-loose-333")
    vault(state, "set", b_domain, "B_KEY", stdin="sk-other-444")
    ws_dir = tmp_path / "workspace-search"
    shutil.copytree(EXAMPLE, ws_dir)
    d = Daemon([ws_dir], copy=False, state_dir=state,
               extra_args=["--workspace", str(ws_dir / "workspace"),
                           "--model-url", a.base_url, "--model", "fake",
                           "--model-key", "global::DAEMON_KEY",
                           "--model-server", f"other={b.base_url}"])
    yield d, a, b, b_domain
    d.stop()
    d.cleanup()
    a.stop()
    b.stop()


def run(d, model=None, task="x", **extra):
    params = {"workspaceId": "product-search", "task": task, **extra}
    if model is not None:
        params["model"] = model
    return d.rpc("agent/run", params)


def test_each_model_key_goes_only_to_its_own_server(world):
    d, a, b, b_domain = world
    # The configured server gets its configured key.
    a.reset([COMPLETE])
    r = result(run(d))
    assert r["server"] == "default"
    assert wait_run_ended(d, r["runId"])["status"] == "completed"
    assert a.auth == ["Bearer sk-daemon-111"]

    # Another configured server, by name or by URL: the daemon's key stays home.
    for choice in ({"server": "other"}, {"baseUrl": b.base_url}, {"baseUrl": b.base_url + "/"}):
        b.reset([COMPLETE])
        r = result(run(d, choice))
        assert wait_run_ended(d, r["runId"])["status"] == "completed"
        assert b.auth == [None], choice

    # A key the run names: a registry service's key and an untrusted global are refused before
    # anything is sent; the server's own domain key goes.
    b.reset([])
    a_requests = len(a.requests)
    for ref, says in (("api.example.com::API_KEY", "it is not sent to " + b_domain),
                      ("global::LOOSE", f"hearth vault trust {b_domain} LOOSE"),
                      ("global::DAEMON_KEY", f"hearth vault trust {b_domain} DAEMON_KEY")):
        err = error(run(d, {"server": "other", "apiKeyRef": ref}))
        assert err["code"] == -32001, err
        assert says in err["message"], err["message"]
    # Nor may the default server take another server's key.
    err = error(run(d, {"apiKeyRef": f"{b_domain}::B_KEY"}))
    assert err["code"] == -32001
    assert b.requests == [] and len(a.requests) == a_requests
    b.reset([COMPLETE])
    r = result(run(d, {"server": "other", "apiKeyRef": f"{b_domain}::B_KEY"}))
    assert wait_run_ended(d, r["runId"])["status"] == "completed"
    assert b.auth == ["Bearer sk-other-444"]
    # A trust grant is the operator's way to send a global one.
    vault(d.state_dir, "trust", b_domain, "LOOSE")
    b.reset([COMPLETE])
    r = result(run(d, {"server": "other", "apiKeyRef": "global::LOOSE"}))
    assert wait_run_ended(d, r["runId"])["status"] == "completed"
    assert b.auth == ["Bearer sk-loose-333"]
    # No secret value reached the audit log or a transcript.
    audit = Path(d.ready["auditLog"]).read_text()
    assert "agent/modelKey" in audit
    for secret in ("sk-daemon-111", "sk-registry-222", "sk-loose-333", "sk-other-444"):
        assert secret not in audit
        for t in (d.state_dir / "agent").glob("*.jsonl"):
            assert secret not in t.read_text()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_a_server_a_run_names_cannot_be_this_machine(world, host):
    d, a, b, _ = world
    listener = Listener()
    try:
        url = f"{host}:{listener.port}/v1"
        # Plain http: it would have to be configured.
        err = error(run(d, {"baseUrl": f"http://{url}", "model": "m"}))
        assert err["code"] == -32602 and "configured" in err["message"]
        # https to this machine: refused once the name is resolved, before connecting.
        r = result(run(d, {"baseUrl": f"https://{url}", "model": "m"}))
        status = wait_run_ended(d, r["runId"])
        assert status["status"] == "failed"
        assert "must be configured on the daemon" in status["reason"], status
        assert listener.accepted == 0
        # The daemon's key was not even read for it.
        assert a.requests == [] and b.requests == []
    finally:
        listener.close()


@pytest.mark.parametrize("address", ["10.0.0.1", "192.168.1.1", "172.16.5.4", "169.254.169.254",
                                     "100.64.0.1", "[fd00::1]"])
def test_a_server_a_run_names_cannot_be_a_private_network(world, address):
    d, _, _, _ = world
    r = result(run(d, {"baseUrl": f"https://{address}/v1", "model": "m"}))
    status = wait_run_ended(d, r["runId"])
    assert status["status"] == "failed"
    assert "private network" in status["reason"], status


def test_an_endless_answer_is_cut_at_its_limit(world):
    d, a, _, _ = world
    pid = d.proc.pid
    for stream in (True, False):
        a.reset([{"flood": {"bytes": 512 << 20}}])
        r = result(run(d, {"stream": stream}))
        status = wait_run_ended(d, r["runId"], 120)
        assert status["status"] == "failed"
        assert "passed the limit" in status["reason"], status
        # It was stopped long before the end (the limit is 8 MiB; socket buffers add a few). The
        # fake server notes what it sent when its next write fails, which may come after the run
        # has ended.
        wait_for(lambda: len(a.flooded) == 1)
        assert len(a.flooded) == 1 and a.flooded[0] < (64 << 20), a.flooded
        assert len(a.requests) == 1  # not retried
    peak_kb = int(next(l for l in Path(f"/proc/{pid}/status").read_text().splitlines()
                       if l.startswith("VmHWM:")).split()[1])
    # Without the limit the daemon grew by over 2 GiB for this answer; under AddressSanitizer
    # its shadow and quarantine of freed blocks come on top.
    bound_kb = (400 + (512 if sanitized(pid) else 0)) * 1024
    assert peak_kb < bound_kb, f"the daemon peaked at {peak_kb} kB"


def test_a_long_run_keeps_its_requests_and_transcript_bounded(tmp_path):
    fake = FakeModel([])
    fake.start()
    ws_dir = tmp_path / "workspace-search"
    shutil.copytree(EXAMPLE, ws_dir)
    turns = 30
    steps = []
    for i in range(turns):
        # Each reply a megabyte of text besides its (valid) script, as a runaway model writes.
        steps.append({"reply": {"content": "y" * (1 << 20), "tool_calls": [
            {"name": "execute_script", "arguments": {"script": f"filter_state.maxPrice = {i + 1};"}}]}})
    steps.append(COMPLETE)
    fake.reset(steps)
    with Daemon([ws_dir], copy=False,
                extra_args=["--workspace", str(ws_dir / "workspace"), "--model-url", fake.base_url,
                            "--model", "fake", "--model-context-chars", "20000"]) as d:
        r = result(run(d, maxTurns=turns + 5))
        status = wait_run_ended(d, r["runId"], 180)
        assert status["status"] == "completed", status
        assert fake.errors == []
        # Every request stayed near the budget (the tool definitions and JSON escaping on top).
        assert max(fake.raw_sizes) < 40000, fake.raw_sizes
        late = json.dumps(fake.requests[-1]["messages"])
        assert "elided" in late
        # The latest exchange is whole: the last tool result shows the newest state.
        assert "maxPrice" in fake.requests[-1]["messages"][-1]["content"]
        transcript = Path(r["transcript"])
        assert transcript.stat().st_size < 16 << 20
        lines = transcript.read_text().splitlines()
        assert json.loads(lines[-1])["type"] == "task.completed"
    fake.stop()


# -- what a workspace shows --------------------------------------------------------------------

MAILER_VIEW = ("customElements.define('mail-view', class extends HTMLElement {"
               " setLAVSClient(c) { this.c = c; } });")


def mailer(tmp_path):
    """A service whose `send` mutation echoes its input (as many services do), with a view, and a
    workspace whose side effect takes a write-only and a private state and assigns its result to
    a private one."""
    svc = tmp_path / "mailer"
    svc.mkdir()
    (svc / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "mailer", "version": "1.0.0",
        "view": {"component": {"type": "inline", "code": MAILER_VIEW}},
        "endpoints": [
            {"id": "send", "method": "mutation",
             "handler": {"type": "script", "command": "cat", "input": "stdin"}},
            {"id": "refuse", "method": "mutation",
             "handler": {"type": "script", "command": "sh",
                         "args": ["-c", "cat >&2; exit 3"], "input": "stdin"}}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "workspace.yaml").write_text("""
name: mail
components:
  - id: mail
    states:
      draft:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: sends the draft with the account's signature and password
          calls:
            - service: mailer
              endpoint: send
              input: {to: {$value: /to}, signature: {$state: signature}, password: {$state: password}}
              assign: receipt
      bad_draft:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: a send that fails
          calls:
            - service: mailer
              endpoint: refuse
              input: {to: {$value: /to}, signature: {$state: signature}}
      password:
        permission: w
        schema: {type: string}
        initial: "pw-INITIAL-555"
      signature:
        visibility: private
        schema: {type: string}
        initial: "SIG-PRIVATE-666"
      receipt:
        visibility: private
        schema: {type: object}
        initial: {}
""")
    return svc, ws


SECRETS = ("SIG-PRIVATE-666", "pw-WRITTEN-777", "pw-INITIAL-555", "receipt")


def assert_clean(what, value):
    text = json.dumps(value)
    for s in SECRETS:
        assert s not in text, f"{s} leaked through {what}: {text[:600]}"


def test_private_and_write_only_values_leave_the_workspace_nowhere(tmp_path):
    svc, ws = mailer(tmp_path)
    fake = FakeModel([])
    fake.start()
    with Daemon([svc], copy=False, extra_args=["--workspace", str(ws), "--model-url",
                                               fake.base_url, "--model", "fake"]) as d:
        with d.ws() as page:
            result(page.request("view/open", {"service": "mailer"}))
            # workspace/execute: the answer, and the view's agent action.
            out = result(d.rpc("workspace/execute", {
                "workspaceId": "mail",
                "script": "password = 'pw-WRITTEN-777'; draft = {to: 'ann@example.com'};"}))
            assert out["committed"] is True
            assert_clean("workspace/execute", out)
            assert out["effects"][0]["input"]["to"] == "ann@example.com"
            action = page.notification("view/agentAction")["params"]
            assert action["endpoint"] == "send" and action["withheld"] is True
            assert_clean("view/agentAction", action)
            # A failing call does not echo its input either.
            err = error(d.rpc("workspace/execute", {"workspaceId": "mail",
                                                    "script": "bad_draft = {to: 'bob@example.com'};"}))
            assert_clean("a failed side effect", err)
            # The agent loop: what the model reads.
            fake.reset([
                {"reply": {"tool_calls": [{"name": "execute_script", "arguments": {
                    "script": "password = 'pw-WRITTEN-777'; draft = {to: 'cy@example.com'};"}}]}},
                COMPLETE])
            r = result(d.rpc("agent/run", {"workspaceId": "mail", "task": "send it"}))
            assert wait_run_ended(d, r["runId"])["status"] == "completed"
            assert fake.errors == []
            tool_results = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
            assert tool_results
            # The model's own script is in its history (it wrote the value); nothing else is.
            for m in tool_results:
                assert_clean("execute_script's tool result", m["content"])
            assert_clean("the transcript's tool results",
                         [json.loads(l) for l in Path(r["transcript"]).read_text().splitlines()
                          if json.loads(l)["type"] in ("tool.result", "tool.failed")])
            action = page.notification("view/agentAction")["params"]
            assert_clean("view/agentAction of the run", action)
        # The history served to clients.
        history = result(d.rpc("workspace/history", {"workspaceId": "mail", "limit": 50}))
        for e in history["entries"]:
            e.pop("script", None)  # the caller's own script
            assert_clean("workspace/history", e)
        # ...and the operator's record on disk keeps what a revert needs.
        assert result(d.rpc("workspace/revert", {"workspaceId": "mail", "version": 1}))["committed"]
    fake.stop()
