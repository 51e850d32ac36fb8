"""The view host on the real daemon over real sockets: the page's files, a mount's files and
headers, `hearth open`, `hearth call --daemon` reaching a mount as an agent action, the audit log
naming client and mount. (What a browser does with them is tested in tests/e2e.)"""
import json
import subprocess
import time
from pathlib import Path

from hearthtest import EXAMPLES, hearth_bin, result, error, wait_for


def todo(daemon_factory):
    return daemon_factory([EXAMPLES / "todo-manager"])


def test_serve_prints_the_page_url_with_the_token_and_open_prints_it_again(daemon_factory):
    d = todo(daemon_factory)
    assert d.ready["uiUrl"] == d.ready["url"] + "/ui/"
    daemon_text = (d.state_dir / "daemon.json").read_text()
    assert json.loads(daemon_text)["port"] == d.port and d.token not in daemon_text
    out = subprocess.run([hearth_bin(), "open", "--state-dir", str(d.state_dir)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{d.ready['url']}/ui/#token={d.token}"
    d.stop()
    assert not (d.state_dir / "daemon.json").exists()
    gone = subprocess.run([hearth_bin(), "open", "--state-dir", str(d.state_dir)],
                          capture_output=True, text=True, timeout=20)
    assert gone.returncode == 1 and "no running hearth daemon" in gone.stderr


def test_the_page_is_served_without_the_token_and_holds_no_secret(daemon_factory):
    d = todo(daemon_factory)
    with d.http() as c:
        status, headers, body = c.request("GET", "/ui/", headers={"Host": f"127.0.0.1:{d.port}"})
        assert status == 200
        assert d.token.encode() not in body
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp and "unsafe" not in csp
        status, headers, _ = c.request("GET", "/ui", headers={"Host": f"127.0.0.1:{d.port}"})
        assert status == 308 and headers["Location"] == "/ui/"
        # The page's folder only.
        status, _, _ = c.request("GET", "/ui/%2e%2e/README.md", headers={"Host": f"127.0.0.1:{d.port}"})
        assert status == 404
        # Another site's page cannot read it through the browser either.
        status, _, _ = c.request("GET", "/ui/", headers={"Host": f"127.0.0.1:{d.port}",
                                                         "Origin": "http://evil.example"})
        assert status == 403


def test_a_mount_serves_its_files_to_an_opaque_origin_only_while_it_lives(daemon_factory):
    d = todo(daemon_factory)
    host = {"Host": f"127.0.0.1:{d.port}", "Origin": "null"}
    with d.ws() as ws:
        opened = result(ws.request("view/open", {"service": "todo-manager"}))
        url = opened["url"]
        with d.http() as c:
            status, headers, body = c.request("GET", url, headers=host)
            assert status == 200
            assert b'id="hearth-view-config"' in body
            assert opened["secret"].encode() not in body and d.token.encode() not in body
            csp = headers["Content-Security-Policy"]
            assert "connect-src 'none'" in csp and "sandbox allow-scripts allow-forms" in csp
            assert f"frame-ancestors http://127.0.0.1:{d.port}" in csp
            assert headers["Access-Control-Allow-Origin"] == "*"
            assert "camera=()" in headers["Permissions-Policy"]
            status, headers, body = c.request("GET", url + "todo-view.js", headers=host)
            assert status == 200 and headers["Content-Type"].startswith("text/javascript")
            # Not the service's data, even by escaping the folder.
            for bad in ("../data/todos.json", "..%2fdata%2ftodos.json", "../lavs.json"):
                status, _, _ = c.request("GET", url + bad, headers=host)
                assert status == 404, bad
            # Origin: null is for reading view files only.
            status, _, _ = c.request("POST", "/rpc", body=b"{}", headers={
                **host, "Authorization": f"Bearer {d.token}", "Content-Type": "application/json"})
            assert status == 403
        result(ws.request("view/close", {"mountId": opened["mountId"]}, id=2))
        with d.http() as c:
            status, _, _ = c.request("GET", url, headers=host)
            assert status == 404


def test_a_cli_call_through_the_daemon_reaches_the_mount_as_an_agent_action(daemon_factory):
    d = todo(daemon_factory)
    with d.ws() as page:
        mount = result(page.request("view/open", {"service": "todo-manager"}))["mountId"]
        out = subprocess.run([hearth_bin(), "call", "--daemon", "todo-manager", "addTodo",
                              '{"text": "from the cli"}', "--state-dir", str(d.state_dir)],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        added = json.loads(out.stdout)
        action = page.notification("view/agentAction")["params"]
        assert action["service"] == "todo-manager" and action["endpoint"] == "addTodo"
        assert action["input"]["text"] == "from the cli"
        assert action["result"] == added
        assert action["actor"] == {"type": "http", "client": "hearth-cli"}
        assert action["seq"] == 1 and action["at"].endswith("Z")

        # The view's own call is an action of its mount, audited with it.
        r = page.request("view/call", {"mountId": mount, "endpoint": "toggleTodo",
                                       "input": {"id": added["id"]}}, id=3)
        assert result(r)["done"] is True
        action = page.notification("view/agentAction")["params"]
        assert action["actor"] == {"type": "view", "mountId": mount} and action["seq"] == 2

    def lines():
        return [json.loads(l) for l in (d.state_dir / "audit.log").read_text().splitlines() if l]
    assert wait_for(lambda: any(l.get("mount") == mount for l in lines()))
    cli_line = next(l for l in lines() if l["endpoint"] == "addTodo")
    assert cli_line["client"] == "hearth-cli" and "mount" not in cli_line
    view_line = next(l for l in lines() if l.get("mount") == mount)
    assert view_line["method"] == "view/call" and view_line["endpoint"] == "toggleTodo"


def test_the_client_name_is_read_from_each_request(daemon_factory):
    """Keep-alive connections carry requests of different clients: the actor names each one."""
    d = todo(daemon_factory)
    with d.ws() as page:
        result(page.request("view/open", {"service": "todo-manager"}))
        with d.http() as c:
            add = {"jsonrpc": "2.0", "id": 1, "method": "lavs/call",
                   "params": {"service": "todo-manager", "endpoint": "addTodo", "input": {"text": "a"}}}
            for headers, actor in (({}, {"type": "http"}),
                                   ({"X-Hearth-Client": "second"}, {"type": "http", "client": "second"}),
                                   ({"X-Hearth-Client": "bad name!"}, {"type": "http"})):
                status, _, _ = c.post(add, headers=headers)
                assert status == 200
                assert page.notification("view/agentAction")["params"]["actor"] == actor


def test_a_cli_call_without_a_daemon_says_so(tmp_path):
    out = subprocess.run([hearth_bin(), "call", "--daemon", "todo-manager", "listTodos",
                          "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=20)
    assert out.returncode == 2
    assert "no running hearth daemon" in out.stderr


def test_a_cdn_view_needs_its_origin_allowed(daemon_factory, tmp_path):
    svc = tmp_path / "cdn"
    svc.mkdir()
    (svc / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "cdn-view", "version": "1.0.0",
        "view": {"component": {"type": "cdn", "url": "https://cdn.example.com/v.js", "exportName": "V"}},
        "endpoints": [{"id": "ping", "method": "query",
                       "handler": {"type": "script", "command": "sh", "args": ["-c", "echo 1"]}}]}))
    refused = daemon_factory([svc])
    with refused.ws() as ws:
        e = error(ws.request("view/open", {"service": "cdn-view"}))
        assert e["code"] == -32001 and "--allow-view-origin https://cdn.example.com" in e["message"]
    allowed = daemon_factory([svc], extra_args=["--allow-view-origin", "https://cdn.example.com"])
    with allowed.ws() as ws:
        opened = result(ws.request("view/open", {"service": "cdn-view"}))
        with allowed.http() as c:
            _, headers, body = c.request("GET", opened["url"], headers={"Host": f"127.0.0.1:{allowed.port}"})
            assert "script-src 'self' https://cdn.example.com;" in headers["Content-Security-Policy"]
            assert b'"module":"https://cdn.example.com/v.js"' in body
