"""Probe: read /proc/<pid>/<file> of another process (the daemon's environ or cmdline).
Input {"pid": P, "file": "environ" | "cmdline", "marker": M}. "escaped" means the file was read
and holds M (a value only the daemon's file has: a canary variable of its environment, its token
file path on its command line). The content itself is never returned."""
import errno
import json
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    pid, name, marker = int(inp["pid"]), inp["file"], inp["marker"].encode()
    path = f"/proc/{pid}/{name}"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return {"escaped": False, "detail": f"{path}: " + err(e)}
    if marker in data:
        return {"escaped": True, "detail": f"read {path} ({len(data)} bytes) and found the marker"}
    return {"escaped": False,
            "detail": f"read {path} ({len(data)} bytes) without the marker: pid {pid} is not the daemon here"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
