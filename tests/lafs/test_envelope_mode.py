"""LAFS envelope mode end to end: the real daemon answers every method, results and errors alike,
with envelopes (asked per request with params._lafs, or per HTTP body with `Prefer: lafs-envelope`),
each checked by `hearth lafs check --tier standard`; `hearth call --lafs`; RFC 9457 problem details."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("HEARTH_SOURCE_DIR", HERE.parents[1]))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from hearthtest import Daemon, hearth_bin  # noqa: E402

SERVICE = HERE / "services" / "envelope"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


@pytest.fixture(scope="module")
def daemon():
    d = Daemon([SERVICE])
    yield d
    try:
        d.stop()
    finally:
        d.cleanup()


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Collects every envelope the tests receive; at the end all of them go through the runner."""
    envelopes = []
    yield envelopes
    assert envelopes, "no envelope was collected"
    folder = tmp_path_factory.mktemp("envelopes")
    files = []
    for i, env in enumerate(envelopes):
        f = folder / f"envelope-{i}.json"
        f.write_text(json.dumps(env))
        files.append(str(f))
    r = subprocess.run([hearth_bin(), "lafs", "check", "--tier", "standard", "--json", *files],
                       capture_output=True, text=True, timeout=120)
    report = json.loads(r.stdout)
    failed = [(f["file"], [c for c in f["checks"] if not c["pass"]]) for f in report["files"] if not f["ok"]]
    assert r.returncode == 0 and not failed, failed


def envelope_of(response, checked, operation=None, success=None):
    """The envelope inside a JSON-RPC response, with _meta checked and the envelope kept for the runner."""
    assert "error" not in response, response
    env = response["result"]
    meta = env["_meta"]
    assert env["$schema"] == "https://lafs.dev/schemas/v1/envelope.schema.json"
    assert meta["specVersion"] == "1.0.0" and meta["schemaVersion"] == "1.0.0"
    assert RFC3339.match(meta["timestamp"]), meta
    assert meta["strict"] is True and meta["contextVersion"] == 0
    if response.get("id") is not None:
        assert meta["requestId"] == f"rpc-{response['id']}"
    if operation is not None:
        assert meta["operation"] == operation
    if success is not None:
        assert env["success"] is success, env
    checked.append(env)
    return env


def lafs_call(daemon, endpoint, input=None, id=1, **extra):
    params = {"endpoint": endpoint, "_lafs": True, **extra}
    if input is not None:
        params["input"] = input
    return daemon.rpc("lavs/call", params, id=id)


def test_success_results(daemon, checked):
    env = envelope_of(lafs_call(daemon, "echo", {"text": "hi"}, id=11), checked, "envelope.echo", True)
    assert env["result"] == {"text": "hi"}
    assert env["_meta"]["transport"] == "http" and env["_meta"]["mvi"] == "standard"
    assert "error" not in env and "page" not in env  # strict: omitted, not null
    text = envelope_of(lafs_call(daemon, "text", id="abc"), checked, "envelope.text", True)
    assert text["result"] == {"value": "plain words\n"}
    assert text["_meta"]["requestId"] == "rpc-abc"


def test_without_the_parameter_nothing_changes(daemon):
    r = daemon.rpc("lavs/call", {"endpoint": "echo", "input": {"text": "hi"}})
    assert r["result"] == {"text": "hi"}


@pytest.mark.parametrize("endpoint,input,code,jsonrpc", [
    ("echo", {}, "E_VALIDATION_SCHEMA", -32602),
    ("nope", None, "E_NOT_FOUND_RESOURCE", -32601),
    ("fail", None, "E_INTERNAL_UNEXPECTED", -32003),
    ("slow", None, "E_TRANSIENT_UPSTREAM", -32002),
    ("badOutput", None, "E_INTERNAL_UNEXPECTED", -32603),
    ("ticks", None, "E_VALIDATION_SCHEMA", -32602),  # a subscription endpoint is not callable
])
def test_call_errors(daemon, checked, endpoint, input, code, jsonrpc):
    env = envelope_of(lafs_call(daemon, endpoint, input), checked, f"envelope.{endpoint}", False)
    assert env["result"] is None
    err = env["error"]
    assert err["code"] == code and err["details"]["jsonrpcCode"] == jsonrpc
    assert err["agentAction"] and err["category"] and err["message"]


