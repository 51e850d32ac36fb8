"""Probe: ptrace a sibling: fork a child and PTRACE_ATTACH to it (ctypes). "escaped" means the
attach succeeded (then detached at once)."""
import ctypes
import errno
import json
import os
import sys

PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def main(inp):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.read(r, 1)
        finally:
            os._exit(0)
    os.close(r)
    try:
        if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
            e = ctypes.get_errno()
            return {"escaped": False,
                    "detail": f"PTRACE_ATTACH {pid}: {errno.errorcode.get(e, e)} ({os.strerror(e)})"}
        os.waitpid(pid, 0x40000000)  # __WALL: the attach stop
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        return {"escaped": True, "detail": f"attached to child {pid}"}
    finally:
        os.close(w)
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except OSError:
            pass


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
