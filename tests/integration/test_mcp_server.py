"""hearth as an MCP server (stdio: `hearth mcp serve`; Streamable HTTP: /mcp on the daemon), against
the real binary. hearth as an A2A agent is test_a2a.py."""
import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, Daemon, hearth_bin, wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "services" / "mcp"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}


def copy_service(src, tmp):
    dest = Path(tmp) / src.name
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("todos.json", ".todos.lock"))
    return dest


class Stdio:
    """`hearth mcp serve` with line-delimited JSON-RPC on its stdin and stdout."""

    def __init__(self, paths, *args):
        self.state = tempfile.mkdtemp(prefix="hearth-mcp-state-")
        self.proc = subprocess.Popen([hearth_bin(), "mcp", "serve", *map(str, paths), "--state-dir", self.state,
                                      "--log-level", "warn", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages = queue.Queue()
        self.pending = []
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self):
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))
        self.messages.put(None)

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params=None, timeout=20):
        id_ = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.response(id_, timeout)

    def response(self, id_, timeout=20):
        deadline = time.time() + timeout
        while True:
            for m in self.pending:
                if m.get("id") == id_ and "method" not in m:
                    self.pending.remove(m)
                    return m
            m = self.messages.get(timeout=max(0.01, deadline - time.time()))
            assert m is not None, "the server ended: " + self.proc.stderr.read().decode()
            self.pending.append(m)

    def notification(self, method, timeout=20, where=None):
        deadline = time.time() + timeout
        while True:
            for m in self.pending:
                if m.get("method") == method and "id" not in m and (where is None or where(m)):
                    self.pending.remove(m)
                    return m
            m = self.messages.get(timeout=max(0.01, deadline - time.time()))
            assert m is not None, "the server ended"
            self.pending.append(m)

    def initialize(self):
        r = self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.state, ignore_errors=True)
        return self.proc.returncode


