"""Local HTTPS services for the A2S integration tests, with a CA the test makes: an OAuth2 token
endpoint (client credentials and rotating refresh tokens that expire), a weather-like API that
echoes the Authorization header it got, an echo endpoint, a rate-limited endpoint, an endpoint for
each error case, and an API-key endpoint. Python's standard library and the openssl command only."""
import json
import secrets
import ssl
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def make_ca(directory):
    """A CA made for the test and a certificate for localhost / 127.0.0.1 signed by it.
    Returns (ca_cert, server_cert, server_key) paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = d / "ca.key", d / "ca.pem"
    key, csr, cert, ext = d / "server.key", d / "server.csr", d / "server.pem", d / "san.ext"

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(ca_key), "-out", str(ca_cert), "-days", "1", "-subj", "/CN=hearth test CA")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(key), "-out", str(csr), "-subj", "/CN=localhost")
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "1", "-extfile", str(ext))
    return ca_cert, cert, key


class FakeApi:
    """An HTTPS (or, with tls=False, plain HTTP) server on 127.0.0.1, port 0.

    Attributes: port, domain ("localhost:PORT"), ca_file, requests (every request: method, path,
    query, headers with lower-case names, body text), token_requests, refresh_requests,
    refused_times (when /v1/limited refused)."""

    def __init__(self, tls_dir, tls=True, client_id="client", client_secret="secret",
                 api_key="api-key", expires_in=3600, token_delay=0.0, limit=1000, window=1.0):
        self.tls_dir = Path(tls_dir)
        self.tls = tls
        self.client_id = client_id
        self.client_secret = client_secret
        self.api_key = api_key
        self.expires_in = expires_in
        self.token_delay = token_delay
        self.limit = limit
        self.window = window
        self.lock = threading.Lock()
        self.requests = []
        self.token_requests = 0
        self.refresh_requests = 0
        self.refused_times = []
        self._times = []  # (path, time)
        self._tokens = {}  # access token -> expiry time
        self._issued = []
        self._refresh = None  # the one valid refresh token
        self._window_start = 0.0
        self._window_count = 0
        self.ca_file = None

    # -- state the tests read --------------------------------------------------------------
    def issued_tokens(self):
        with self.lock:
            return list(self._issued)

    def revoke_all(self):
        """Every access and refresh token stops working (the server forgot them)."""
        with self.lock:
            self._tokens.clear()
            self._refresh = None

    def request_times(self, path):
        with self.lock:
            return [t for p, t in self._times if p == path]

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self, status, body, headers=()):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                path, _, query = self.path.partition("?")
                record = {"method": self.command, "path": path, "query": query,
                          "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                with api.lock:
                    api.requests.append(record)
                    api._times.append((path, time.time()))
                try:
                    api._route(self, record)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if self.tls:
            ca, cert, key = make_ca(self.tls_dir)
            self.ca_file = ca
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(cert, key)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.domain = f"localhost:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # -- endpoints -------------------------------------------------------------------------
    def _issue(self):
        token = "at-" + secrets.token_hex(16)
        refresh = "rt-" + secrets.token_hex(16)
        self._tokens[token] = time.time() + self.expires_in
        self._issued += [token, refresh]
        self._refresh = refresh
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in,
                "refresh_token": refresh}

    def _valid(self, headers):
        auth = headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return False
        with self.lock:
            expiry = self._tokens.get(auth[7:])
        return expiry is not None and expiry > time.time()

    def _route(self, h, r):
        path, query = r["path"], urllib.parse.parse_qs(r["query"], keep_blank_values=True)
        if path == "/oauth/token" and r["method"] == "POST":
            form = urllib.parse.parse_qs(r["body"], keep_blank_values=True)
            grant = form.get("grant_type", [""])[0]
            if self.token_delay:
                time.sleep(self.token_delay)
            with self.lock:
                if grant == "client_credentials":
                    self.token_requests += 1
                    if form.get("client_id", [""])[0] != self.client_id or \
                            form.get("client_secret", [""])[0] != self.client_secret:
                        return h._answer(401, {"error": "invalid_client"})
                    return h._answer(200, self._issue())
                if grant == "refresh_token":
                    self.refresh_requests += 1
                    if self._refresh is None or form.get("refresh_token", [""])[0] != self._refresh:
                        return h._answer(400, {"error": "invalid_grant"})
                    return h._answer(200, self._issue())
            return h._answer(400, {"error": "unsupported_grant_type"})
        if path == "/v1/forecast":
            if not self._valid(r["headers"]):
                return h._answer(401, {"error": "token expired"})
            date = query.get("date", [""])[0]
            return h._answer(200, {"date": date, "summary": "Light rain", "high_c": 12, "low_c": 6,
                                   "lat": query.get("lat", [None])[0],
                                   "echo": {"authorization": r["headers"].get("authorization")}})
        if path.startswith("/v1/echo"):
            pairs = urllib.parse.parse_qsl(r["query"], keep_blank_values=True)
            return h._answer(200, {"method": r["method"], "path": path, "query": r["query"],
                                   "query_pairs": pairs, "headers": r["headers"], "body": r["body"]})
        if path == "/v1/apikey":
            key = r["headers"].get("x-api-key")
            if key != self.api_key:
                return h._answer(401, {"error": "bad api key"})
            return h._answer(200, {"ok": True, "echo": {"x-api-key": key}})
        if path == "/v1/limited":
            with self.lock:
                now = time.time()
                if now - self._window_start >= self.window:
                    self._window_start, self._window_count = now, 0
                self._window_count += 1
                allowed = self._window_count <= self.limit
                if not allowed:
                    self.refused_times.append(now)
            if not allowed:
                return h._answer(429, {"error": "rate limited"}, [("Retry-After", "1")])
            return h._answer(200, {"ok": True})
        if path.startswith("/v1/fail/"):
            kind = path[len("/v1/fail/"):]
            if kind == "bad-input":
                return h._answer(400, {"error": "Invalid input: date"})
            if kind == "auth":
                return h._answer(401, {"error": "token expired"})
            if kind == "missing":
                return h._answer(404, {"error": "Not found"})
            if kind == "busy":
                return h._answer(503, {"error": "Service temporarily overloaded"}, [("Retry-After", "2")])
            if kind == "quota":
                return h._answer(429, {"error": "Quota exceeded"})
            if kind == "slow":
                seconds = float(query.get("sleep", ["10"])[0] or 10)
                time.sleep(seconds)
                return h._answer(200, {"slept": seconds})
            if kind == "huge":
                return h._answer(200, b'"' + b"x" * (20 << 20) + b'"')
        return h._answer(404, {"error": "Not found"})


class RegistryExamples:
    """The registry examples (examples/registry) against their local servers on free ports: the
    definitions rewritten to those ports and sealed into `registry`, the demo credentials in the
    vault of `state_dir`. `local_args` are the daemon's --local-domain options; `rewrite(text)`
    points another file that names the example ports (a manifest) at these."""

    EXAMPLE_PORTS = {"weather": "8741", "flights": "8742", "hotels": "8743"}

    def __init__(self, root, tmp_path, hearth):
        import socket
        self.ports = []
        for _ in range(3):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.ports.append(s.getsockname()[1])
        self.port_of = dict(zip(self.EXAMPLE_PORTS, self.ports))
        self.servers = subprocess.Popen(
            ["/usr/bin/python3", str(root / "examples/registry/servers/example_services.py"),
             "--ports", ",".join(map(str, self.ports))], stderr=subprocess.PIPE)
        self.servers.stderr.readline()  # it says it listens
        self.registry = tmp_path / "registry"
        self.registry.mkdir()
        for name in self.EXAMPLE_PORTS:
            path = self.registry / f"{name}.yaml"
            path.write_text(self.rewrite((root / "examples/registry" / f"{name}.yaml").read_text()))
            subprocess.run([hearth, "registry", "seal", str(path)], check=True, capture_output=True)
        self.state_dir = tmp_path / "state"
        creds = [("weather", "API_KEY", "demo-weather-key"), ("flights", "CLIENT_ID", "demo-client"),
                 ("flights", "CLIENT_SECRET", "demo-secret"), ("hotels", "API_KEY", "demo-hotel-key")]
        for service, name, value in creds:
            subprocess.run([hearth, "vault", "set", "--state-dir", str(self.state_dir),
                            f"localhost:{self.port_of[service]}", name], input=value, text=True,
                           check=True, capture_output=True)
        self.local_args = [a for p in self.ports for a in ("--local-domain", f"localhost:{p}")]

    def rewrite(self, text):
        for name, old in self.EXAMPLE_PORTS.items():
            text = text.replace("localhost:" + old, f"localhost:{self.port_of[name]}")
        return text

    def stop(self):
        self.servers.terminate()
        self.servers.wait(10)
