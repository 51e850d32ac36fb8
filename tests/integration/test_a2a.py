"""hearth as an A2A agent over raw HTTP, against the real binary: A2A 1.0 (JSON-RPC and HTTP+JSON
bindings) beside A2A 0.3 (JSON-RPC), one card URL for both, the card without the token and every
other A2A route behind it. The official JS SDK's view of the same is tests/a2a_clients."""
import json
import re
import time
import uuid
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, Daemon, raw_http, wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "services" / "mcp"
CARD = "/.well-known/agent-card.json"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


@pytest.fixture(scope="module")
def daemon():
    # Two services: skill ids are qualified ("mcp-fixture.add").
    with Daemon([FIXTURE, EXAMPLES / "todo-manager-js"]) as d:
        yield d


def request(d, method, path, body=None, version=None, token=True, headers=None):
    h = {"Host": f"127.0.0.1:{d.port}"}
    if body is not None:
        h["Content-Type"] = "application/json"
        if not isinstance(body, (str, bytes)):
            body = json.dumps(body)
    if token:
        h["Authorization"] = f"Bearer {d.token}"
    if version is not None:
        h["A2A-Version"] = version
    h.update(headers or {})
    with d.http() as c:
        return c.request(method, path, body=body, headers=h)


def rpc(d, method, params=None, version=None, id=1):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    status, headers, body = request(d, "POST", "/a2a", msg, version)
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


def v1(d, method, params=None, id=1):
    return rpc(d, method, params, "1.0", id)


def rest(d, method, path, body=None, version="1.0", token=True):
    status, headers, raw = request(d, method, "/a2a" + path, body, version, token)
    return status, headers, (json.loads(raw) if raw and headers.get("Content-Type", "").startswith("application/") else raw)


def sse_events(raw):
    out = []
    for block in raw.decode().split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if data and data[0]:
            out.append(json.loads("\n".join(data)))
    return out


def message10(skill, data, **extra):
    m = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": data}]}
    if skill:
        m["metadata"] = {"skillId": skill}
    m.update(extra)
    return m


def message03(skill, data, **extra):
    m = {"kind": "message", "role": "user", "messageId": str(uuid.uuid4()),
         "parts": [{"kind": "data", "data": data}]}
    if skill:
        m["metadata"] = {"skillId": skill}
    m.update(extra)
    return m


def error_info(error):
    """The google.rpc.ErrorInfo of a 1.0 error (JSON-RPC `data` or HTTP+JSON `details`)."""
    details = error.get("data", error.get("details"))
    assert isinstance(details, list) and all("@type" in x for x in details), error
    infos = [x for x in details if x["@type"] == ERROR_INFO]
    assert infos, error
    assert infos[0]["domain"] == "a2a-protocol.org"
    return infos[0]