def test_other_methods(daemon, checked):
    services = envelope_of(daemon.rpc("lavs/services", {"_lafs": True}), checked, "lavs/services", True)
    assert services["result"]["services"][0]["name"] == "envelope"
    manifest = envelope_of(daemon.rpc("lavs/manifest", {"_lafs": True}), checked, "lavs/manifest", True)
    assert manifest["result"]["name"] == "envelope"
    read = envelope_of(daemon.rpc("lavs/readFile", {"path": "data/hello.txt", "_lafs": True}), checked,
                       "lavs/readFile", True)
    assert read["result"]["content"] == "hello from data\n"
    denied = envelope_of(daemon.rpc("lavs/readFile", {"path": "secret.txt", "_lafs": True}), checked,
                         "lavs/readFile", False)
    assert denied["error"]["code"] == "E_NOT_FOUND_RESOURCE" and denied["error"]["details"]["jsonrpcCode"] == -32001
    over_http = envelope_of(daemon.rpc("lavs/subscribe", {"endpoint": "ticks", "_lafs": True}), checked,
                            "envelope.ticks", False)
    assert over_http["error"]["details"]["jsonrpcCode"] == -32601
    unsub = envelope_of(daemon.rpc("lavs/unsubscribe", {"subscriptionId": "sub-x", "_lafs": True}), checked,
                        "lavs/unsubscribe", False)
    assert unsub["error"]["code"] == "E_VALIDATION_SCHEMA"
    unknown = envelope_of(daemon.rpc("lavs/nothing", {"_lafs": True}), checked, "lavs/nothing", False)
    assert unknown["error"]["code"] == "E_NOT_FOUND_RESOURCE"


def test_disclosure_parameters(daemon, checked):
    fields = envelope_of(lafs_call(daemon, "list", _fields=["id"]), checked, "envelope.list", True)
    assert fields["result"]["items"][0] == {"id": 1} and len(fields["result"]["items"]) == 30
    assert fields["_meta"]["mvi"] == "custom"
    level = envelope_of(lafs_call(daemon, "list", _mvi="minimal"), checked, "envelope.list", True)
    assert level["_meta"]["mvi"] == "minimal"
    budget = envelope_of(lafs_call(daemon, "list", _budget={"maxTokens": 200}), checked, "envelope.list", True)
    assert 0 < len(budget["result"]["items"]) < 30
    assert budget["_meta"]["warnings"][0]["code"] == "E_MVI_BUDGET_TRUNCATED"
    assert budget["_extensions"]["x-lafs-token-estimate"]["estimated"] <= 200
    over = envelope_of(lafs_call(daemon, "list", _budget={"maxBytes": 50}), checked, "envelope.list", False)
    assert over["error"]["code"] == "E_MVI_BUDGET_EXCEEDED" and over["error"]["details"]["constraint"] == "maxBytes"
    expand = envelope_of(lafs_call(daemon, "list", _expand=["owner"]), checked, "envelope.list", False)
    assert expand["error"]["code"] == "E_DISCLOSURE_UNKNOWN_FIELD"
    # A malformed parameter fails before the handler runs.
    bad = envelope_of(lafs_call(daemon, "fail", _fields="id"), checked, "envelope.fail", False)
    assert bad["error"]["code"] == "E_VALIDATION_SCHEMA" and bad["error"]["details"]["field"] == "_fields"