@pytest.fixture
def tmp_services():
    d = tempfile.mkdtemp(prefix="hearth-mcp-")
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def stdio(tmp_services):
    servers = []

    def start(paths, *args):
        s = Stdio(paths, *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


# -- stdio -------------------------------------------------------------------------------------

def test_stdio_initialize_gate_tools_and_calls(stdio, tmp_services):
    s = stdio([copy_service(FIXTURE, tmp_services)])
    early = s.request("tools/list")
    assert early["error"]["code"] == -32600 and "initialize" in early["error"]["message"]
    assert s.request("ping")["result"] == {}
    init = s.initialize()["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["capabilities"]["tools"] == {"listChanged": True}
    assert init["capabilities"]["resources"]["subscribe"] is True
    assert init["serverInfo"]["name"] == "hearth"
    # An unknown version gets hearth's newest.
    assert s.request("initialize", {**INIT, "protocolVersion": "1999-01-01"})["result"]["protocolVersion"] == "2025-11-25"

    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    assert set(tools) == {"test_simple_text", "test_error_handling", "test_tool_with_progress", "echo", "add",
                          "json_schema_2020_12_tool", "sum", "test_tool_with_logging", "test_image_content",
                          "test_audio_content"}
    # An input that is not an object travels as the argument "input".
    assert tools["sum"]["inputSchema"] == {"type": "object", "required": ["input"], "properties": {
        "input": {"type": "array", "items": {"type": "number"}, "maxItems": 1000}}}
    summed = s.request("tools/call", {"name": "sum", "arguments": {"input": [1, 2, 3.5]}})["result"]
    assert summed["structuredContent"] == {"result": 6.5}
    assert s.request("tools/call", {"name": "sum", "arguments": {}})["result"]["isError"] is True
    # A schema's own keywords reach the client as written.
    modern = tools["json_schema_2020_12_tool"]["inputSchema"]
    assert modern["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert modern["$defs"]["address"]["type"] == "object" and modern["additionalProperties"] is False
    echo = tools["echo"]
    assert echo["inputSchema"]["properties"]["item"]["required"] == ["name"]  # #/types/Item resolved
    assert "#/types" not in json.dumps(echo)
    assert tools["add"]["annotations"]["readOnlyHint"] is False
    assert tools["echo"]["annotations"]["readOnlyHint"] is True
    assert tools["add"]["outputSchema"]["required"] == ["sum"]
    assert tools["test_simple_text"]["outputSchema"]["properties"]["result"] == {"type": "string"}
    assert tools["add"]["_meta"]["ui"]["resourceUri"] == "ui://mcp-fixture/view"

    r = s.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})["result"]
    assert r["structuredContent"] == {"sum": 42} and r["isError"] is False
    assert json.loads(r["content"][0]["text"]) == {"sum": 42}
    text = s.request("tools/call", {"name": "test_simple_text"})["result"]
    assert text["structuredContent"] == {"result": "This is a simple text response for testing."}
    # An output schema that says the value is an image (or a sound) gives an image block.
    image = s.request("tools/call", {"name": "test_image_content"})["result"]
    assert image["content"][0]["type"] == "image" and image["content"][0]["mimeType"] == "image/png"
    assert base64.b64decode(image["content"][0]["data"]).startswith(b"\x89PNG")
    # What a handler logs while it runs reaches the client during the call, at the session's level.
    assert s.request("logging/setLevel", {"level": "info"})["result"] == {}
    logged = s.request("tools/call", {"name": "test_tool_with_logging"})["result"]
    assert logged["isError"] is False
    lines = [s.notification("notifications/message", where=lambda m: m["params"]["logger"] == "test_tool_with_logging")
             for _ in range(3)]
    assert [l["params"]["data"] for l in lines] == ["Tool execution started", "Tool processing data",
                                                     "Tool execution completed"]
    assert all(l["params"]["level"] == "info" for l in lines)
    assert s.request("logging/setLevel", {"level": "warning"})["result"] == {}
    s.request("tools/call", {"name": "test_tool_with_logging"})
    s.request("ping")
    assert not [m for m in s.pending if m.get("method") == "notifications/message"
                and m["params"]["logger"] == "test_tool_with_logging"]

    # Bad input and a failing handler are tool errors the model can read; an unknown tool is a
    # protocol error.
    bad = s.request("tools/call", {"name": "add", "arguments": {"a": "x"}})["result"]
    assert bad["isError"] is True and "Invalid params" in bad["content"][0]["text"]
    assert bad["_meta"]["hearth/error"]["code"] == -32602
    failed = s.request("tools/call", {"name": "test_error_handling", "arguments": {}})["result"]
    assert failed["isError"] is True and "intentionally" in failed["content"][0]["text"]
    unknown = s.request("tools/call", {"name": "nope", "arguments": {}})
    assert unknown["error"]["code"] == -32602 and "nope" in unknown["error"]["message"]
    extra = s.request("tools/call", {"name": "json_schema_2020_12_tool",
                                     "arguments": {"name": "x", "address": {"city": 1}}})["result"]
    assert extra["isError"] is True  # validated through its $defs
    not_object = s.request("tools/call", {"name": "add", "arguments": [1, 2]})
    assert not_object["error"]["code"] == -32602
    assert s.request("no/such")["error"]["code"] == -32601

    # A line that is not JSON gets a parse error, and the server goes on.
    s.proc.stdin.write(b"{not json\n")
    s.proc.stdin.flush()
    m = s.messages.get(timeout=10)
    assert m["error"]["code"] == -32700 and m["id"] is None
    assert s.request("ping")["result"] == {}
    assert s.close() == 0


def test_stdio_progress_cancel_and_logging(stdio, tmp_services):
    s = stdio([copy_service(FIXTURE, tmp_services)], "--progress-interval", "100")
    s.initialize()
    assert s.request("logging/setLevel", {"level": "warning"})["result"] == {}
    assert s.request("logging/setLevel", {"level": "loud"})["error"]["code"] == -32602

    r = s.request("tools/call", {"name": "test_tool_with_progress", "arguments": {"ms": 700},
                                 "_meta": {"progressToken": "tok-1"}})
    assert r["result"]["structuredContent"] == {"waited": 700}
    progress = [m for m in s.pending if m.get("method") == "notifications/progress"]
    assert len(progress) >= 3
    values = [m["params"]["progress"] for m in progress]
    assert values == sorted(values) and all(m["params"]["progressToken"] == "tok-1" for m in progress)
    s.pending = [m for m in s.pending if m.get("method") != "notifications/progress"]

    # A failure is logged at warning.
    s.request("tools/call", {"name": "test_error_handling"})
    log = s.notification("notifications/message")
    assert log["params"]["level"] == "warning" and "test_error_handling" in log["params"]["data"]

    # Cancelled: no answer for that request; the server goes on.
    s.send({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {"ms": 3000}}})
    time.sleep(0.3)
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 900, "reason": "test"}})
    assert s.request("ping")["result"] == {}
    with pytest.raises(queue.Empty):
        s.response(900, timeout=1.5)
    # A cancel for a request that is not running is ignored.
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})
    assert s.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})["result"]["structuredContent"] == {"sum": 2}


