"""Local security defaults (lavs-spec-v1 section 6; DNS-rebinding defence): token, Host, Origin on
HTTP and on the WebSocket upgrade alike."""
import json
import os
import stat

import pytest

from hearthtest import WsClient, WsError, raw_http

CALL = {"jsonrpc": "2.0", "id": 1, "method": "lavs/services"}


def test_binds_loopback_and_token_file_is_private(examples):
    assert examples.ready["url"].startswith("http://127.0.0.1:")
    mode = stat.S_IMODE(os.stat(examples.token_file).st_mode)
    assert mode == 0o600
    assert len(examples.token) >= 32


def test_missing_or_wrong_token_is_401(examples):
    with examples.http() as c:
        status, headers, body = c.post(CALL, token=False)
        assert status == 401
        assert "Bearer" in headers.get("WWW-Authenticate", "")
        status, _, _ = c.post(CALL, token=False, headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, _, _ = c.post(CALL, token=False, headers={"Authorization": "Basic " + examples.token})
        assert status == 401
        status, _, body = c.post(CALL)
        assert status == 200 and "services" in json.loads(body)["result"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost.evil.example:{port}"])
def test_foreign_host_is_403(examples, host):
    with examples.http() as c:
        status, _, body = c.post(CALL, headers={"Host": host.format(port=examples.port)})
        assert status == 403, body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}"])
def test_local_host_names_are_accepted(examples, host):
    with examples.http() as c:
        status, _, _ = c.post(CALL, headers={"Host": host.format(port=examples.port)})
        assert status == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost:{port}"])
def test_foreign_origin_is_403(examples, origin):
    with examples.http() as c:
        status, _, _ = c.post(CALL, headers={"Origin": origin.format(port=examples.port)})
        assert status == 403


def test_same_origin_is_allowed(examples):
    with examples.http() as c:
        status, _, _ = c.post(CALL, headers={"Origin": f"http://localhost:{examples.port}"})
        assert status == 200


def test_missing_host_header_is_refused(examples):
    req = (f"POST /rpc HTTP/1.0\r\nAuthorization: Bearer {examples.token}\r\n"
           f"Content-Type: application/json\r\nContent-Length: {len(json.dumps(CALL))}\r\n\r\n{json.dumps(CALL)}")
    status, _ = raw_http(examples.port, req.encode())
    assert status in (400, 403)


def test_websocket_upgrade_checks_token_host_and_origin(examples):
    with pytest.raises(WsError, match="401"):
        WsClient("127.0.0.1", examples.port, token=None)
    with pytest.raises(WsError, match="401"):
        WsClient("127.0.0.1", examples.port, token="wrong")
    with pytest.raises(WsError, match="403"):
        WsClient("127.0.0.1", examples.port, token=examples.token, headers={"Origin": "http://evil.example"})
    # The Host header check applies to the upgrade too.
    with pytest.raises(WsError, match="403"):
        raise_if_upgrade_with_host(examples, "evil.example")
    with WsClient("127.0.0.1", examples.port, token=examples.token, query_token=True) as ws:
        r = ws.request("lavs/services")
        assert "services" in r["result"]


def raise_if_upgrade_with_host(examples, host):
    req = (f"GET /ws?token={examples.token} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    status, _ = raw_http(examples.port, req.encode())
    if status != 101:
        raise WsError(f"handshake refused: HTTP/1.1 {status}")


def test_allowed_origin_gets_cors(daemon_factory):
    from hearthtest import EXAMPLES
    d = daemon_factory([EXAMPLES / "notes"], extra_args=["--allow-origin", "http://localhost:3000"])
    with d.http() as c:
        status, headers, _ = c.request("OPTIONS", "/rpc", headers={
            "Host": f"127.0.0.1:{d.port}", "Origin": "http://localhost:3000",
            "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"})
        assert status == 204
        assert headers.get("Access-Control-Allow-Origin") == "http://localhost:3000"
        status, headers, _ = c.post(CALL, headers={"Origin": "http://localhost:3000"})
        assert status == 200
        assert headers.get("Access-Control-Allow-Origin") == "http://localhost:3000"


def test_request_size_limit(daemon_factory):
    from hearthtest import EXAMPLES
    d = daemon_factory([EXAMPLES / "notes"], extra_args=["--max-request-bytes", "4096"])
    big = {"jsonrpc": "2.0", "id": 1, "method": "lavs/call",
           "params": {"endpoint": "saveNote", "input": {"NOTE": "x" * 10000}}}
    with d.http() as c:
        status, _, _ = c.post(big)
        assert status == 413
    with d.ws() as ws:
        ws.send(big)
        with pytest.raises(WsError, match="1009"):
            ws.recv()


def test_unknown_path_and_method(examples):
    with examples.http() as c:
        status, _, _ = c.request("GET", "/nope", headers={"Host": f"127.0.0.1:{examples.port}",
                                                          "Authorization": f"Bearer {examples.token}"})
        assert status == 404
        status, headers, _ = c.request("GET", "/rpc", headers={"Host": f"127.0.0.1:{examples.port}",
                                                               "Authorization": f"Bearer {examples.token}"})
        assert status == 405


def test_a_flood_of_idle_connections_cannot_keep_a_client_out(daemon_factory):
    """Thousands of connections that never send a byte, opened all the time: every call of a
    client with the token still gets through (the oldest idle connections are closed for it)."""
    import resource
    import socket
    import threading
    from hearthtest import EXAMPLES, result
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    d = daemon_factory([EXAMPLES / "notes"], extra_args=["--max-connections", "1000"])
    stop = threading.Event()
    opened = [0]

    def flood():
        idle = []
        while not stop.is_set():
            s = socket.socket()
            try:
                s.connect(("127.0.0.1", d.port))
                opened[0] += 1
                idle.append(s)
            except OSError:
                s.close()
            if len(idle) > 3000:  # a window of 3,000 open at once
                idle.pop(0).close()
        for s in idle:
            s.close()

    threads = [threading.Thread(target=flood) for _ in range(3)]
    try:
        for t in threads:
            t.start()
        while opened[0] < 3000:
            threading.Event().wait(0.01)
        failures = []
        for i in range(30):
            try:
                r = d.rpc("lavs/services")
                result(r)
            except Exception as e:  # a reset connection
                failures.append(f"{i}: {e!r}")
        assert failures == [], f"{len(failures)} of 30 calls failed during a flood of {opened[0]}"
    finally:
        stop.set()
        for t in threads:
            t.join()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