def test_prefer_header_covers_the_whole_body(daemon, checked):
    with daemon.http() as c:
        headers = {"Prefer": "respond-async, lafs-envelope"}
        status, h, body = c.post({"jsonrpc": "2.0", "id": 5, "method": "lavs/call",
                                  "params": {"endpoint": "echo", "input": {"text": "x"}}}, headers)
        assert status == 200 and h.get("Preference-Applied") == "lafs-envelope"
        envelope_of(json.loads(body), checked, "envelope.echo", True)
        # Errors that happen before a request is read are envelopes too.
        status, _, body = c.post("{not json", headers)
        parse = envelope_of(json.loads(body), checked, "hearth.rpc", False)
        assert parse["error"]["details"]["jsonrpcCode"] == -32700 and parse["_meta"]["requestId"].startswith("req_")
        status, _, body = c.post({"jsonrpc": "1.0", "id": 6, "method": "x"}, headers)
        envelope_of(json.loads(body), checked, "hearth.rpc", False)
        status, _, body = c.post([], headers)
        envelope_of(json.loads(body), checked, "hearth.rpc", False)
        batch = [{"jsonrpc": "2.0", "id": 7, "method": "lavs/services"},
                 {"jsonrpc": "2.0", "id": 8, "method": "lavs/call", "params": {"endpoint": "fail"}},
                 {"jsonrpc": "2.0", "method": "lavs/services"}]  # a notification: no answer
        status, _, body = c.post(batch, headers)
        answers = json.loads(body)
        assert [a["id"] for a in answers] == [7, 8]
        envelope_of(answers[0], checked, "lavs/services", True)
        envelope_of(answers[1], checked, "envelope.fail", False)
        # Without the header, the same connection answers plain JSON-RPC.
        status, h, body = c.post({"jsonrpc": "2.0", "id": 9, "method": "lavs/services"})
        assert "Preference-Applied" not in h and "services" in json.loads(body)["result"]


def test_websocket(daemon, checked):
    with daemon.ws() as ws:
        sub = envelope_of(ws.request("lavs/subscribe", {"endpoint": "ticks", "_lafs": True}, id=21), checked,
                          "envelope.ticks", True)
        assert sub["_meta"]["transport"] == "sdk" and sub["_meta"]["sessionId"].startswith("ws-")
        sid = sub["result"]["subscriptionId"]
        item = ws.notification("lavs/data")  # pushes stay plain notifications
        assert item["params"]["data"] == {"n": 1}
        done = envelope_of(ws.request("lavs/unsubscribe", {"subscriptionId": sid, "_lafs": True}, id=22), checked,
                           "lavs/unsubscribe", True)
        assert done["result"]["unsubscribed"] is True
        err = envelope_of(ws.request("lavs/call", {"endpoint": "echo", "input": {}, "_lafs": True}, id=23), checked,
                          "envelope.echo", False)
        assert err["error"]["code"] == "E_VALIDATION_SCHEMA"


def test_problem_details_on_http_errors(daemon):
    with daemon.http() as c:
        status, h, body = c.post({"jsonrpc": "2.0", "id": 1, "method": "lavs/services"},
                                 {"Accept": "application/problem+json"}, token=False)
        assert status == 401 and h["Content-Type"] == "application/problem+json"
        pd = json.loads(body)
        assert pd["status"] == 401 and pd["title"] == "Unauthorized" and pd["type"] == "about:blank" and pd["detail"]
        status, h, body = c.post({}, token=False)
        assert status == 401 and h["Content-Type"] == "application/json"  # not asked: as before


def cli_call(*args):
    return subprocess.run([hearth_bin(), "call", str(SERVICE), *args, "--lafs"], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("args,code,exit_code", [
    (["echo", '{"text":"a"}'], None, 0),
    (["echo", "{}"], "E_VALIDATION_SCHEMA", 2),
    (["echo", "{broken"], "E_VALIDATION_SCHEMA", 2),
    (["nope"], "E_NOT_FOUND_RESOURCE", 4),
    (["fail"], "E_INTERNAL_UNEXPECTED", 1),
    (["slow"], "E_TRANSIENT_UPSTREAM", 9),
])
def test_hearth_call_lafs(checked, tmp_path, args, code, exit_code):
    r = cli_call(*args, "--state-dir", str(tmp_path))
    assert r.returncode == exit_code, r.stdout + r.stderr
    env = json.loads(r.stdout)
    checked.append(env)
    assert env["_meta"]["transport"] == "cli"
    if code is None:
        assert env["success"] is True and env["_meta"]["operation"] == "envelope.echo"
    else:
        assert env["error"]["code"] == code
