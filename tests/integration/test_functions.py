"""`function` handlers end to end: the real daemon, its jail and its pool of hearth-js-worker
processes (tests/services/functions)."""
import concurrent.futures
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hearthtest import ROOT, Daemon, error, hearth_bin, result

SERVICES = ROOT / "tests" / "services"

SERVICE = ROOT / "tests" / "services" / "functions"




def worker_pids(service_dir):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/exe").endswith("hearth-js-worker") and \
                    Path(os.readlink(f"/proc/{entry}/cwd")) == Path(service_dir):
                pids.append(int(entry))
        except OSError:
            pass
    return sorted(pids)


@pytest.fixture(scope="module")
def daemon():
    with Daemon([SERVICE], extra_args=["--js-workers", "2"]) as d:
        yield d


def test_calls_return_json_and_imports_load(daemon):
    r = result(daemon.call("echo", {"a": [1, "x"]}))
    assert r == {"input": {"a": [1, "x"]}, "endpoint": "echo", "service": "functions", "about": "object"}
    assert result(daemon.call("later", {"ms": 20})) == {"waited": 20}


def test_deeply_nested_input_reaches_the_engine(daemon):
    # The worker reads its frames with the daemon's parser and limits; with Boost.JSON's default
    # depth of 32 it took an input nested 40 deep for a malformed frame and exited.
    deep = 1
    for _ in range(40):
        deep = [deep]
    assert result(daemon.call("echo", {"deep": deep}))["input"] == {"deep": deep}


def test_numbers_reach_the_engine_and_come_back_unchanged(daemon):
    # Each crossing (the daemon's frame, the worker's input to SpiderMonkey, JSON.stringify's text
    # back) keeps the double; Boost.JSON 1.81 alone misread 934.5146729745181 by one unit in the
    # last place. JavaScript writes 1e20 in full, an integer beyond 64 bits: read as a double.
    numbers = {"budget": 42.5, "sum": 0.1 + 0.2, "exact": 934.5146729745181, "tiny": 5e-324,
               "max": 1.7976931348623157e308, "whole": 100.0, "large": 1e20, "huge": 1e21}
    with daemon.http() as c:
        status, _, data = c.post({"jsonrpc": "2.0", "id": 1, "method": "lavs/call",
                                  "params": {"endpoint": "echo", "input": numbers}})
    assert status == 200, data
    assert result(json.loads(data))["input"] == numbers
    text = data.decode()
    for piece in ['"budget":42.5', '"sum":0.30000000000000004', '"whole":100,', '"large":1e+20',
                  '"huge":1e+21', '"max":1.7976931348623157e+308', '"tiny":5e-324']:
        assert piece in text, (piece, text)


def test_workers_run_jailed_and_warm(daemon):
    pids = worker_pids(daemon.service_dir("functions"))
    assert len(pids) >= 2
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text()
        assert "NoNewPrivs:\t1" in status
        assert "Seccomp:\t2" in status
        # A pid namespace of its own: the worker is pid 2 (under the jail's init) inside it.
        nspid = [line for line in status.splitlines() if line.startswith("NSpid:")][0].split()
        assert len(nspid) == 3 and nspid[-1] == "2", nspid


def test_a_thrown_error_has_message_and_stack(daemon):
    e = error(daemon.call("fail", {"value": 7}))
    assert e["code"] == -32003
    assert e["message"] == "RangeError: bad value 7"
    assert e["data"]["file"] == "handlers.mjs"
    assert "handlers.mjs:14" in e["data"]["stack"]


def test_an_infinite_loop_times_out_and_other_calls_go_on(daemon):
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        spin = pool.submit(daemon.call, "spin")
        echoes = [pool.submit(daemon.call, "echo", {"i": i}) for i in range(20)]
        for i, f in enumerate(echoes):
            assert result(f.result())["input"] == {"i": i}
        e = error(spin.result())
    assert e["code"] == -32002
    assert result(daemon.call("echo", {})) is not None


