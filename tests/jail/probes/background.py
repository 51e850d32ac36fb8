"""Probe: leave a process behind. Double fork + setsid; the grandchild ignores SIGHUP and SIGTERM,
closes the handler's pipes and appends a line to `file` every `interval` seconds for `seconds`
(default 20). The handler returns at once with the grandchild's pid (as the jail numbers it).
Whether it outlives the call is checked from outside: the file must stop growing."""
import json
import os
import signal
import sys
import time


def grandchild(path, seconds, interval, w):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, f"start {os.getpid()}\n".encode())
    except OSError as e:
        os.write(w, f"cannot write {path}: {type(e).__name__}: {e}".encode())
        return
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    try:
        null = os.open("/dev/null", os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
    except OSError:
        for target in (0, 1, 2):
            os.close(target)
    for other in range(3, 1024):
        if other != fd:
            try:
                os.close(other)
            except OSError:
                pass
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
        os.write(fd, f"tick {n}\n".encode())
        time.sleep(interval)


def main(inp):
    path = inp.get("file", "data/background.log")
    seconds = float(inp.get("seconds", 20))
    interval = float(inp.get("interval", 0.05))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setsid()
            if os.fork() == 0:
                try:
                    grandchild(path, seconds, interval, w)
                finally:
                    os._exit(0)
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    got = os.read(r, 512).decode()
    if not got.isdigit():
        return {"spawned": False, "detail": got or "the background process did not start"}
    return {"spawned": True, "pid": int(got), "detail": "left a process appending to " + path}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
