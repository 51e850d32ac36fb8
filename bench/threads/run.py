#!/usr/bin/env python3
"""One and two I/O threads, side by side: the raw Beast echo server (hearth-echo-server) and
hearth's `lavs/manifest` (transport, token/Host/Origin checks, JSON-RPC dispatch), each with
--threads 1 and --threads 2, rounds interleaved, same load client (hearth-load), and the
server's CPU time per request read from /proc. A third server, the echo server replaying the
response hearth gave (`--reply`: the same headers and 2 KB body on the wire, none of the work),
tells how much of the gap is the answer's size and how much hearth's own work.

Usage: python3 bench/threads/run.py [BUILD_DIR] (default build/release); CONNECTIONS (32),
DURATION (4) and ROUNDS (3) from the environment. Prints a Markdown table."""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
conns = os.environ.get("CONNECTIONS", "32")
duration = os.environ.get("DURATION", "4")
rounds = int(os.environ.get("ROUNDS", "3"))
work = tempfile.mkdtemp()
procs = {}


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_file(path):
    for _ in range(200):
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {path}")


targets = {}
try:
    for t in ("1", "2"):
        port_file = f"{work}/echo{t}.port"
        procs[f"echo{t}"] = subprocess.Popen([f"{build}/bin/hearth-echo-server", "--threads", t],
                                             stdout=open(port_file, "w"))
        d = f"{work}/h{t}"
        os.makedirs(d)
        procs[f"manifest{t}"] = subprocess.Popen(
            [f"{build}/bin/hearth", "serve", "tests/services/load", "--port", "0", "--threads", t,
             "--log-level", "error", "--ready-file", f"{d}/ready.json", "--state-dir",
             f"{d}/state", "--token-file", f"{d}/token"], stdout=subprocess.DEVNULL)
        wait_file(port_file)
        wait_file(f"{d}/ready.json")
        targets[f"echo{t}"] = (int(open(port_file).read()), None,
                               '{"jsonrpc":"2.0","id":1,"method":"ping"}')
        manifest_call = '{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}'
        targets[f"manifest{t}"] = (json.load(open(f"{d}/ready.json"))["port"], f"{d}/token",
                                   manifest_call)
        # hearth's answer, captured once, for the echo server to replay.
        conn = http.client.HTTPConnection("127.0.0.1", targets[f"manifest{t}"][0])
        conn.request("POST", "/rpc", manifest_call, {
            "Content-Type": "application/json",
            "Authorization": "Bearer " + open(f"{d}/token").read().strip()})
        answer = conn.getresponse()
        reply = answer.read()
        captured = f"{work}/reply{t}.http"
        with open(captured, "wb") as f:
            f.write(b"HTTP/1.1 200 OK\r\n")
            for name, value in answer.getheaders():
                f.write(f"{name}: {value}\r\n".encode())
            f.write(b"\r\n" + reply)
        conn.close()
        port_file = f"{work}/reply{t}.port"
        procs[f"reply{t}"] = subprocess.Popen(
            [f"{build}/bin/hearth-echo-server", "--threads", t, "--reply", captured],
            stdout=open(port_file, "w"))
        wait_file(port_file)
        targets[f"reply{t}"] = (int(open(port_file).read()), None, manifest_call)

    def load(name, connections, seconds):
        port, token, body = targets[name]
        args = [f"{build}/bin/hearth-load", "--port", str(port), "--path", "/rpc", "--body", body,
                "--expect", '"result"', "--connections", connections, "--duration", seconds]
        if token:
            args += ["--token-file", token]
        return json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)

    for name in targets:
        load(name, "4", "1")
    results = {name: [] for name in targets}
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    for _ in range(rounds):
        for name in targets:
            before = ticks(procs[name].pid)
            x = load(name, conns, duration)
            x["cpu_us"] = (ticks(procs[name].pid) - before) * tick_us / max(1, x["requests"])
            results[name].append(x)
    print(f"{conns} keep-alive connections, {duration} s a target, {rounds} rounds interleaved; "
          f"nproc {os.cpu_count()}\n")
    print("| round | server | threads | req/s | p50 (us) | p99 (us) | failures | server CPU per "
          "request (us) | req/s vs echo, same threads | vs echo replaying hearth's answer |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i in range(rounds):
        for t in ("1", "2"):
            echo = results[f"echo{t}"][i]["rps"]
            replayed = results[f"reply{t}"][i]["rps"]
            for kind, label in (("echo", "raw Beast echo"),
                                ("reply", "raw Beast, hearth's answer replayed"),
                                ("manifest", "hearth lavs/manifest")):
                x = results[f"{kind}{t}"][i]
                print(f"| {i + 1} | {label} | {t} | {x['rps']:.0f} | {x['p50_us']:.0f} | "
                      f"{x['p99_us']:.0f} | {x['failures']} | {x['cpu_us']:.1f} | "
                      f"{x['rps'] / echo:.2f} | {x['rps'] / replayed:.2f} |")
finally:
    for p in procs.values():
        p.terminate()
    for p in procs.values():
        p.wait()
