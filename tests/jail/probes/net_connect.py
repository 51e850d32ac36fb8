"""Probe: a direct TCP connection. Input {"host": H, "port": P, "timeout": seconds}.
"escaped" means packets left the jail: connected, or an answer came back (refused, host
unreachable from a router), or the SYN went out and nothing answered (timeout: a route existed).
Contained: the socket is refused (EAFNOSUPPORT, EPERM, EACCES) or there is no route (ENETUNREACH)."""
import errno
import json
import socket
import sys

CONTAINED = {errno.EAFNOSUPPORT, errno.EPERM, errno.EACCES, errno.ENETUNREACH, errno.EADDRNOTAVAIL}


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    host, port = inp["host"], int(inp["port"])
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        return {"escaped": False, "detail": "socket(AF_INET): " + err(e)}
    s.settimeout(float(inp.get("timeout", 1.0)))
    try:
        s.connect((host, port))
        return {"escaped": True, "detail": f"connected to {host}:{port} from {s.getsockname()}"}
    except socket.timeout:
        return {"escaped": True, "detail": f"connect to {host}:{port} timed out: the SYN was sent"}
    except OSError as e:
        return {"escaped": e.errno not in CONTAINED, "detail": f"connect to {host}:{port}: " + err(e)}
    finally:
        s.close()


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
