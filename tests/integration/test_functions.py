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
