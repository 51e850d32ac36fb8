"""Helpers for hearth's integration tests: start the real daemon on port 0 and talk to it over
real sockets (HTTP/1.1 with keep-alive, and WebSocket per RFC 6455, written here from the RFC so
that the server is checked against an independent client)."""
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def hearth_bin():
    binary_dir = os.environ.get("HEARTH_BINARY_DIR")
    candidates = [Path(binary_dir) / "bin" / "hearth"] if binary_dir else []
    candidates += [ROOT / "build" / "release" / "bin" / "hearth", ROOT / "build" / "dev" / "bin" / "hearth"]
    for c in candidates:
        if c.exists():
            return str(c)
    raise RuntimeError("hearth binary not found; build first (make build)")


def result(r):
    """The result of a JSON-RPC response, failing the test (with the response) on an error."""
    assert "error" not in r and "result" in r, r
    return r["result"]


def error(r):
    """The error of a JSON-RPC response, failing the test (with the response) on a result."""
    assert "error" in r, r
    return r["error"]


class Daemon:
    """`hearth serve` on a free port, with its own state dir; stopped with SIGTERM."""

    def __init__(self, paths, extra_args=(), copy=True, env=None, state_dir=None):
        self.tmp = Path(tempfile.mkdtemp(prefix="hearth-it-"))
        self.paths = []
        for p in paths:
            p = Path(p)
            if copy:
                dest = self.tmp / "services" / p.name
                shutil.copytree(p, dest, ignore=shutil.ignore_patterns("todos.json", "contacts.db*", ".todos.lock"))
                self.paths.append(dest)
            else:
                self.paths.append(p)
        self.ready_file = self.tmp / "ready.json"
        self.state_dir = Path(state_dir) if state_dir else self.tmp / "state"
        self.token_file = self.tmp / "token"
        args = [hearth_bin(), "serve", *map(str, self.paths), "--port", "0",
                "--ready-file", str(self.ready_file), "--state-dir", str(self.state_dir),
                "--token-file", str(self.token_file), "--log-level", "warn", *extra_args]
        self.stderr_path = self.tmp / "stderr.log"
        self.stderr = open(self.stderr_path, "wb")
        # env: the daemon's environment (default: this process's), e.g. SSL_CERT_FILE for a test CA.
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.stderr, env=env)
        deadline = time.time() + 20
        while not self.ready_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError("hearth exited: " + self.stderr_path.read_text())
            if time.time() > deadline:
                raise RuntimeError("hearth did not become ready")
            time.sleep(0.02)
        self.ready = json.loads(self.ready_file.read_text())
        self.port = self.ready["port"]
        self.token = Path(self.ready["tokenFile"]).read_text().strip()

    def service_dir(self, name):
        for p in self.paths:
            if p.name == name:
                return p
        raise KeyError(name)

    def stop(self, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        self.stderr.close()
        return self.proc.returncode

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # `with Daemon(...) as d:` stops it and removes its files at the end (a module fixture's
    # whole body: `with Daemon(...) as d: yield d`).
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.stop()
        finally:
            self.cleanup()

    # -- HTTP -----------------------------------------------------------------------------
    def http(self):
        return HttpClient("127.0.0.1", self.port, self.token)

    def rpc(self, method, params=None, id=1):
        with self.http() as c:
            return c.rpc(method, params, id)

    def call(self, endpoint, input=None, service=None):
        params = {"endpoint": endpoint}
        if input is not None:
            params["input"] = input
        if service is not None:
            params["service"] = service
        return self.rpc("lavs/call", params)

    def ws(self, **kw):
        return WsClient("127.0.0.1", self.port, token=self.token, **kw)


class HttpClient:
    def __init__(self, host, port, token):
        self.conn = http.client.HTTPConnection(host, port, timeout=30)
        self.token = token
        self.host = f"{host}:{port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()

    def post(self, body, headers=None, path="/rpc", token=True):
        h = {"Content-Type": "application/json", "Host": self.host}
        if token:
            h["Authorization"] = f"Bearer {self.token}"
        h.update(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.conn.request("POST", path, body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), data

    def request(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        r = self.conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()

    def rpc(self, method, params=None, id=1):
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        status, _, data = self.post(msg)
        assert status == 200, (status, data)
        return json.loads(data)


class WsError(Exception):
    pass


class WsClient:
    """A WebSocket client per RFC 6455 (text frames, masking, ping/pong, close)."""

    def __init__(self, host, port, token=None, path="/ws", headers=None, query_token=False, timeout=20):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        target = path + (f"?token={token}" if (token and query_token) else "")
        lines = [f"GET {target} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if token and not query_token:
            lines.append(f"Authorization: Bearer {token}")
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise WsError("connection closed during handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status_line = head.split(b"\r\n")[0].decode()
        self.status = int(status_line.split()[1])
        if self.status != 101:
            raise WsError(f"handshake refused: {status_line}")
        self.pending = []
        self.closed = False

    def send_text(self, text):
        self._send_frame(0x1, text.encode())

    def send(self, obj):
        self.send_text(json.dumps(obj))

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise WsError("connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_frame(self):
        b0, b1 = self._read(2)
        self.fin = bool(b0 & 0x80)
        opcode = b0 & 0x0F
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        if b1 & 0x80:
            raise WsError("server frames must not be masked")
        return opcode, self._read(n)

    def recv(self, timeout=20, raw=False):
        """The next JSON message (pings answered, close raises); its text as sent when raw."""
        self.sock.settimeout(timeout)
        text = b""
        while True:
            opcode, payload = self.recv_frame()
            if opcode == 0x9:
                self._send_frame(0xA, payload)
            elif opcode == 0x8:
                self.closed = True
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise WsError(f"closed by server: {code}")
            elif opcode in (0x1, 0x0):
                text += payload
                if self.fin:  # a message may come in several frames
                    return text.decode() if raw else json.loads(text)

    def request(self, method, params=None, id=1):
        """Sends a request; returns its response, keeping notifications that arrive meanwhile."""
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            m = self.recv()
            if isinstance(m, dict) and m.get("id") == id and ("result" in m or "error" in m):
                return m
            self.pending.append(m)

    def notification(self, method=None, timeout=20):
        """The next server notification (optionally of one method)."""
        deadline = time.time() + timeout
        while True:
            for i, m in enumerate(self.pending):
                if "id" not in m and (method is None or m.get("method") == method):
                    return self.pending.pop(i)
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no {method or 'notification'} within {timeout}s")
            self.pending.append(self.recv(timeout=left))

    def close(self):
        if not self.closed:
            try:
                self._send_frame(0x8, struct.pack("!H", 1000))
            except OSError:
                pass
        self.sock.close()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def raw_http(port, request_bytes, timeout=10):
    """Sends raw bytes, returns (status, body) of the first response."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(request_bytes)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head = data.split(b"\r\n", 1)[0].decode()
    return int(head.split()[1]), data


def sanitized(pid):
    """Whether the process runs under AddressSanitizer (the dev build): its memory figures then
    include the sanitizer's shadow and its quarantine of freed blocks (256 MiB by default)."""
    return "libasan" in Path(f"/proc/{pid}/maps").read_text()


def wait_for(predicate, timeout=10):
    """Polls `predicate` until it holds or `timeout` seconds pass; returns its last answer."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def wait_run_ended(daemon, run_id, timeout=60):
    """agent/read of the run until it is no longer running; its status."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        status = result(daemon.rpc("agent/read", {"runId": run_id}))
        if status["status"] != "running":
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} still running after {timeout}s")
