"""`http` handlers end to end: the real daemon calling local HTTPS servers (Python http.server +
ssl) whose certificates come from a CA made here, trusted through SSL_CERT_FILE (the system CAs
plus the test CA); a second server with a self-signed certificate is not trusted."""
import json
import os
import ssl
import subprocess
import tempfile
import threading
import time
import shutil
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hearthtest import Daemon, error, result

SYSTEM_CAS = Path("/etc/ssl/certs/ca-certificates.crt")


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=hearth integration test CA", cwd=d)
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost", cwd=d)
    (d / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                  "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", "server.pem", "-extfile", "server.ext", cwd=d)
    openssl("req", "-x509", *ec, "-keyout", "self.key", "-out", "self.pem", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", cwd=d)
    bundle = d / "bundle.pem"
    system = SYSTEM_CAS.read_text() if SYSTEM_CAS.exists() else ""
    bundle.write_text(system + "\n" + (d / "ca.pem").read_text())
    return bundle


class Recorder(BaseHTTPRequestHandler):
    """Answers by path; every request is recorded in the server's `seen` list."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.server.seen.append({"method": self.command, "path": self.path, "body": body,
                                 "headers": {k.lower(): v for k, v in self.headers.items()}})
        path = self.path.split("?")[0]
        if path == "/missing":
            return self.reply(404, "no such thing", "text/plain")
        if path == "/text":
            return self.reply(200, "hello text", "text/plain; charset=utf-8")
        if path == "/slow":
            time.sleep(3)
            return self.reply(200, "late", "text/plain")
        echo = {"method": self.command, "path": self.path,
                "body": json.loads(body) if body else None,
                "contentType": self.headers.get("Content-Type"),
                "apiKey": self.headers.get("X-Api-Key")}
        return self.reply(200, json.dumps(echo), "application/json")

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def serve_tls(cert, key):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.daemon_threads = True
    server.seen = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def manifest(port, untrusted_port):
    base = f"https://localhost:{port}"

    def http(method, url, **extra):
        return {"type": "http", "method": method, "url": url, **extra}

    return {
        "lavs": "1.0", "name": "web", "version": "1.0.0",
        "permissions": {"networkAccess": [f"localhost:{port}"]},
        "endpoints": [
            {"id": "search", "method": "query", "handler": http("GET", base + "/search?fixed=1")},
            {"id": "create", "method": "mutation",
             "handler": http("post", base + "/items", headers={"X-Api-Key": "k"})},
            {"id": "user", "method": "query", "handler": http("GET", base + "/users/{id}"),
             "schema": {"input": {"type": "object", "required": ["id"],
                                  "properties": {"id": {"type": "string"}}}}},
            {"id": "missing", "method": "query", "handler": http("GET", base + "/missing")},
            {"id": "text", "method": "query", "handler": http("GET", base + "/text")},
            {"id": "slow", "method": "query", "handler": http("GET", base + "/slow", timeout=300)},
            # The same server by address: the list names only localhost:<port>.
            {"id": "notAllowed", "method": "query",
             "handler": http("GET", f"https://127.0.0.1:{port}/never")},
            {"id": "untrusted", "method": "query",
             "handler": http("GET", f"https://localhost:{untrusted_port}/untrusted"),
             "permissions": {"networkAccess": ["localhost"]}},
        ],
    }


@pytest.fixture(scope="module")
def setup():
    tmp = Path(tempfile.mkdtemp(prefix="hearth-http-it-"))
    bundle = make_certificates(tmp)
    trusted = serve_tls(str(tmp / "server.pem"), str(tmp / "server.key"))
    untrusted = serve_tls(str(tmp / "self.pem"), str(tmp / "self.key"))
    service = tmp / "web"
    service.mkdir()
    (service / "lavs.json").write_text(json.dumps(
        manifest(trusted.server_address[1], untrusted.server_address[1]), indent=2))
    env = dict(os.environ, SSL_CERT_FILE=str(bundle))
    daemon = Daemon([service], env=env)
    yield daemon, trusted, untrusted
    assert daemon.stop() == 0  # a clean exit: the HTTP client shut down with the host
    daemon.cleanup()
    trusted.shutdown()
    untrusted.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)




def test_get_sends_the_input_as_query_parameters(setup):
    daemon, server, _ = setup
    r = result(daemon.call("search", {"q": "a b/c", "n": 2, "tags": ["x", "y"]}))
    assert r["method"] == "GET"
    assert r["path"] == "/search?fixed=1&q=a%20b%2Fc&n=2&tags=x&tags=y"
    seen = [s for s in server.seen if s["path"].startswith("/search")][-1]
    assert seen["headers"]["user-agent"].startswith("hearth/")
    assert seen["headers"]["accept"] == "application/json, */*;q=0.5"


def test_post_sends_the_input_as_a_json_body(setup):
    daemon, _, _ = setup
    r = result(daemon.call("create", {"name": "x", "tags": [1, 2], "nested": {"a": None}}))
    assert r == {"method": "POST", "path": "/items", "body": {"name": "x", "tags": [1, 2], "nested": {"a": None}},
                 "contentType": "application/json", "apiKey": "k"}


def test_path_placeholder_is_filled_and_encoded(setup):
    daemon, _, _ = setup
    r = result(daemon.call("user", {"id": "a/b c"}))
    assert r["path"] == "/users/a%2Fb%20c"
    assert r["body"] is None
    e = error(daemon.call("user", {"id": ".."}))
    assert e["code"] == -32602


def test_non_2xx_is_a_handler_error_with_the_status(setup):
    daemon, server, _ = setup
    e = error(daemon.call("missing"))
    assert e["code"] == -32003
    assert e["message"] == f"HTTP 404 from GET https://localhost:{server.server_address[1]}/missing"
    assert e["data"] == {"status": 404, "body": "no such thing", "contentType": "text/plain"}


def test_text_response_is_a_string(setup):
    daemon, _, _ = setup
    assert result(daemon.call("text")) == "hello text"


def test_host_not_allowed_is_refused_before_any_request(setup):
    daemon, server, _ = setup
    e = error(daemon.call("notAllowed"))
    assert e["code"] == -32001
    assert e["message"] == f"networkAccess does not allow 127.0.0.1:{server.server_address[1]}"
    assert not [s for s in server.seen if s["path"] == "/never"]


def test_untrusted_certificate_is_refused(setup):
    daemon, _, untrusted = setup
    e = error(daemon.call("untrusted"))
    assert e["code"] == -32003
    assert "certificate verify failed" in e["message"], e
    assert not untrusted.seen


def test_slow_server_times_out(setup):
    daemon, _, _ = setup
    start = time.monotonic()
    e = error(daemon.call("slow"))
    took = time.monotonic() - start
    assert e["code"] == -32002
    assert e["message"] == "Handler timed out after 300 ms"
    assert took < 2.5
    # The daemon still answers (the slow request was dropped, not waited for).
    assert result(daemon.call("text")) == "hello text"