def test_a_memory_bomb_fails_alone(daemon):
    e = error(daemon.call("bomb"))
    assert e["code"] == -32003
    assert "memory limit exceeded" in e["message"]
    assert e["data"]["maxMemory"] == 67108864
    for i in range(4):
        assert result(daemon.call("echo", {"i": i}))["input"] == {"i": i}


def test_files_only_within_file_access(daemon):
    assert json.loads(result(daemon.call("readData", {"path": "data/hello.json"}))) == {"hello": "world"}
    for path in ["secret.txt", "../secret.txt", "/etc/shadow", "data/../secret.txt", "lavs.json"]:
        e = error(daemon.call("readData", {"path": path}))
        assert e["code"] == -32001, (path, e)


def test_network_only_where_allowed(daemon):
    e = error(daemon.call("fetch", {"url": "http://example.com/"}))
    assert e["code"] == -32001
    assert "example.com:80" in e["message"]


def test_imports_cannot_leave_the_service_folder(tmp_path):
    # Refused when the manifest loads (hearth check, hearth serve), not at every call.
    service = tmp_path / "escape"
    service.mkdir()
    shutil.copy(SERVICES / "functions" / "escape.mjs", service / "escape.mjs")
    (service / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "escape", "version": "1.0.0",
        "endpoints": [{"id": "escapeImport", "method": "query",
                       "handler": {"type": "function", "module": "escape.mjs", "function": "f"}}]}))
    r = subprocess.run([str(hearth_bin()), "check", str(service)], capture_output=True, text=True)
    assert r.returncode == 1, r
    assert "endpoints[0].handler" in r.stdout + r.stderr
    assert "outside the service folder" in r.stdout + r.stderr


def test_mutations_publish_to_subscribers(daemon):
    with daemon.ws() as watcher:
        sub = result(watcher.request("lavs/subscribe", {"service": "functions", "endpoint": "notes"}))
        first = watcher.notification("lavs/data")
        assert first["params"]["subscriptionId"] == sub["subscriptionId"]
        before = len(first["params"]["data"]["notes"])
        assert result(daemon.call("addNote", {"text": "hello"})) == {"count": before + 1}
        ev = watcher.notification("lavs/data")
        assert ev["params"]["data"] == {"added": "hello", "count": before + 1}


def test_many_concurrent_calls(daemon):
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(daemon.call, "echo", {"n": n}) for n in range(200)]
        for n, f in enumerate(futures):
            assert result(f.result())["input"] == {"n": n}


def test_a_crashed_worker_is_replaced(daemon):
    service_dir = daemon.service_dir("functions")
    before = worker_pids(service_dir)
    os.kill(before[0], 9)
    for i in range(10):
        assert result(daemon.call("echo", {"i": i}))["input"] == {"i": i}
    import time
    deadline = time.time() + 10
    while time.time() < deadline and len(worker_pids(service_dir)) < len(before):
        time.sleep(0.05)
    after = worker_pids(service_dir)
    assert len(after) == len(before) and before[0] not in after


