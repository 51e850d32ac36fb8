#!/usr/bin/env python3
"""Prints the CPU time (user + system, in microseconds) of process PID and of all its
descendants together, those alive and those it has reaped: "<pid's own> <descendants'>". Benchmarks read it before and after a run
to give CPU time per request (bench/seed/run.sh). Usage: proc_cpu.py PID

Imported, per_request() reads one such run back (bench/seed/run.sh, bench/seed/floor.sh)."""
import json
import os
import sys

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def stat(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    # ppid; utime + stime; cutime + cstime (children it has reaped, and theirs)
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def main():
    root = int(sys.argv[1])
    parents = {}
    cpu = {}
    reaped = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parents[int(entry)], cpu[int(entry)], reaped[int(entry)] = stat(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    children = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    # Descendants: those alive now, and those gone (counted in their parent's reaped time).
    total = reaped.get(root, 0)
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        total += cpu.get(pid, 0) + reaped.get(pid, 0)
        stack += children.get(pid, [])
    print(f"{cpu.get(root, 0) * TICK_US:.0f} {total * TICK_US:.0f}")


def per_request(work, name):
    """The hearth-load report WORK/NAME.json, with the CPU a request of the server
    ("own_us") and of its descendants ("kids_us") from WORK/NAME.cpu0 and .cpu1 (this script's
    output before and after the run), and of the load client ("client_us") from its own report."""
    x = json.load(open(os.path.join(work, f"{name}.json")))
    before = [float(v) for v in open(os.path.join(work, f"{name}.cpu0")).read().split()]
    after = [float(v) for v in open(os.path.join(work, f"{name}.cpu1")).read().split()]
    n = max(1, x["requests"])
    x["own_us"] = (after[0] - before[0]) / n
    x["kids_us"] = (after[1] - before[1]) / n
    x["client_us"] = x.get("cpu_us", 0) / n
    return x


if __name__ == "__main__":
    main()