def test_stdio_resources_files_view_and_subscriptions(stdio, tmp_services):
    fixture = copy_service(FIXTURE, tmp_services)
    todo = copy_service(EXAMPLES / "todo-manager-js", tmp_services)
    s = stdio([fixture, todo])
    s.initialize()
    resources = {r["uri"]: r for r in s.request("resources/list")["result"]["resources"]}
    readme = "file://" + str(fixture / "docs" / "readme.md")
    pixel = "file://" + str(fixture / "docs" / "pixel.png")
    assert readme in resources and pixel in resources
    assert resources[readme]["mimeType"].startswith("text/markdown")
    assert not any(u.endswith("lavs.json") or u.endswith("handlers.mjs") for u in resources)  # not in fileAccess
    assert "ui://mcp-fixture/view" in resources
    assert resources["ui://mcp-fixture/view"]["mimeType"] == "text/html;profile=mcp-app"
    sub_uri = "lavs://todo-manager-js/subscriptions/todoUpdates"
    assert sub_uri in resources

    text = s.request("resources/read", {"uri": readme})["result"]["contents"][0]
    assert text["text"].startswith("# MCP fixture") and text["uri"] == readme
    blob = s.request("resources/read", {"uri": pixel})["result"]["contents"][0]
    assert blob["blob"].startswith("iVBOR") and blob["mimeType"] == "image/png"
    outside = s.request("resources/read", {"uri": "file://" + str(fixture / "lavs.json")})
    assert outside["error"]["code"] == -32002
    traversal = s.request("resources/read", {"uri": "file://" + str(fixture / "docs" / ".." / "handlers.mjs")})
    assert traversal["error"]["code"] == -32002
    assert s.request("resources/read", {"uri": "file:///etc/passwd"})["error"]["code"] == -32002
    assert s.request("resources/read", {"uri": "test://static-text"})["error"]["code"] == -32002

    view = s.request("resources/read", {"uri": "ui://mcp-fixture/view"})["result"]["contents"][0]
    assert view["mimeType"] == "text/html;profile=mcp-app"
    assert "ui/initialize" in view["text"] and "mcp-fixture-view" in view["text"]
    assert '"add":{"name":"mcp-fixture.add"' in view["text"]  # two services: qualified tool names

    # Subscriptions: only lavs:// resources; updates arrive as notifications, read gives the item.
    assert s.request("resources/subscribe", {"uri": readme})["error"]["code"] == -32602
    assert s.request("resources/subscribe", {"uri": sub_uri})["result"] == {}
    s.notification("notifications/resources/updated", where=lambda m: m["params"]["uri"] == sub_uri)
    first = json.loads(s.request("resources/read", {"uri": sub_uri})["result"]["contents"][0]["text"])
    assert first is not None
    s.request("tools/call", {"name": "todo-manager-js.addTodo", "arguments": {"text": "from mcp"}})
    s.notification("notifications/resources/updated", where=lambda m: m["params"]["uri"] == sub_uri)
    assert "from mcp" in s.request("resources/read", {"uri": sub_uri})["result"]["contents"][0]["text"]
    assert s.request("resources/unsubscribe", {"uri": sub_uri})["result"] == {}
    assert s.request("resources/unsubscribe", {"uri": sub_uri})["error"]["code"] == -32602


def write_view_service(root, name, view, files):
    d = Path(root) / name
    d.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    (d / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": name, "version": "1.0.0",
        "endpoints": [{"id": "hello", "method": "query",
                       "handler": {"type": "function", "module": "handlers.mjs", "function": "hello"}}],
        "view": {"component": view}}))
    (d / "handlers.mjs").write_text("export function hello() { return { hi: true }; }\n")
    return d