def test_fetch_reaches_an_allowed_host_through_the_jail(tmp_path):
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/old/"):
                # A relative reference, resolved against the URL it came from.
                self.send_response(302)
                self.send_header("Location", "../hello?from=old")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    # An HTTPS server whose self-signed certificate no system CA vouches for.
    import ssl
    import subprocess
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(tmp_path / "key.pem"),
                    "-out", str(tmp_path / "cert.pem")], check=True, capture_output=True)
    tls_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    tls_server.socket = context.wrap_socket(tls_server.socket, server_side=True)
    threading.Thread(target=tls_server.serve_forever, daemon=True).start()
    tls_port = tls_server.server_address[1]
    service = tmp_path / "fetcher"
    service.mkdir()
    (service / "f.mjs").write_text(
        "export async function get(input, ctx) {\n"
        "  const r = await ctx.fetch(input.url);\n"
        "  return { status: r.status, ok: r.ok, body: await r.json(), type: r.headers['content-type'] };\n"
        "}\n")
    (service / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "fetcher", "version": "1.0.0",
        "endpoints": [{"id": "get", "method": "query",
                       "handler": {"type": "function", "module": "f.mjs", "function": "get"},
                       "permissions": {"networkAccess": [f"127.0.0.1:{port}",
                                                         f"127.0.0.1:{tls_port}"]}}]}))
    d = Daemon([service], copy=False)
    try:
        r = result(d.call("get", {"url": f"http://127.0.0.1:{port}/hello?x=1"}))
        assert r == {"status": 200, "ok": True, "body": {"path": "/hello?x=1"}, "type": "application/json"}
        r = result(d.call("get", {"url": f"http://127.0.0.1:{port}/old/page"}))
        assert r["body"] == {"path": "/hello?from=old"}, r
        e = error(d.call("get", {"url": f"http://127.0.0.1:{port + 1}/"}))
        assert e["code"] == -32001
        # https goes through a CONNECT tunnel, and the certificate is verified.
        e = error(d.call("get", {"url": f"https://127.0.0.1:{tls_port}/"}))
        assert e["code"] == -32003
        assert "TLS handshake" in e["message"] and "certificate verify failed" in e["message"], e
    finally:
        d.stop()
        d.cleanup()
        server.shutdown()
        tls_server.shutdown()


# -- ctx.fetch: redirects and time limits (docs/protocol.md, "Function handlers") --------------

class EchoServer:
    """A plain HTTP server on 127.0.0.1 that records every request and answers by path:
    `/echo` with the request as JSON, `/redirect?status=N&to=URL` with that redirect, `/stall`
    with a head and then nothing until the test ends."""

    def __init__(self, tls=None):
        import http.server
        import threading

        self.requests = []
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_any(self):
                from urllib.parse import parse_qs, urlsplit
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                path = urlsplit(self.path)
                server.requests.append({"method": self.command, "path": path.path, "body": body,
                                        "headers": {k.lower(): v for k, v in self.headers.items()}})
                if path.path == "/redirect":
                    query = parse_qs(path.query)
                    self.send_response(int(query["status"][0]))
                    self.send_header("Location", query["to"][0])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif path.path == "/stall":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.flush()
                    server.release.wait(60)
                    self.close_connection = True
                else:
                    out = json.dumps(server.requests[-1]).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            import ssl
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.origin = ("https" if tls else "http") + f"://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def redirect(self, status, to):
        from urllib.parse import quote
        return f"{self.origin}/redirect?status={status}&to={quote(to, safe='')}"

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


FETCH_HANDLER = (
    "export async function go(input, ctx) {\n"
    "  try {\n"
    "    const r = await ctx.fetch(input.url, input.init);\n"
    "    return { status: r.status, url: r.url, location: r.headers.location ?? null,\n"
    "             seen: r.status === 200 ? await r.json() : null };\n"
    "  } catch (e) {\n"
    "    return { error: e.name + ': ' + e.message };\n"
    "  }\n"
    "}\n")


def fetcher_service(tmp_path, hosts, max_execution_time=None):
    service = tmp_path / "fetcher"
    service.mkdir()
    (service / "f.mjs").write_text(FETCH_HANDLER)
    permissions = {"networkAccess": hosts}
    if max_execution_time:
        permissions["maxExecutionTime"] = max_execution_time
    (service / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "fetcher", "version": "1.0.0",
        "endpoints": [{"id": "go", "method": "query",
                       "handler": {"type": "function", "module": "f.mjs", "function": "go"},
                       "permissions": permissions}]}))
    return service


CREDENTIALS = {"Authorization": "Bearer secret-token", "Cookie": "session=secret-cookie",
               "X-Api-Key": "not-a-credential-to-fetch"}


