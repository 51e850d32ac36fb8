#!/usr/bin/env python3
"""Two hearth binaries side by side on one endpoint: req/s and the CPU time per request of each
daemon and, apart, of the processes it started (JS workers, jails), rounds interleaved so that the
machine's drift hits both alike. For a change's effect: build the old commit's `hearth` and copy
it beside the new one (it must find hearth-launch and hearth-js-worker in its own folder):

    cp /path/to/old/build/release/bin/hearth build/release/bin/hearth-old
    python3 bench/ab/run.py build/release/bin/hearth-old build/release/bin/hearth

Environment: ENDPOINT (default addKept, an endpoint of SERVICE, or "manifest" for
lavs/manifest), SERVICE (default bench/seed/service), CONNECTIONS (32), DURATION (4), ROUNDS (3),
THREADS (1). Input is {"a": 1, "b": 2}."""
import json
import os
import subprocess
import sys
import tempfile
import time

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, "bench")
if len(sys.argv) != 3:
    raise SystemExit(__doc__)
binaries = {"A": sys.argv[1], "B": sys.argv[2]}
endpoint = os.environ.get("ENDPOINT", "addKept")
service = os.environ.get("SERVICE", "bench/seed/service")
conns = os.environ.get("CONNECTIONS", "32")
duration = os.environ.get("DURATION", "4")
threads = os.environ.get("THREADS", "1")
rounds = int(os.environ.get("ROUNDS", "3"))
load_bin = os.path.join(os.path.dirname(binaries["B"]), "hearth-load")
work = tempfile.mkdtemp()


def cpu(pid):
    """(the process's own CPU, its descendants' - alive or reaped) in microseconds."""
    out = subprocess.run([sys.executable, "bench/proc_cpu.py", str(pid)], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


if endpoint == "manifest":
    body = '{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}'
else:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "lavs/call",
                       "params": {"endpoint": endpoint, "input": {"a": 1, "b": 2}}})
procs = {}
try:
    for v, binary in binaries.items():
        d = os.path.join(work, v)
        os.makedirs(d)
        procs[v] = subprocess.Popen(
            [binary, "serve", service, "--port", "0", "--threads", threads, "--js-workers", "2",
             "--log-level", "error", "--ready-file", f"{d}/ready.json", "--state-dir",
             f"{d}/state", "--token-file", f"{d}/token"], stdout=subprocess.DEVNULL)
    port = {}
    for v in binaries:
        ready = os.path.join(work, v, "ready.json")
        for _ in range(200):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                break
            time.sleep(0.05)
        port[v] = json.load(open(ready))["port"]

    def load(v, connections, seconds):
        out = subprocess.run(
            [load_bin, "--port", str(port[v]), "--path", "/rpc", "--body", body, "--expect",
             '"result"', "--connections", connections, "--duration", seconds, "--token-file",
             os.path.join(work, v, "token")], capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    for v in binaries:
        load(v, "4", "1")
    print(f"{endpoint} on {service}: {conns} connections, {duration} s a run, {rounds} rounds; "
          f"A = {binaries['A']}, B = {binaries['B']}\n")
    print("| round | binary | req/s | p50 (us) | failures | daemon CPU/req (us) | "
          "its processes CPU/req (us) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in range(1, rounds + 1):
        for v in binaries:
            own0, kids0 = cpu(procs[v].pid)
            x = load(v, conns, duration)
            own1, kids1 = cpu(procs[v].pid)
            n = max(1, x["requests"])
            print(f"| {r} | {v} | {x['rps']:.0f} | {x['p50_us']:.0f} | {x['failures']} | "
                  f"{(own1 - own0) / n:.1f} | {(kids1 - kids0) / n:.1f} |", flush=True)
finally:
    for p in procs.values():
        p.terminate()
    for p in procs.values():
        p.wait()
