"""Probe: kill(pid, 0) on the daemon. Input {"pid": P, "marker": M}. "escaped" means the signal
could be sent to the daemon. When the jail numbers processes on its own, P may name one of the
jail's processes: a success then counts only if /proc/P/cmdline holds M (or cannot be read)."""
import errno
import json
import os
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    pid = int(inp["pid"])
    marker = inp.get("marker", "").encode()
    try:
        os.kill(pid, 0)
    except OSError as e:
        return {"escaped": False, "detail": f"kill({pid}, 0): " + err(e)}
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return {"escaped": True, "detail": f"kill({pid}, 0) succeeded (cmdline unreadable)"}
    if marker and marker not in cmdline:
        return {"escaped": False,
                "detail": f"kill({pid}, 0) succeeded on a process of the jail itself, not the daemon"}
    return {"escaped": True, "detail": f"kill({pid}, 0) succeeded on the daemon"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