def test_fetch_redirects_follow_the_fetch_standard(tmp_path):
    # Two servers on two ports of 127.0.0.1: two origins.
    a, b = EchoServer(), EchoServer()
    d = Daemon([fetcher_service(tmp_path, [f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"])], copy=False)

    def go(url, **init):
        return result(d.call("go", {"url": url, "init": init}))

    try:
        # To another origin: the credentials stay behind (the Fetch standard's Authorization, and
        # Cookie); another header goes along, as in the standard.
        r = go(a.redirect(302, f"{b.origin}/echo"), headers=CREDENTIALS)
        assert r["status"] == 200 and r["url"] == f"{b.origin}/echo", r
        headers = r["seen"]["headers"]
        assert "authorization" not in headers and "cookie" not in headers, headers
        assert headers["x-api-key"] == "not-a-credential-to-fetch"
        assert a.requests[-1]["headers"]["authorization"] == "Bearer secret-token"
        # Within the origin they go along.
        r = go(a.redirect(301, f"{a.origin}/echo"), headers=CREDENTIALS)
        assert r["seen"]["headers"]["authorization"] == "Bearer secret-token"
        assert r["seen"]["headers"]["cookie"] == "session=secret-cookie"
        # ... and once dropped they stay dropped, even back on the first origin.
        r = go(a.redirect(302, b.redirect(302, f"{a.origin}/echo")), headers=CREDENTIALS)
        assert "authorization" not in r["seen"]["headers"], r
        # 303 after POST: a GET without the body or the body's headers.
        body_headers = {"Content-Type": "application/json", "Content-Language": "en",
                        "Authorization": "Bearer secret-token"}
        r = go(a.redirect(303, f"{b.origin}/echo"), method="POST", body='{"x": 1}', headers=body_headers)
        seen = r["seen"]
        assert seen["method"] == "GET" and seen["body"] == "", seen
        assert not {"content-type", "content-language", "content-length", "authorization"} & set(seen["headers"])
        # 302 after POST too; but 302 after PUT and 307 after POST keep the method and the body.
        assert go(a.redirect(302, f"{a.origin}/echo"), method="post", body="x")["seen"]["method"] == "GET"
        seen = go(a.redirect(302, f"{a.origin}/echo"), method="PUT", body="x", headers=body_headers)["seen"]
        assert (seen["method"], seen["body"], seen["headers"]["content-type"]) == ("PUT", "x", "application/json")
        seen = go(a.redirect(307, f"{b.origin}/echo"), method="POST", body="x", headers=body_headers)["seen"]
        assert (seen["method"], seen["body"]) == ("POST", "x") and "authorization" not in seen["headers"]
        # redirect: "manual" answers with the redirect itself, "error" fails, others are refused.
        before = len(b.requests)
        r = go(a.redirect(302, f"{b.origin}/echo"), redirect="manual")
        assert (r["status"], r["location"]) == (302, f"{b.origin}/echo"), r
        assert r["url"] == a.redirect(302, f"{b.origin}/echo")
        r = go(a.redirect(302, f"{b.origin}/echo"), redirect="error")
        assert r["error"].startswith("TypeError: ctx.fetch: the response from " + a.origin + " is a redirect (302"), r
        assert len(b.requests) == before
        r = go(f"{a.origin}/echo", redirect="sideways")
        assert r["error"] == 'TypeError: ctx.fetch: redirect must be "follow", "error" or "manual"', r
        # A header that would split the request is refused before anything is sent.
        before = len(a.requests)
        r = go(f"{a.origin}/echo", headers={"X-A": "a\r\nAuthorization: forged"})
        assert "contains CR, LF or NUL" in r["error"], r
        assert len(a.requests) == before
    finally:
        d.stop()
        d.cleanup()
        a.close()
        b.close()


def test_a_fetch_whose_response_stalls_fails_and_the_call_answers(tmp_path):
    server = EchoServer()
    # 3 s for the call: ctx.fetch gives up a fifth of it early.
    d = Daemon([fetcher_service(tmp_path, [f"127.0.0.1:{server.port}"], max_execution_time=3000)], copy=False)
    try:
        r = result(d.call("go", {"url": f"{server.origin}/stall"}))
        assert r["error"].startswith(f"TypeError: ctx.fetch: the response from {server.origin} stopped for "), r
        assert "the call's time limit is near" in r["error"], r
        # The worker was not stopped by its watchdog: it answers the next call.
        r = result(d.call("go", {"url": f"{server.origin}/echo"}))
        assert r["status"] == 200, r
    finally:
        d.stop()
        d.cleanup()
        server.close()


class DirectWorker:
    """hearth-js-worker driven through its frames (docs/protocol.md, "JS worker protocol"),
    outside the daemon and its jail, so that it can be given what a jailed worker cannot: a test
    CA through SSL_CERT_FILE, and direct connections (`network: true`, no egress proxy)."""

    def __init__(self, tmp_path, env):
        import struct
        self.struct = struct
        binary = Path(hearth_bin()).parent / "hearth-js-worker"
        self.stderr = open(tmp_path / "worker.stderr", "wb")
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=tmp_path)
        self.next_id = 0
        self.send({"t": "init", "service": "direct", "serviceDir": str(tmp_path), "network": True,
                   "subscriptions": []})
        assert self.read()["t"] == "ready"

    def send(self, message):
        data = json.dumps(message).encode()
        self.proc.stdin.write(self.struct.pack(">I", len(data)) + data)
        self.proc.stdin.flush()

    def read(self):
        head = self.proc.stdout.read(4)
        assert len(head) == 4, "the worker ended"
        return json.loads(self.proc.stdout.read(self.struct.unpack(">I", head)[0]))

    def run(self, source, globals, timeout_ms=10000):
        self.next_id += 1
        self.send({"t": "eval", "id": self.next_id, "source": source, "filename": "t.js",
                   "globals": globals, "timeoutMs": timeout_ms, "io": True})
        while True:
            message = self.read()
            if message["t"] in ("result", "error") and message["id"] == self.next_id:
                return message

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)
        self.stderr.close()


def test_fetch_refuses_https_to_http_and_drops_proxy_credentials(tmp_path):
    from a2s_servers import make_ca
    ca, cert, key = make_ca(tmp_path / "tls")
    secure, plain, other = EchoServer(tls=(cert, key)), EchoServer(), EchoServer()
    worker = DirectWorker(tmp_path, dict(os.environ, SSL_CERT_FILE=str(ca)))
    fetch = "const r = await ctx.fetch(url, init); return { status: r.status, url: r.url, seen: await r.json() };"
    try:
        # The test CA works: https to https is followed.
        r = worker.run(fetch, {"url": secure.redirect(302, f"{secure.origin}/echo"), "init": {}})
        assert r["t"] == "result" and r["value"]["url"] == f"{secure.origin}/echo", r
        # https to http is a network error, and nothing reaches the http server.
        r = worker.run(fetch, {"url": secure.redirect(302, f"{plain.origin}/echo"),
                               "init": {"headers": CREDENTIALS}})
        assert r["t"] == "error" and r["name"] == "TypeError", r
        assert r["message"] == (f"TypeError: ctx.fetch: refusing to follow a redirect from https to http ({plain.origin}): "
                                "the request would go on unencrypted"), r
        assert plain.requests == []
        # Without the egress proxy in between (which drops Proxy-Authorization itself), the
        # worker's own rule shows: no credential header crosses to another origin.
        credentials = dict(CREDENTIALS, **{"Proxy-Authorization": "Basic c2VjcmV0"})
        r = worker.run(fetch, {"url": plain.redirect(307, f"{other.origin}/echo"),
                               "init": {"headers": credentials}})
        assert r["t"] == "result", r
        headers = r["value"]["seen"]["headers"]
        assert not {"authorization", "cookie", "proxy-authorization"} & set(headers), headers
        assert plain.requests[-1]["headers"]["proxy-authorization"] == "Basic c2VjcmV0"
    finally:
        worker.close()
        for s in (secure, plain, other):
            s.close()
