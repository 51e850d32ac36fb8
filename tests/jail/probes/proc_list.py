"""Probe: list /proc. Contained: only the jail's own processes are visible, i.e. this process and
its ancestors as /proc shows them (the probe has no children). "escaped" means another process is visible;
up to 20 of them are returned (pid and name). Input {"daemon_pid": P} (reported: is P listed)."""
import json
import os
import sys


def status_field(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def main(inp):
    pids = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    own = {os.getpid()}
    p = os.getpid()
    while True:  # ancestors
        parent = status_field(p, "PPid")
        if not parent or int(parent) == 0 or int(parent) in own:
            break
        p = int(parent)
        own.add(p)
    foreign = [q for q in pids if q not in own]
    return {"escaped": bool(foreign), "count": len(pids), "own": sorted(own),
            "foreign": [[q, status_field(q, "Name")] for q in foreign[:20]],
            "seesDaemonPid": int(inp.get("daemon_pid", -1)) in pids,
            "detail": f"{len(pids)} processes visible, {len(foreign)} not the jail's own"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