def test_stdio_every_view_named_can_be_read(stdio, tmp_services):
    """An npm view is bundled into its document; a view that cannot be one document (a package
    import, a CDN origin not allowed) is neither listed nor named by a tool, and reading it says why."""
    todo = copy_service(EXAMPLES / "todo-manager-js", tmp_services)
    package = {"name": "pkg-view", "version": "1.0.0", "type": "module", "main": "index.js"}
    unbundled = write_view_service(tmp_services, "unbundled", {"type": "npm", "package": "pkg-view", "version": "1"}, {
        "node_modules/pkg-view/package.json": json.dumps(package),
        "node_modules/pkg-view/index.js": "import { LitElement } from 'lit';\nexport default class V extends LitElement {}\n"})
    remote = write_view_service(tmp_services, "remote", {"type": "cdn", "url": "https://cdn.example.com/v.js"}, {})
    s = stdio([todo, unbundled, remote])
    s.initialize()
    tools = s.request("tools/list")["result"]["tools"]
    resources = s.request("resources/list")["result"]["resources"]
    named = {t["_meta"]["ui"]["resourceUri"] for t in tools if "ui" in t["_meta"]}
    listed = {r["uri"] for r in resources if r["uri"].startswith("ui://")}
    assert named == listed == {"ui://todo-manager-js/view"}
    assert all(t["_meta"]["ui"]["resourceUri"] == "ui://todo-manager-js/view"
               for t in tools if t["name"].startswith("todo-manager-js."))
    for uri in named | listed:
        content = s.request("resources/read", {"uri": uri})["result"]["contents"][0]
        assert content["mimeType"] == "text/html;profile=mcp-app"
    view = s.request("resources/read", {"uri": "ui://todo-manager-js/view"})["result"]["contents"][0]["text"]
    # The package's two modules are in the document; nothing is loaded from anywhere.
    assert '__hearth_define("styles.js"' in view and '__hearth_define("todo-list-view.js"' in view
    assert "import {" not in view and " from './" not in view
    missing = s.request("resources/read", {"uri": "ui://unbundled/view"})["error"]
    assert missing["code"] == -32002 and "imports 'lit'" in missing["data"]["reason"]
    missing = s.request("resources/read", {"uri": "ui://remote/view"})["error"]
    assert missing["code"] == -32002 and "--allow-view-origin" in missing["data"]["reason"]


def test_stdio_list_changed_when_a_manifest_changes(stdio, tmp_services):
    fixture = copy_service(FIXTURE, tmp_services)
    s = stdio([fixture], "--watch-interval", "100")
    s.initialize()
    manifest = json.loads((fixture / "lavs.json").read_text())
    manifest["endpoints"].append({"id": "added_later", "method": "query",
                                  "handler": {"type": "function", "module": "handlers.mjs", "function": "simpleText"}})
    (fixture / "lavs.json").write_text(json.dumps(manifest))
    s.notification("notifications/tools/list_changed", timeout=15)
    names = [t["name"] for t in s.request("tools/list")["result"]["tools"]]
    assert "added_later" in names


