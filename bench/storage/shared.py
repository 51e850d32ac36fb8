#!/usr/bin/env python3
"""One daemon on SQLite against two and four daemons on one PostgreSQL database
(docs/deployment.md, docs/benchmarks.md "Several daemons on one database").

Measures, side by side in one run:
  - workspace commits per second: clients run `workspace/execute` (a script that increments a
    counter) on W workspaces, spread over the daemons; every answer is checked, and the counters
    read at the end must equal the commits acknowledged.
  - App Server events per second: clients (each on its own connection, after the handshake) start
    sessions (`agentSession/start`); each start appends one event (`status: started`) and its
    evidence. The events in the database at the end must equal the starts acknowledged.

The PostgreSQL server is a throwaway one (tests/integration/pgserver.py) with fsync on, as a
real one runs; SQLite runs synchronous=FULL (hearth's setting). Clients are separate processes
(multiprocessing), so the load client is not one Python interpreter's GIL; its own CPU is reported
next to the daemons' (bench/proc_cpu.py's way: /proc/PID/stat) so that one can see it was not the
bottleneck.

usage: shared.py [--seconds S] [--clients-per-daemon C] [--workspaces W] [--only workspace|events]
"""
import argparse
import json
import multiprocessing as mp
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from hearthtest import Daemon, HttpClient, hearth_bin  # noqa: E402
from pgserver import PgServer  # noqa: E402

VAULT_KEY = "6b" * 32

APP_MD = """---
name: bench
description: Sessions started as fast as the App Server takes them.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.agent: ^1.0
storage:
  namespace: bench
  placement: local-sqlite
  isolation: per-app-database
entries:
  - key: board
    kind: page
    title: Board
    route: /board
---
# Bench
"""


