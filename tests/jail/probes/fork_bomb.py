"""Probe: a (bounded) fork bomb. Input {"count": N, "hold": seconds}: fork up to N children that
all stay alive, hold them for `hold` seconds, then let them go. "escaped" means all N forks
succeeded (the process limit, if any, is above N); contained: fork fails (EAGAIN) before N, or the
call is ended by the jail (memory or time limit)."""
import errno
import json
import os
import sys
import time


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    count = int(inp.get("count", 1000))
    hold = float(inp.get("hold", 1.0))
    r, w = os.pipe()
    children = []
    failure = None
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError as e:
            failure = err(e)
            break
        if pid == 0:
            try:
                os.close(w)
                os.read(r, 1)  # returns at EOF: when the parent lets go, or dies
            finally:
                os._exit(0)
        children.append(pid)
    forked = len(children)
    time.sleep(hold)
    os.close(w)
    for pid in children:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
    if failure:
        return {"escaped": False, "forked": forked, "detail": f"fork failed after {forked}: {failure}"}
    return {"escaped": True, "forked": forked, "detail": f"all {count} forks succeeded"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