def test_stdio_ends_on_sigterm_and_on_the_end_of_stdin(tmp_services):
    import signal
    fixture = copy_service(FIXTURE, tmp_services)
    p = subprocess.Popen([hearth_bin(), "mcp", "serve", str(fixture), "--state-dir", str(tmp_services / "st")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    p.stdin.flush()
    assert json.loads(p.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    p.send_signal(signal.SIGTERM)  # stdin still open
    assert p.wait(timeout=10) == 0
    # A last message without its newline is still answered before the end.
    done = subprocess.run([hearth_bin(), "mcp", "serve", str(fixture), "--state-dir", str(tmp_services / "st")],
                          input=b'{"jsonrpc":"2.0","id":2,"method":"ping"}', capture_output=True, timeout=30)
    assert done.returncode == 0 and json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_stdio_refuses_a_broken_service():
    p = subprocess.run([hearth_bin(), "mcp", "serve", "/nonexistent-hearth-path"], capture_output=True, timeout=30)
    assert p.returncode != 0


# -- Streamable HTTP -----------------------------------------------------------------------------

def mcp_post(d, body, session=None, headers=None, token=True, path="/mcp"):
    h = {"Accept": "application/json, text/event-stream"}
    if session:
        h["Mcp-Session-Id"] = session
    h.update(headers or {})
    with d.http() as c:
        return c.post(body, headers=h, path=path, token=token)


def sse_events(raw):
    out = []
    for block in raw.decode().split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if data and data[0]:
            out.append(json.loads("\n".join(data)))
    return out


@pytest.fixture
def daemon(daemon_factory):
    return daemon_factory([FIXTURE, EXAMPLES / "todo-manager-js"],
                          extra_args=["--watch", "--watch-interval", "100", "--mcp-progress-interval", "100"])


def test_http_session_tools_and_sse_progress(daemon):
    status, headers, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    assert status == 200
    session = headers["Mcp-Session-Id"]
    assert len(session) >= 32
    assert json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
    status, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status == 202 and body == b""
    _, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session,
                          {"MCP-Protocol-Version": "2025-11-25"})
    names = {t["name"] for t in json.loads(body)["result"]["tools"]}
    assert {"mcp-fixture.add", "todo-manager-js.listTodos"} <= names  # two services: qualified
    status, headers, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "mcp-fixture.test_tool_with_progress", "arguments": {"ms": 600}, "_meta": {"progressToken": 7}}}, session)
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = sse_events(body)
    assert [e.get("method") for e in events[:-1]] == ["notifications/progress"] * (len(events) - 1)
    assert len(events) >= 4 and events[-1]["id"] == 3
    assert events[-1]["result"]["structuredContent"] == {"waited": 600}

    # Stateless: no session id, no initialize.
    _, headers, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                         "params": {"name": "mcp-fixture.add", "arguments": {"a": 1, "b": 2}}})
    assert "Mcp-Session-Id" not in headers
    assert json.loads(body)["result"]["structuredContent"] == {"sum": 3}

    # DELETE ends the session; it is unknown afterwards.
    with daemon.http() as c:
        status, _, _ = c.request("DELETE", "/mcp", headers={"Authorization": f"Bearer {daemon.token}",
                                                            "Host": c.host, "Mcp-Session-Id": session})
    assert status == 204
    status, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 5, "method": "ping"}, session)
    assert status == 404


def test_http_wire_rules(daemon):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert mcp_post(daemon, msg, token=False)[0] == 401
    assert mcp_post(daemon, msg, headers={"Host": "evil.example.com"})[0] == 403
    assert mcp_post(daemon, msg, headers={"Origin": "http://evil.example.com"})[0] == 403
    assert mcp_post(daemon, msg, headers={"MCP-Protocol-Version": "1999-01-01"})[0] == 400
    assert mcp_post(daemon, msg, headers={"Content-Type": "text/plain"})[0] == 415
    assert mcp_post(daemon, msg, headers={"Accept": "text/html"})[0] == 406
    assert mcp_post(daemon, "{broken")[0] == 400
    assert mcp_post(daemon, msg, session="not-a-session")[0] == 404
    # The token as a query parameter (clients configured with a URL only).
    status, _, body = mcp_post(daemon, msg, token=False, path=f"/mcp?token={daemon.token}")
    assert status == 200 and json.loads(body)["result"] == {}
    with daemon.http() as c:
        status, _, _ = c.request("GET", "/mcp", headers={"Authorization": f"Bearer {daemon.token}", "Host": c.host,
                                                         "Accept": "text/event-stream"})
    assert status == 405  # a GET stream needs a session


