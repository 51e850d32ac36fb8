#!/usr/bin/env python3
"""App Server events appended and delivered per second (docs/benchmarks.md, "App Server: events
appended and delivered").

An agent app installed in a fresh state dir; `hearth serve` with the scripted model server
(tests/fake_model) streaming each turn's answer: TEXT characters of content in 7-character
chunks, so each turn stores and pushes about TEXT / 7 `progress` events before it completes.
SESSIONS WebSocket clients, each on its own session, start a turn at once and read every
`agentSession/event` until their turn's `completed`. Printed per round: the events delivered to
all clients per second (first turn started to last turn completed), per session, and the
events in the daemon's store at the end (each was appended once, committed to disk, before it
was pushed). The same clients read the stored events back afterwards and check that what was
pushed is what was stored: same sequence numbers, no gap, no duplicate.

Usage: bench/agentapp/events.py [--sessions 8] [--text 7000] [--rounds 2] [BUILD_DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from hearthtest import EXAMPLES, Daemon, hearth_bin, result  # noqa: E402
from server import FakeModel  # noqa: E402

APP_MD = """---
name: streams
description: An app whose agent writes long answers, for measuring the App Server's events.
version: 1.0.0
status: ready
appType: agent-app
manifestVersion: 0.10.0
requires:
  capabilities:
    lime.agent: ^1.0
entries:
  - key: board
    kind: page
    title: Board
    route: /board
---
# Streams
"""


def install(state):
    pkg = Path(tempfile.mkdtemp(prefix="hearth-events-pkg-")) / "streams"
    pkg.mkdir()
    (pkg / "APP.md").write_text(APP_MD)
    for args in (["install", str(pkg), "--dev"], ["enable", "streams"]):
        r = subprocess.run([hearth_bin(), "app", *args, "--state-dir", str(state)],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            sys.exit(f"hearth app {args[0]}: {r.stderr}")


def one_session(d, index, start_barrier, out):
    with d.ws() as ws:
        result(ws.request("initialize", {"clientInfo": {"name": f"bench-{index}"}}))
        ws.send({"jsonrpc": "2.0", "method": "initialized"})
        s = result(ws.request("agentSession/start", {"appId": "streams", "workspaceId": f"w{index}",
                                                     "entryKey": "board"}, id=2))
        start_barrier.wait()
        started = time.monotonic()
        result(ws.request("agentSession/turn/start", {"sessionId": s["sessionId"],
                                                      "workspaceId": f"w{index}",
                                                      "input": "write"}, id=3))
        seqs = []
        while True:
            e = ws.notification("agentSession/event", timeout=120)["params"]
            seqs.append(e["seq"])
            if e["type"] in ("completed", "failed"):
                ended = time.monotonic()
                if e["type"] == "failed":
                    sys.exit(f"session {index}: the turn failed: {e}")
                break
        stored = result(ws.request("agentSession/read", {"sessionId": s["sessionId"],
                                                         "workspaceId": f"w{index}",
                                                         "afterSeq": 0}, id=4))
        stored_seqs = [e["seq"] for e in stored["events"]]
        out[index] = {"started": started, "ended": ended, "pushed": seqs, "stored": stored_seqs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=None)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--text", type=int, default=7000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if args.build:
        os.environ["HEARTH_BINARY_DIR"] = str(Path(args.build).resolve())
    text = ("the quick brown fox jumps over the lazy dog " * (args.text // 44 + 1))[:args.text]
    step = {"reply": {"content": text,
                      "tool_calls": [{"name": "complete", "arguments": {"result": "done"}}]}}
    print(f"{args.sessions} sessions at once, {args.text} characters streamed a turn (7 a chunk); "
          f"nproc {os.cpu_count()}\n")
    print("| round | sessions | events delivered | seconds | events/s, all sessions | events/s a session (median) | pushed = stored |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for rnd in range(1, args.rounds + 1):
        fake = FakeModel([step] * args.sessions)
        fake.start()
        state = Path(tempfile.mkdtemp(prefix="hearth-events-state-"))
        install(state)
        try:
            with Daemon([EXAMPLES / "notes"], state_dir=state,
                        extra_args=["--model-url", fake.base_url, "--model", "fake",
                                    "--model-stream"]) as d:
                barrier = threading.Barrier(args.sessions)
                out = [None] * args.sessions
                threads = [threading.Thread(target=one_session, args=(d, i, barrier, out))
                           for i in range(args.sessions)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            if fake.errors:
                sys.exit(f"the model server: {fake.errors}")
            if any(o is None for o in out):
                sys.exit("a session did not finish")
            events = sum(len(o["pushed"]) for o in out)
            seconds = max(o["ended"] for o in out) - min(o["started"] for o in out)
            each = sorted(len(o["pushed"]) / (o["ended"] - o["started"]) for o in out)
            same = all(o["pushed"] == o["stored"] and
                       o["pushed"] == list(range(o["pushed"][0], o["pushed"][0] + len(o["pushed"])))
                       for o in out)
            print(f"| {rnd} | {args.sessions} | {events} | {seconds:.2f} | {events / seconds:.0f} | "
                  f"{each[len(each) // 2]:.0f} | {'yes' if same else 'NO'} |")
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
