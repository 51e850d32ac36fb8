"""Probe: fetch a URL through the daemon's proxy named by HTTP_PROXY (or HTTPS_PROXY).
Input {"url": "http://host:port/path", "mode": "absolute" | "connect"}.
absolute: `GET http://host:port/path` sent to the proxy; connect: `CONNECT host:port`, then a GET
through the tunnel. Output: "reached" (the target answered 200 through the proxy), "status" (the
proxy's answer), "body" (the start of the target's answer)."""
import json
import os
import socket
import sys
from urllib.parse import urlsplit


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return status, line, rest


def read_all(sock, rest):
    data = rest
    while len(data) < 65536:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def main(inp):
    url = inp["url"]
    mode = inp.get("mode", "absolute")
    proxy = next((os.environ[k] for k in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")
                  if os.environ.get(k)), None)
    if not proxy:
        return {"reached": False, "status": None, "detail": "no HTTP_PROXY in the environment"}
    p = urlsplit(proxy)
    t = urlsplit(url)
    hostport = f"{t.hostname}:{t.port or 80}"
    try:
        s = socket.create_connection((p.hostname, p.port or 80), timeout=5)
    except OSError as e:
        return {"reached": False, "status": None, "detail": f"connecting to the proxy {proxy}: {e}"}
    try:
        if mode == "connect":
            s.sendall(f"CONNECT {hostport} HTTP/1.1\r\nHost: {hostport}\r\n\r\n".encode())
            status, line, rest = read_head(s)
            if status != 200:
                return {"reached": False, "status": status, "detail": f"CONNECT {hostport}: {line}"}
            s.sendall(f"GET {t.path or '/'} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n"
                      .encode())
            inner, line, rest = read_head(s)
            body = read_all(s, rest)
            return {"reached": inner == 200, "status": status, "innerStatus": inner,
                    "detail": f"CONNECT {hostport}: 200, then {line}",
                    "body": body[:512].decode("utf-8", "replace")}
        s.sendall(f"GET {url} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n".encode())
        status, line, rest = read_head(s)
        body = read_all(s, rest)
        return {"reached": status == 200, "status": status, "detail": f"GET {url}: {line}",
                "body": body[:512].decode("utf-8", "replace")}
    except OSError as e:
        return {"reached": False, "status": None, "detail": f"{type(e).__name__}: {e}"}
    finally:
        s.close()


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