def cpu_seconds(pid):
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def server_pids(pg):
    """The PostgreSQL server's processes (the postmaster and its backends)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmd.startswith(b"postgres:") or str(pg.data).encode() in cmd:
            pids.append(int(entry.name))
    return pids


def server_cpu(pg):
    # Backends come and go with connections; their CPU is counted while they live (the pool
    # keeps them for the whole run).
    return sum(cpu_seconds(p) for p in server_pids(pg)) if pg else 0.0


def make_workspaces(root, count):
    dirs = []
    for i in range(count):
        d = root / f"ws{i}"
        d.mkdir(parents=True)
        (d / "workspace.yaml").write_text(
            f"name: bench-{i}\ncomponents:\n  - id: c\n    states:\n"
            "      counter: {permission: rw, schema: {type: integer, minimum: 0}, initial: 0}\n")
        dirs.append(d)
    return dirs


def workspace_client(port, token, workspace, seconds, out):
    ok = conflicts = 0
    with HttpClient("127.0.0.1", port, token) as http:
        end = time.time() + seconds
        while time.time() < end:
            r = http.rpc("workspace/execute", {"workspaceId": workspace,
                                               "script": "counter = counter + 1;"})
            if "result" in r and r["result"].get("committed"):
                ok += 1
            elif r.get("error", {}).get("code") == -32010:
                conflicts += 1
            else:
                raise SystemExit(f"unexpected answer: {r}")
    out.put((ok, conflicts))


def session_client(port, token, seconds, out):
    ok = 0
    with HttpClient("127.0.0.1", port, token) as http:
        r = http.rpc("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        assert "result" in r, r
        http.post(json.dumps({"jsonrpc": "2.0", "method": "initialized"}))
        end = time.time() + seconds
        while time.time() < end:
            r = http.rpc("agentSession/start", {"appId": "bench", "workspaceId": "w",
                                                "entryKey": "board"})
            if "result" not in r:
                raise SystemExit(f"unexpected answer: {r}")
            ok += 1
    out.put((ok, 0))


def run_clients(target, args_list, seconds):
    out = mp.Queue()
    procs = [mp.Process(target=target, args=(*a, seconds, out)) for a in args_list]
    start_cpu = time.time()
    for p in procs:
        p.start()
    pids = [p.pid for p in procs]
    cpu0 = sum(cpu_seconds(pid) for pid in pids)
    time.sleep(seconds * 0.9)
    cpu_mid = sum(cpu_seconds(pid) for pid in pids)
    results = [out.get(timeout=seconds + 60) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit("a client failed")
    elapsed = time.time() - start_cpu
    return sum(r[0] for r in results), sum(r[1] for r in results), elapsed, \
        (cpu_mid - cpu0) / (seconds * 0.9)


def install_app(state, env):
    pkg = Path(tempfile.mkdtemp(prefix="hearth-bench-app-")) / "bench"
    pkg.mkdir()
    (pkg / "APP.md").write_text(APP_MD)
    sd = ["--state-dir", str(state)]
    for cmd in (["install", str(pkg), "--dev"], ["enable", "bench"]):
        r = subprocess.run([hearth_bin(), "app", *cmd, *sd], capture_output=True, text=True,
                           env=env, timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"hearth app {cmd[0]}: {r.stderr}")


def measure(label, database, daemons, args, workspaces, tmp, pg):
    env = {**os.environ, "HEARTH_VAULT_KEY": VAULT_KEY}
    if database:
        env["HEARTH_DATABASE"] = database
    extra = []
    for w in workspaces:
        extra += ["--workspace", str(w)]
    rows = []
    started = []
    try:
        state_dirs = [tmp / f"{label}-state{i}" for i in range(daemons)]
        if args.only in (None, "events"):
            install_app(state_dirs[0], env)
        for i in range(daemons):
            started.append(Daemon([], env=env, state_dir=state_dirs[i],
                                  extra_args=extra + (["--database", database] if database
                                                      else [])))
        pids = [d.proc.pid for d in started]
        if args.only in (None, "workspace"):
            clients = [(started[k % daemons].port, started[k % daemons].token,
                        f"bench-{k % len(workspaces)}")
                       for k in range(args.clients_per_daemon * daemons)]
            c0 = sum(cpu_seconds(p) for p in pids)
            s0 = server_cpu(pg if database else None)
            ok, conflicts, elapsed, client_cpu = run_clients(workspace_client, clients,
                                                             args.seconds)
            daemon_cpu = (sum(cpu_seconds(p) for p in pids) - c0) / elapsed
            db_cpu = (server_cpu(pg if database else None) - s0) / elapsed
            # Every acknowledged commit is counted once: the counters add up.
            total = 0
            for k in range(len(workspaces)):
                with HttpClient("127.0.0.1", started[0].port, started[0].token) as http:
                    deadline = time.time() + 10
                    while True:
                        r = http.rpc("workspace/state", {"workspaceId": f"bench-{k}",
                                                         "name": "counter"})
                        value = r["result"]["value"]
                        if time.time() > deadline or database is None:
                            break
                        # another daemon's last commits reach this one shortly
                        time.sleep(0.2)
                        r2 = http.rpc("workspace/state", {"workspaceId": f"bench-{k}",
                                                          "name": "counter"})
                        if r2["result"]["value"] == value:
                            break
                total += value
            assert total == ok, f"counters {total} != acknowledged {ok}"
            rows.append(("workspace commits/s", ok / elapsed, conflicts, daemon_cpu, db_cpu,
                         client_cpu))
        if args.only in (None, "events"):
            clients = [(started[k % daemons].port, started[k % daemons].token)
                       for k in range(args.clients_per_daemon * daemons)]
            c0 = sum(cpu_seconds(p) for p in pids)
            s0 = server_cpu(pg if database else None)
            ok, _, elapsed, client_cpu = run_clients(session_client, clients, args.seconds)
            daemon_cpu = (sum(cpu_seconds(p) for p in pids) - c0) / elapsed
            db_cpu = (server_cpu(pg if database else None) - s0) / elapsed
            # Every acknowledged start stored its one event, once.
            if database:
                stored = int(pg.psql(database.split("/")[-1].split("?")[0],
                                     "SELECT count(*) FROM hearth_app_server.as_events"))
            else:
                with sqlite3.connect(state_dirs[0] / "apps" / "app-server.db") as con:
                    stored = con.execute("SELECT count(*) FROM as_events").fetchone()[0]
            assert stored == ok, f"events stored {stored} != starts acknowledged {ok}"
            rows.append(("App Server events/s", ok / elapsed, 0, daemon_cpu, db_cpu,
                         client_cpu))
    finally:
        for d in started:
            d.stop()
            d.cleanup()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--clients-per-daemon", type=int, default=4)
    parser.add_argument("--workspaces", type=int, default=4)
    parser.add_argument("--only", choices=["workspace", "events"])
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hearth-bench-shared-"))
    pg = PgServer(fsync=True)
    try:
        workspaces = make_workspaces(tmp / "workspaces", args.workspaces)
        configs = [("sqlite x1", None, 1)]
        for n in (1, 2, 4):
            configs.append((f"postgresql x{n}", pg.url(pg.fresh_database(f"bench{n}")), n))
        print(f"{'setup':16} {'measure':22} {'per second':>11} {'conflicts':>9} "
              f"{'daemon CPU':>10} {'db CPU':>7} {'client CPU':>10}")
        for label, database, daemons in configs:
            for name, rate, conflicts, dcpu, scpu, ccpu in measure(
                    label.replace(" ", ""), database, daemons, args, workspaces, tmp, pg):
                print(f"{label:16} {name:22} {rate:11.0f} {conflicts:9d} {dcpu:10.2f} "
                      f"{scpu:7.2f} {ccpu:10.2f}", flush=True)
    finally:
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