def test_http_from_an_allowed_browser_origin(daemon_factory):
    origin = "http://localhost:6274"
    d = daemon_factory([FIXTURE], extra_args=["--allow-origin", origin])
    with d.http() as c:
        status, headers, _ = c.request("OPTIONS", "/mcp", headers={
            "Host": c.host, "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version"})
    assert status == 204
    allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "mcp-session-id", "mcp-protocol-version", "last-event-id"} <= allowed
    status, headers, _ = mcp_post(d, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
                                  headers={"Origin": origin})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == origin
    assert headers["Access-Control-Expose-Headers"] == "Mcp-Session-Id" and headers["Mcp-Session-Id"]
    # Another origin is still refused.
    assert mcp_post(d, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Origin": "http://localhost:9999"})[0] == 403


def test_http_get_stream_gets_updates_and_list_changed(daemon):
    import http.client
    _, headers, _ = mcp_post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    session = headers["Mcp-Session-Id"]
    # A HEAD request does not take the session's stream.
    with daemon.http() as c:
        status, headers, _ = c.request("HEAD", "/mcp", headers={"Authorization": f"Bearer {daemon.token}",
                                                               "Host": c.host, "Accept": "text/event-stream",
                                                               "Mcp-Session-Id": session})
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=20)
    conn.request("GET", "/mcp", headers={"Authorization": f"Bearer {daemon.token}", "Host": f"127.0.0.1:{daemon.port}",
                                         "Accept": "text/event-stream", "Mcp-Session-Id": session})
    stream = conn.getresponse()
    assert stream.status == 200 and stream.getheader("Content-Type") == "text/event-stream"
    # A second stream for the same session is refused.
    with daemon.http() as c:
        status, _, _ = c.request("GET", "/mcp", headers={"Authorization": f"Bearer {daemon.token}", "Host": c.host,
                                                         "Accept": "text/event-stream", "Mcp-Session-Id": session})
    assert status == 409
    events = queue.Queue()

    def read():
        buf = b""
        try:
            while True:
                chunk = stream.fp.readline()
                if not chunk:
                    break
                buf += chunk
                if chunk in (b"\n", b"\r\n"):
                    for e in sse_events(buf):
                        events.put(e)
                    buf = b""
        except Exception:
            pass
    threading.Thread(target=read, daemon=True).start()

    uri = "lavs://todo-manager-js/subscriptions/todoUpdates"
    _, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}}, session)
    assert json.loads(body)["result"] == {}

    def next_event(method, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            e = events.get(timeout=max(0.01, deadline - time.time()))
            if e.get("method") == method:
                return e
        raise AssertionError("no " + method)
    assert next_event("notifications/resources/updated")["params"]["uri"] == uri
    mcp_post(daemon, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "todo-manager-js.addTodo", "arguments": {"text": "over http"}}}, session)
    next_event("notifications/resources/updated")
    _, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": uri}}, session)
    assert "over http" in json.loads(body)["result"]["contents"][0]["text"]

    manifest_path = daemon.service_dir("mcp") / "lavs.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["endpoints"] = [e for e in manifest["endpoints"] if e["id"] != "add"]
    manifest_path.write_text(json.dumps(manifest))
    next_event("notifications/tools/list_changed")
    _, _, body = mcp_post(daemon, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, session)
    assert "mcp-fixture.add" not in {t["name"] for t in json.loads(body)["result"]["tools"]}
    conn.close()


def test_http_calls_are_audited(daemon):
    mcp_post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "mcp-fixture.add", "arguments": {"a": 5, "b": 5}}})
    audit = Path(daemon.ready["auditLog"])
    assert wait_for(lambda: audit.exists() and '"tools/call"' in audit.read_text())
    line = [json.loads(l) for l in audit.read_text().splitlines() if '"tools/call"' in l][-1]
    assert line["service"] == "mcp-fixture" and line["endpoint"] == "add"


# -- virtual workspaces as MCP -------------------------------------------------------------------

WS_EXAMPLE = EXAMPLES / "workspace-search"