def walk(value):
    """Every object inside a JSON value."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v)


def audit_lines(d, endpoint):
    path = Path(d.ready["auditLog"])
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text().splitlines()
            if l.strip() and json.loads(l).get("endpoint") == endpoint]


# -- the card ------------------------------------------------------------------------------------

def test_the_card_is_served_without_the_token_in_the_shape_the_version_asks_for(daemon):
    base = f"http://127.0.0.1:{daemon.port}/a2a"
    interfaces = [{"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                  {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                  {"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]

    status, headers, body = request(daemon, "GET", CARD, token=False, version="1.0")
    assert status == 200, body
    assert "A2A-Version" in headers["Vary"] and headers["Cache-Control"] == "no-cache" and headers["ETag"]
    card = json.loads(body)
    for key in ("name", "description", "supportedInterfaces", "version", "capabilities",
                "defaultInputModes", "defaultOutputModes", "skills"):
        assert key in card, key
    for key in ("protocolVersion", "url", "preferredTransport", "security"):
        assert key not in card, key  # 0.3 fields: the version lives on each interface
    assert card["supportedInterfaces"] == interfaces
    assert card["capabilities"] == {"streaming": True, "pushNotifications": False, "extendedAgentCard": False}
    scheme = card["securitySchemes"]["bearer"]
    assert list(scheme) == ["httpAuthSecurityScheme"] and scheme["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    skills = {s["id"]: s for s in card["skills"]}
    add = skills["mcp-fixture.add"]
    assert add["tags"] == ["mcp-fixture", "mutation"] and "metadata.skillId" in add["description"]
    assert skills["mcp-fixture.echo"]["tags"] == ["mcp-fixture", "query"]

    # No A2A-Version: the 0.3 card, with the 1.0 interfaces embedded for a 1.0 client that sent none.
    status, headers03, body = request(daemon, "GET", CARD, token=False)
    assert status == 200
    assert "A2A-Version" in headers03["Vary"] and headers03["ETag"] != headers["ETag"]
    old = json.loads(body)
    assert old["protocolVersion"] == "0.3.0" and old["url"] == base and old["preferredTransport"] == "JSONRPC"
    assert old["additionalInterfaces"] == [{"url": base, "transport": "JSONRPC"}]
    assert old["securitySchemes"]["bearer"]["type"] == "http" and old["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert old["security"] == [{"bearer": []}]
    assert old["supportedInterfaces"] == interfaces
    assert old["capabilities"]["streaming"] is True and old["skills"] == card["skills"]

    # The version as a request parameter (spec 3.6.1), 0.3 asked for by name, a patch ignored.
    assert json.loads(request(daemon, "GET", CARD + "?A2A-Version=1.0", token=False)[2]) == card
    assert json.loads(request(daemon, "GET", CARD, token=False, version="0.3")[2]) == old
    assert json.loads(request(daemon, "GET", CARD, token=False, version="1.0.1")[2]) == card
    # With the token it is the same card.
    assert json.loads(request(daemon, "GET", CARD, version="1.0")[2]) == card


def test_the_card_keeps_the_host_and_origin_checks(daemon):
    for headers in ({"Host": "evil.example"}, {"Host": f"evil.example:{daemon.port}"},
                    {"Origin": "http://evil.example"}, {"Origin": "null"}):
        status, _, body = request(daemon, "GET", CARD, token=False, headers=headers)
        assert status == 403, (headers, body)
    # DNS rebinding: a raw request naming another host, with or without the token.
    status, _ = raw_http(daemon.port, b"GET " + CARD.encode() + b" HTTP/1.1\r\nHost: attacker.test\r\n\r\n")
    assert status == 403
    status, _, _ = request(daemon, "GET", CARD, token=False, headers={"Origin": f"http://localhost:{daemon.port}"})
    assert status == 200


def test_every_other_a2a_route_needs_the_token(daemon):
    runs = len(audit_lines(daemon, "add"))
    send10 = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
              "params": {"message": message10("mcp-fixture.add", {"a": 1, "b": 2})}}
    send03 = {"jsonrpc": "2.0", "id": 1, "method": "message/send",
              "params": {"message": message03("mcp-fixture.add", {"a": 1, "b": 2})}}
    for method, path, body, version in (("POST", "/a2a", send10, "1.0"), ("POST", "/a2a", send03, None),
                                        ("POST", "/a2a/message:send", send10["params"], "1.0"),
                                        ("POST", "/a2a/message:stream", send10["params"], "1.0"),
                                        ("GET", "/a2a/tasks", None, "1.0"), ("GET", "/a2a/tasks/x", None, "1.0"),
                                        ("POST", "/a2a/tasks/x:cancel", None, "1.0"),
                                        ("POST", "/a2a/tasks/x:subscribe", None, "1.0"),
                                        ("GET", "/a2a/nothing", None, None)):
        status, _, _ = request(daemon, method, path, body, version, token=False)
        assert status == 401, (method, path)
        status, _, _ = request(daemon, method, path, body, version, token=False,
                               headers={"Authorization": "Bearer " + "0" * 64})
        assert status == 401, (method, path)
    assert len(audit_lines(daemon, "add")) == runs  # nothing ran


# -- A2A 1.0, JSON-RPC ---------------------------------------------------------------------------

def test_v10_send_message_answers_a_task_wrapper_in_1_0_shapes(daemon):
    out = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", {"a": 20, "b": 22})})
    task = out["result"]["task"]
    assert set(out["result"]) == {"task"}
    assert not [o for o in walk(task) if "kind" in o]  # 1.0 objects carry no `kind`
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and ISO.match(task["status"]["timestamp"])
    assert task["artifacts"][0]["parts"] == [{"data": {"sum": 42}}]
    assert [m["role"] for m in task["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    assert task["history"][0]["parts"] == [{"data": {"a": 20, "b": 22}}]
    assert task["history"][0]["taskId"] == task["id"] and task["history"][0]["contextId"] == task["contextId"]
    assert task["status"]["message"]["parts"] == [{"text": "mcp-fixture.add completed"}]

    got = v1(daemon, "GetTask", {"id": task["id"], "historyLength": 1})["result"]
    assert got["id"] == task["id"] and len(got["history"]) == 1 and got["history"][0]["role"] == "ROLE_AGENT"
    assert "history" not in v1(daemon, "GetTask", {"id": task["id"], "historyLength": 0})["result"]
    assert "history" not in v1(daemon, "SendMessage", {
        "message": message10("mcp-fixture.add", {"a": 1, "b": 1}),
        "configuration": {"historyLength": 0}})["result"]["task"]

    # The skill in a data part; text parts are not read; a failing call is a failed task.
    failed = v1(daemon, "SendMessage", {"message": message10(None, {"skill": "mcp-fixture.add", "input": {"a": "x"}},
                                                             parts=[{"text": "please add"},
                                                                    {"data": {"skill": "mcp-fixture.add", "input": {"a": "x"}}}])})
    status = failed["result"]["task"]["status"]
    assert status["state"] == "TASK_STATE_FAILED" and status["message"]["role"] == "ROLE_AGENT"
    assert status["message"]["parts"][1]["data"]["code"] == -32602

    # A context given by the client is kept.
    ctx = "ctx-" + str(uuid.uuid4())
    kept = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", {"a": 1, "b": 1}, contextId=ctx)})
    assert kept["result"]["task"]["contextId"] == ctx


def test_v10_errors_carry_typed_details(daemon):
    nf = v1(daemon, "GetTask", {"id": "nope"})["error"]
    assert nf["code"] == -32001
    info = error_info(nf)
    assert info["reason"] == "TASK_NOT_FOUND" and info["metadata"] == {"taskId": "nope"}

    done = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", {"a": 1, "b": 2})})["result"]["task"]
    nc = v1(daemon, "CancelTask", {"id": done["id"]})["error"]
    assert nc["code"] == -32002 and error_info(nc)["reason"] == "TASK_NOT_CANCELABLE"
    # A task is one call: a message continuing one is refused; one naming an unknown task too.
    cont = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", {"a": 1, "b": 2}, taskId=done["id"])})
    assert cont["error"]["code"] == -32004 and error_info(cont["error"])["reason"] == "UNSUPPORTED_OPERATION"
    unknown = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", {}, taskId="nope")})
    assert unknown["error"]["code"] == -32001

    missing = v1(daemon, "SendMessage", {"message": message10(None, {"a": 1})})["error"]
    assert missing["code"] == -32602 and "mcp-fixture.add" in missing["message"]
    types = [x["@type"] for x in missing["data"]]
    assert types == ["type.googleapis.com/google.rpc.BadRequest", ERROR_INFO]
    assert missing["data"][0]["fieldViolations"][0]["field"] == "message.metadata.skillId"
    assert error_info(missing)["reason"] == "INVALID_PARAMS"

    # A 0.3 message under 1.0: refused, saying which spelling it used.
    old = v1(daemon, "SendMessage", {"message": message03("mcp-fixture.add", {"a": 1, "b": 2})})["error"]
    assert old["code"] == -32602 and "0.3" in old["message"]

    for method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                   "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"):
        e = v1(daemon, method, {"taskId": "x"})["error"]
        assert e["code"] == -32003 and error_info(e)["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED", method
    e = v1(daemon, "GetExtendedAgentCard")["error"]
    assert e["code"] == -32004 and error_info(e)["reason"] == "UNSUPPORTED_OPERATION"
    e = v1(daemon, "NoSuchMethod")["error"]
    assert e["code"] == -32601


def test_one_jsonrpc_url_serves_both_versions_by_the_a2a_version_header(daemon):
    params10 = {"message": message10("mcp-fixture.add", {"a": 2, "b": 3})}
    params03 = {"message": message03("mcp-fixture.add", {"a": 2, "b": 3})}
    # 1.0 methods need the header; without it the request is 0.3 (spec 3.6.2) and is told so.
    e = rpc(daemon, "SendMessage", params10)["error"]
    assert e["code"] == -32601 and "A2A-Version: 1.0" in e["message"]
    e = rpc(daemon, "message/send", params03, "1.0")["error"]
    assert e["code"] == -32601 and "0.3" in e["message"]
    assert rpc(daemon, "message/send", params03, "0.3")["result"]["kind"] == "task"
    assert rpc(daemon, "message/send", params03, "0.3.0")["result"]["status"]["state"] == "completed"
    assert "task" in rpc(daemon, "SendMessage", params10, "1.0.1")["result"]
    # As a request parameter.
    status, _, body = request(daemon, "POST", "/a2a?A2A-Version=1.0",
                              {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": params10})
    assert "task" in json.loads(body)["result"]
    # A version hearth does not speak.
    for version in ("2.0", "0.2", "x"):
        e = rpc(daemon, "SendMessage", params10, version, id=7)
        assert e["id"] == 7 and e["error"]["code"] == -32009, version
        info = error_info(e["error"])
        assert info["reason"] == "VERSION_NOT_SUPPORTED" and info["metadata"]["requestedVersion"] == version
    # A batch of 1.0 requests: every error in the 1.0 shape.
    status, _, body = request(daemon, "POST", "/a2a", [
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}},
        {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": params10}], "1.0")
    batch = {r["id"]: r for r in json.loads(body)}
    assert error_info(batch[1]["error"])["reason"] == "TASK_NOT_FOUND"
    assert batch[2]["error"]["code"] == -32600 and "stream" in batch[2]["error"]["message"]
    # Not JSON: -32700.
    status, _, body = request(daemon, "POST", "/a2a", "{", "1.0")
    assert json.loads(body)["error"]["code"] == -32700


def test_v10_non_blocking_send_cancel_and_the_dropped_answer(daemon):
    slow = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.test_tool_with_progress", {"ms": 300}),
                                      "configuration": {"returnImmediately": True}})["result"]["task"]
    assert slow["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert wait_for(lambda: v1(daemon, "GetTask", {"id": slow["id"]})["result"]["status"]["state"] == "TASK_STATE_COMPLETED")

    runs = len(audit_lines(daemon, "test_tool_with_progress"))
    longer = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.test_tool_with_progress", {"ms": 1500}),
                                        "configuration": {"returnImmediately": True}})["result"]["task"]
    canceled = v1(daemon, "CancelTask", {"id": longer["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED" and "kind" not in canceled
    # The call runs on to its end (audited), and its answer does not change the task.
    assert wait_for(lambda: len(audit_lines(daemon, "test_tool_with_progress")) > runs, timeout=20)
    after = v1(daemon, "GetTask", {"id": longer["id"]})["result"]
    assert after["status"]["state"] == "TASK_STATE_CANCELED" and "artifacts" not in after
    assert audit_lines(daemon, "test_tool_with_progress")[-1]["method"] == "SendMessage"


def test_v10_list_tasks_paginates_newest_first_and_filters(daemon):
    ctx = "ctx-list-" + str(uuid.uuid4())
    ids = []
    for i in range(5):
        skill_input = {"a": i, "b": 1} if i != 2 else {"a": "bad"}
        ids.append(v1(daemon, "SendMessage", {"message": message10("mcp-fixture.add", skill_input, contextId=ctx)})
                   ["result"]["task"]["id"])

    first = v1(daemon, "ListTasks", {"contextId": ctx, "pageSize": 2})["result"]
    assert first["pageSize"] == 2 and first["totalSize"] == 5 and first["nextPageToken"]
    assert [t["id"] for t in first["tasks"]] == ids[::-1][:2]  # the latest status first
    assert all("artifacts" not in t for t in first["tasks"])  # only with includeArtifacts
    seen = [t["id"] for t in first["tasks"]]
    page = first
    while page["nextPageToken"]:
        page = v1(daemon, "ListTasks", {"contextId": ctx, "pageSize": 2, "pageToken": page["nextPageToken"]})["result"]
        seen += [t["id"] for t in page["tasks"]]
    assert seen == ids[::-1] and page["nextPageToken"] == ""

    full = v1(daemon, "ListTasks", {"contextId": ctx, "includeArtifacts": True, "historyLength": 0})["result"]
    assert full["pageSize"] == 50 and len(full["tasks"]) == 5 and full["nextPageToken"] == ""
    assert all("history" not in t for t in full["tasks"])
    assert sum("artifacts" in t for t in full["tasks"]) == 4
    failed = v1(daemon, "ListTasks", {"contextId": ctx, "status": "TASK_STATE_FAILED"})["result"]
    assert [t["id"] for t in failed["tasks"]] == [ids[2]] and failed["totalSize"] == 1
    later = v1(daemon, "ListTasks", {"contextId": ctx, "statusTimestampAfter": "2999-01-01T00:00:00Z"})["result"]
    assert later["tasks"] == [] and later["totalSize"] == 0
    earlier = v1(daemon, "ListTasks", {"contextId": ctx, "statusTimestampAfter": "2000-01-01T00:00:00+01:00"})["result"]
    assert earlier["totalSize"] == 5
    everything = v1(daemon, "ListTasks", {})["result"]
    assert everything["totalSize"] >= 5

    for bad in ({"pageSize": 0}, {"pageSize": 101}, {"status": "completed"}, {"status": "TASK_STATE_RUNNING"},
                {"pageToken": "not-a-token"}, {"statusTimestampAfter": "yesterday"}, {"historyLength": -1},
                {"includeArtifacts": "yes"}):
        e = v1(daemon, "ListTasks", bad)["error"]
        assert e["code"] == -32602, bad
        assert e["data"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    # 0.3 has no ListTasks.
    e = rpc(daemon, "ListTasks", {})["error"]
    assert e["code"] == -32601 and "A2A-Version: 1.0" in e["message"]


def test_v10_streams_end_at_the_terminal_state(daemon):
    # A task may finish before its stream is set up; the stream must still carry the artifact
    # and end with the final status. Repeated, as which of the two happens is timing.
    for i in range(10):
        status, headers, body = request(daemon, "POST", "/a2a", {
            "jsonrpc": "2.0", "id": f"s{i}", "method": "SendStreamingMessage",
            "params": {"message": message10("mcp-fixture.echo", {"item": {"name": "x"}})}}, "1.0")
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
        events = sse_events(body)
        assert all(e["jsonrpc"] == "2.0" and e["id"] == f"s{i}" for e in events)
        results = [e["result"] for e in events]
        assert [list(r) for r in results][0] == ["task"]
        assert all(len(r) == 1 and list(r)[0] in ("task", "statusUpdate", "artifactUpdate") for r in results)
        assert not [o for o in walk(results) if "kind" in o or "final" in o]
        artifact = next(r["artifactUpdate"] for r in results if "artifactUpdate" in r)
        assert artifact["artifact"]["parts"] == [{"data": {"echoed": {"item": {"name": "x"}}}}]
        assert artifact["lastChunk"] is True
        assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"

    # SubscribeToTask: a running task's current state, then its updates to the end.
    slow = v1(daemon, "SendMessage", {"message": message10("mcp-fixture.test_tool_with_progress", {"ms": 800}),
                                      "configuration": {"returnImmediately": True}})["result"]["task"]
    status, headers, body = request(daemon, "POST", "/a2a", {"jsonrpc": "2.0", "id": 5, "method": "SubscribeToTask",
                                                              "params": {"id": slow["id"]}}, "1.0")
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    results = [e["result"] for e in sse_events(body)]
    assert results[0]["task"]["id"] == slow["id"]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # An ended task has nothing to subscribe to; an unknown one is not found. Plain JSON errors.
    for task_id, code in ((slow["id"], -32004), ("nope", -32001)):
        status, headers, body = request(daemon, "POST", "/a2a", {"jsonrpc": "2.0", "id": 6, "method": "SubscribeToTask",
                                                                  "params": {"id": task_id}}, "1.0")
        assert headers["Content-Type"] == "application/json"
        e = json.loads(body)
        assert e["id"] == 6 and e["error"]["code"] == code and error_info(e["error"])
    # A stream whose message is refused answers a plain JSON error too.
    status, headers, body = request(daemon, "POST", "/a2a", {"jsonrpc": "2.0", "id": 8, "method": "SendStreamingMessage",
                                                              "params": {"message": message10("nope", {})}}, "1.0")
    assert headers["Content-Type"] == "application/json" and json.loads(body)["error"]["code"] == -32602


# -- A2A 1.0, HTTP+JSON --------------------------------------------------------------------------

def test_v10_http_json_binding(daemon):
    status, headers, out = rest(daemon, "POST", "/message:send", {"message": message10("mcp-fixture.add", {"a": 4, "b": 5})})
    assert status == 200 and headers["Content-Type"] == "application/a2a+json"
    task = out["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and task["artifacts"][0]["parts"] == [{"data": {"sum": 9}}]

    status, _, got = rest(daemon, "GET", f"/tasks/{task['id']}?historyLength=1")
    assert status == 200 and got["id"] == task["id"] and len(got["history"]) == 1
    status, _, page = rest(daemon, "GET", f"/tasks?pageSize=1&contextId={task['contextId']}&includeArtifacts=true")
    assert status == 200 and page["tasks"][0]["id"] == task["id"] and "artifacts" in page["tasks"][0]
    assert page["totalSize"] == 1 and page["nextPageToken"] == ""

    status, _, e = rest(daemon, "POST", f"/tasks/{task['id']}:cancel")
    assert status == 400 and e["error"]["status"] == "FAILED_PRECONDITION" and e["error"]["code"] == 400
    assert error_info(e["error"])["reason"] == "TASK_NOT_CANCELABLE"
    status, _, e = rest(daemon, "GET", "/tasks/nope")
    assert status == 404 and e["error"]["status"] == "NOT_FOUND" and error_info(e["error"])["reason"] == "TASK_NOT_FOUND"

    longer = rest(daemon, "POST", "/message:send", {"message": message10("mcp-fixture.test_tool_with_progress", {"ms": 800}),
                                                    "configuration": {"returnImmediately": True}})[2]["task"]
    status, headers, body = rest(daemon, "POST", f"/tasks/{longer['id']}:subscribe")
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = sse_events(body)
    assert events[0]["task"]["id"] == longer["id"]  # bare StreamResponse objects, no JSON-RPC envelope
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    status, _, e = rest(daemon, "GET", f"/tasks/{longer['id']}:subscribe")
    assert status == 400 and error_info(e["error"])["reason"] == "UNSUPPORTED_OPERATION"

    status, headers, body = rest(daemon, "POST", "/message:stream", {"message": message10("mcp-fixture.echo", {"item": {"name": "r"}})})
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = sse_events(body)
    assert "task" in events[0] and events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"

    cancelable = rest(daemon, "POST", "/message:send", {"message": message10("mcp-fixture.test_tool_with_progress", {"ms": 1500}),
                                                        "configuration": {"returnImmediately": True}})[2]["task"]
    status, _, canceled = rest(daemon, "POST", f"/tasks/{cancelable['id']}:cancel")
    assert status == 200 and canceled["status"]["state"] == "TASK_STATE_CANCELED"

    # What the binding refuses, each with the status of spec 5.4.
    status, _, e = rest(daemon, "POST", "/message:send", {"message": message10(None, {"a": 1})})
    assert status == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    status, _, e = rest(daemon, "POST", "/message:send", "[1]")
    assert status == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    status, _, e = rest(daemon, "GET", "/tasks?pageSize=lots")
    assert status == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    status, _, e = rest(daemon, "POST", "/tasks/x/pushNotificationConfigs", {"url": "http://x"})
    assert status == 400 and error_info(e["error"])["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"
    status, _, e = rest(daemon, "GET", "/extendedAgentCard")
    assert status == 400 and error_info(e["error"])["reason"] == "UNSUPPORTED_OPERATION"
    status, headers, _ = rest(daemon, "GET", "/message:send")
    assert status == 405 and headers["Allow"] == "POST"
    status, _, e = rest(daemon, "GET", "/nothing")
    assert status == 404 and e["error"]["status"] == "NOT_FOUND"
    # The binding is 1.0: without the header (0.3) or with another version it says so.
    for version in (None, "0.3", "2.0"):
        status, _, e = rest(daemon, "GET", "/tasks", version=version)
        assert status == 400 and error_info(e["error"])["reason"] == "VERSION_NOT_SUPPORTED", version
    status, _, out = rest(daemon, "GET", "/tasks?pageSize=1&A2A-Version=1.0", version=None)
    assert status == 200 and len(out["tasks"]) == 1


# -- A2A 0.3, JSON-RPC (no A2A-Version header) ----------------------------------------------------

def test_v03_send_get_cancel_in_0_3_shapes(daemon):
    task = rpc(daemon, "message/send", {"message": message03("mcp-fixture.add", {"a": 20, "b": 22})})["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0] == {"kind": "data", "data": {"sum": 42}}
    assert [m["role"] for m in task["history"]] == ["user", "agent"]
    assert all(m["kind"] == "message" for m in task["history"])
    assert task["status"]["message"]["parts"] == [{"kind": "text", "text": "mcp-fixture.add completed"}]
    got = rpc(daemon, "tasks/get", {"id": task["id"], "historyLength": 1})["result"]
    assert got["status"]["state"] == "completed" and len(got["history"]) == 1
    assert rpc(daemon, "tasks/get", {"id": task["id"], "historyLength": 0})["result"]["history"] == []
    # A 0.3 error's data stays an object; the codes are the same.
    e = rpc(daemon, "tasks/cancel", {"id": task["id"]})["error"]
    assert e["code"] == -32002 and e["data"]["taskId"] == task["id"]
    e = rpc(daemon, "tasks/get", {"id": "nope"})["error"]
    assert e["code"] == -32001 and e["data"] == {"taskId": "nope"}

    # The skill named in a data part; a failing call is a failed task with the error.
    failed = rpc(daemon, "message/send", {"message": message03(None, {"skill": "mcp-fixture.add", "input": {"a": "x"}})})
    assert failed["result"]["status"]["state"] == "failed"
    assert failed["result"]["status"]["message"]["parts"][1]["kind"] == "data"
    assert failed["result"]["status"]["message"]["parts"][1]["data"]["code"] == -32602
    missing = rpc(daemon, "message/send", {"message": message03(None, {"a": 1})})
    assert missing["error"]["code"] == -32602 and "mcp-fixture.add" in missing["error"]["message"]
    assert missing["error"]["data"] == {"field": "message.metadata.skillId", "constraint": "required"}
    assert rpc(daemon, "message/send", {"message": message03("nope", {})})["error"]["code"] == -32602
    e = rpc(daemon, "message/send", {"message": message10("mcp-fixture.add", {"a": 1, "b": 2})})["error"]
    assert e["code"] == -32602 and "A2A-Version: 1.0" in e["message"]
    assert rpc(daemon, "tasks/pushNotificationConfig/set", {"taskId": "x"})["error"]["code"] == -32003
    assert rpc(daemon, "agent/getAuthenticatedExtendedCard")["error"]["code"] == -32007

    # Not blocking: the task is returned at once and finishes later; a working task can be canceled.
    slow = rpc(daemon, "message/send", {"message": message03("mcp-fixture.test_tool_with_progress", {"ms": 300}),
                                        "configuration": {"blocking": False}})["result"]
    assert slow["status"]["state"] in ("submitted", "working")
    assert wait_for(lambda: rpc(daemon, "tasks/get", {"id": slow["id"]})["result"]["status"]["state"] == "completed")
    longer = rpc(daemon, "message/send", {"message": message03("mcp-fixture.test_tool_with_progress", {"ms": 1500}),
                                          "configuration": {"blocking": False}})["result"]
    canceled = rpc(daemon, "tasks/cancel", {"id": longer["id"]})["result"]
    assert canceled["status"]["state"] == "canceled" and canceled["kind"] == "task"
    # 1.0 sees the same tasks in its own shapes.
    assert v1(daemon, "GetTask", {"id": longer["id"]})["result"]["status"]["state"] == "TASK_STATE_CANCELED"


def test_v03_streams_carry_kinds_and_final(daemon):
    for i in range(10):
        status, headers, body = request(daemon, "POST", "/a2a", {"jsonrpc": "2.0", "id": 9, "method": "message/stream", "params": {
            "message": message03("mcp-fixture.echo", {"item": {"name": "y"}})}})
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
        events = [e["result"] for e in sse_events(body)]
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "task" and "artifact-update" in kinds, kinds
        assert kinds[-1] == "status-update" and events[-1]["final"] is True, kinds
        assert events[-1]["status"]["state"] == "completed"
        artifact = next(e for e in events if e["kind"] == "artifact-update")
        assert artifact["artifact"]["parts"][0] == {"kind": "data", "data": {"echoed": {"item": {"name": "y"}}}}

    slow = rpc(daemon, "message/send", {"message": message03("mcp-fixture.test_tool_with_progress", {"ms": 800}),
                                        "configuration": {"blocking": False}})["result"]
    status, headers, body = request(daemon, "POST", "/a2a", {"jsonrpc": "2.0", "id": 4, "method": "tasks/resubscribe",
                                                              "params": {"id": slow["id"]}})
    events = [e["result"] for e in sse_events(body)]
    assert events[0]["kind"] == "task" and events[-1]["final"] is True and events[-1]["status"]["state"] == "completed"
    assert all(e["final"] is False for e in events[1:-1] if e["kind"] == "status-update")
