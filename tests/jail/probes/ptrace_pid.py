"""Probe: ptrace a given process (the daemon). Input {"pid": P, "marker": M}: PTRACE_SEIZE (which,
unlike PTRACE_ATTACH, does not stop the target; the exit of this probe detaches it). "escaped"
means the seize succeeded on the daemon: when the jail numbers processes on its own, P may name a
process of the jail, so a success counts only if /proc/P/cmdline holds M (or cannot be read)."""
import ctypes
import errno
import json
import os
import sys

PTRACE_SEIZE = 0x4206


def main(inp):
    pid = int(inp["pid"])
    marker = inp.get("marker", "")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) != 0:
        e = ctypes.get_errno()
        return {"escaped": False, "detail": f"PTRACE_SEIZE {pid}: {errno.errorcode.get(e, e)} ({os.strerror(e)})"}
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return {"escaped": True, "detail": f"seized {pid} (its cmdline is unreadable)"}
    if marker and marker.encode() not in cmdline:
        return {"escaped": False, "detail": f"seized {pid}, a process of the jail itself, not the daemon"}
    return {"escaped": True, "detail": f"seized the daemon, pid {pid}"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
