"""Probe: one file-system operation on the service folder's files, to move excluded content out
from under its negated fileAccess pattern. Input {"op": "rename" | "link" | "symlink" | "unlink" |
"rmdir" | "mkdir" | "exchange", "src": S, "dst": D}. "escaped" means the operation succeeded
(for the attempts on excluded paths that is the escape; the controls expect it)."""
import ctypes
import errno
import json
import os
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2
SYS_RENAMEAT2 = 316  # x86_64


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def exchange(src, dst):
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.syscall(SYS_RENAMEAT2, AT_FDCWD, src.encode(), AT_FDCWD, dst.encode(), RENAME_EXCHANGE)
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def main(inp):
    op, src, dst = inp["op"], inp.get("src"), inp.get("dst")
    try:
        if op == "rename":
            os.rename(src, dst)
        elif op == "link":
            os.link(src, dst)
        elif op == "symlink":
            os.symlink(src, dst)
        elif op == "unlink":
            os.unlink(src)
        elif op == "rmdir":
            os.rmdir(src)
        elif op == "mkdir":
            os.makedirs(src, exist_ok=True)
        elif op == "exchange":
            exchange(src, dst)
        else:
            return {"escaped": False, "detail": f"unknown op {op}"}
    except OSError as e:
        return {"escaped": False, "detail": f"{op} {src} {dst or ''}: " + err(e)}
    return {"escaped": True, "detail": f"{op} {src} {dst or ''}: done"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