def test_a_workspace_over_stdio_is_a_resource_and_two_tools(stdio, tmp_services):
    """A client's own model drives a workspace: it reads the render, runs scripts with the same
    checks, commits and history as workspace/execute, and hears of every change."""
    svc = copy_service(WS_EXAMPLE, tmp_services)
    s = stdio([svc], "--workspace", str(svc / "workspace"))
    init = s.initialize()["result"]
    assert "execute_script" in init["instructions"]
    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    assert {"execute_script", "read_workspace"} <= set(tools)
    assert tools["execute_script"]["inputSchema"]["required"] == ["script"]  # one workspace
    assert "product-search" in tools["execute_script"]["description"]
    resources = {r["uri"]: r for r in s.request("resources/list")["result"]["resources"]}
    assert resources["workspace://product-search"]["mimeType"] == "text/plain"
    view = s.request("resources/read", {"uri": "workspace://product-search"})["result"]["contents"][0]
    assert "VIRTUAL WORKSPACE: product-search" in view["text"]
    assert "normalizeSearch(text)" in view["text"]  # the guide: utilities, examples, rules
    assert s.request("resources/subscribe", {"uri": "workspace://product-search"})["result"] == {}
    # Trailing slashes name the same workspace: the same subscription, not one more listener.
    assert s.request("resources/subscribe", {"uri": "workspace://product-search//"})["result"] == {}

    r = s.request("tools/call", {"name": "execute_script", "arguments": {
        "script": "search_box_state.search_pattern = normalizeSearch(' TEA '); filter_state.maxPrice = 4;"}})
    out = r["result"]
    assert out["isError"] is False
    assert out["structuredContent"]["ok"] is True and out["structuredContent"]["committed"] is True
    version = out["structuredContent"]["version"]
    assert "search_results" in out["structuredContent"]["changed"]
    assert "Earl grey" in out["content"][0]["text"]  # the fresh render follows the answer
    upd = s.notification("notifications/resources/updated",
                         where=lambda m: m["params"]["uri"] == "workspace://product-search")
    assert upd["params"]["_meta"]["hearth/version"] >= version
    s.request("ping")
    assert [m["params"]["_meta"]["hearth/version"] for m in s.pending
            if m.get("method") == "notifications/resources/updated"] == [], "one update a change"

    # A script that breaks a schema is a tool error the model can act on; nothing changed.
    bad = s.request("tools/call", {"name": "execute_script",
                                   "arguments": {"script": "filter_state.maxPrice = -1;"}})["result"]
    assert bad["isError"] is True
    assert bad["structuredContent"]["error"]["data"]["keyword"] == "minimum"
    stale = s.request("tools/call", {"name": "execute_script", "arguments": {
        "script": "filter_state.maxPrice = 2;", "expectedVersion": version - 1}})["result"]
    assert stale["isError"] is True and "render it again" in stale["content"][0]["text"]
    again = s.request("tools/call", {"name": "read_workspace", "arguments": {}})["result"]
    assert again["structuredContent"]["version"] == version
    # The same history as workspace/execute, with this client as the actor.
    history = subprocess.run([hearth_bin(), "workspace", "history", str(svc / "workspace"),
                              "--services", str(svc), "--state-dir", s.state, "--json"],
                             capture_output=True, text=True, timeout=60)
    assert history.returncode == 0, history.stderr
    entries = [json.loads(line) for line in history.stdout.splitlines() if line.strip()]
    mine = [e for e in entries if e["actor"] == "mcp:pytest"]
    assert [e["outcome"] for e in mine] == ["committed", "failed"]
    assert s.request("resources/unsubscribe", {"uri": "workspace://product-search"})["result"] == {}
    unknown = s.request("tools/call", {"name": "execute_script",
                                       "arguments": {"script": "1", "workspaceId": "nope"}})
    assert unknown["error"]["code"] == -32601 and "nope" in unknown["error"]["message"]


def test_a_workspace_alone_needs_no_services(stdio, tmp_path):
    ws = tmp_path / "notes-ws"
    ws.mkdir()
    (ws / "workspace.yaml").write_text(
        "name: scratch\ncomponents:\n  - id: pad\n    states:\n      note:\n        permission: rw\n"
        "        schema: {type: string, maxLength: 20}\n        initial: \"\"\n")
    s = stdio([], "--workspace", str(ws))
    s.initialize()
    out = s.request("tools/call", {"name": "execute_script", "arguments": {"script": "note = 'hi';"}})["result"]
    assert out["isError"] is False and out["structuredContent"]["changed"] == ["note"]
    p = subprocess.run([hearth_bin(), "mcp", "serve"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--workspace" in p.stderr


def test_a_workspace_over_the_daemons_mcp(daemon_factory):
    d = daemon_factory([WS_EXAMPLE], extra_args=["--workspace", str(WS_EXAMPLE / "workspace")])
    status, headers, body = mcp_post(d, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    session = headers["Mcp-Session-Id"]
    mcp_post(d, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _, _, body = mcp_post(d, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_script", "arguments": {"script": "filter_state.maxPrice = 3;"}}}, session)
    out = json.loads(body)["result"]
    assert out["isError"] is False and out["structuredContent"]["committed"] is True
    # The daemon's own view of the workspace saw the same change.
    state = json.loads(json.dumps(d.rpc("workspace/state", {"workspaceId": "product-search",
                                                             "name": "filter_state"})))
    assert state["result"]["value"]["maxPrice"] == 3
