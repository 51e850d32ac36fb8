"""Probe: resolve a host name. Input {"name": N}. "escaped" means it resolved to an address."""
import json
import socket
import sys


def main(inp):
    name = inp["name"]
    try:
        infos = socket.getaddrinfo(name, 80, proto=socket.IPPROTO_TCP)
    except OSError as e:
        return {"escaped": False, "detail": f"{type(e).__name__}: {e}"}
    addrs = sorted({i[4][0] for i in infos})
    return {"escaped": True, "detail": f"{name} resolved", "addresses": addrs}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
