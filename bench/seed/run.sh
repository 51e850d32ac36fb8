#!/usr/bin/env bash
# hearth against a stand-in of the seed's TypeScript runtime (bench/seed/server.mjs: its function
# and script executors behind a minimal Node HTTP server, no sandbox), one run, same load client,
# targets interleaved over ROUNDS rounds so that the machine's drift hits them alike:
#   function endpoint: seed stand-in (module imported once, called in process) | hearth, a fresh
#     module instance per call (the default) | hearth, `isolation: "worker"`;
#   script endpoint (python3, a + b): seed stand-in (spawn per call, unsandboxed) | hearth, a
#     jailed process per call (the default) | hearth, `persistent` (2 jailed processes kept).
# Every response body is checked ("sum":3). CPU per request: the server process (the daemon, or
# the stand-in's node) and, apart, the processes it started (JS workers, jails, scripts), from
# /proc before and after each run (bench/proc_cpu.py). Usage: bench/seed/run.sh [BUILD_DIR]; CONNECTIONS
# (default 32), DURATION (default 5), ROUNDS (default 3), THREADS and JS_WORKERS (default 2) from
# the environment. Prints a Markdown table for docs/benchmarks.md.
cd "$(dirname "$0")/../.."
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-5}
source bench/common.sh
ROUNDS=${ROUNDS:-3}
JS_WORKERS=${JS_WORKERS:-2}
service=bench/seed/service

start_hearth seed "$service" --js-workers "$JS_WORKERS" --log-level error
hearth_pid=${pids[-1]}
background sh -c 'exec node bench/seed/server.mjs "$1" "$2" > /dev/null' - "$service" "$work/seed.port"
seed_pid=${pids[-1]}
port=$(hearth_port seed)
wait_for "$work/seed.port"
seed_port=$(cat "$work/seed.port")
seed_pid_port=$seed_port
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"ENDPOINT","input":{"a":1,"b":2}}}'
token=(--token-file "$work/seed/token")

targets=(
  "seed-function $seed_port add"
  "hearth-function $port add"
  "hearth-function-worker $port addKept"
  "seed-script $seed_port addScript"
  "hearth-script $port addScript"
  "hearth-script-persistent $port addPersistent"
)
for t in "${targets[@]}"; do  # warm-up: workers, caches, persistent processes
  set -- $t
  load "warm-$1" "$2" /rpc "${call/ENDPOINT/$3}" '"sum":3' 4 1 "${token[@]}"
done
for round in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    set -- $t
    pid=$hearth_pid
    [ "$2" = "$seed_pid_port" ] && pid=$seed_pid
    python3 bench/proc_cpu.py "$pid" > "$work/$1-$round.cpu0"
    load "$1-$round" "$2" /rpc "${call/ENDPOINT/$3}" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
    python3 bench/proc_cpu.py "$pid" > "$work/$1-$round.cpu1"
  done
done

python3 - "$work" "$ROUNDS" "$CONNECTIONS" "$DURATION" "$THREADS" "$JS_WORKERS" <<'PY'
import os, sys
sys.path.insert(0, "bench")
from proc_cpu import per_request
work, rounds, conns, dur, threads, workers = sys.argv[1:]
rounds = int(rounds)
def r(name, i):
    return per_request(work, f"{name}-{i}")
print(f"{conns} keep-alive connections, {dur} s a target, {rounds} rounds interleaved; hearth: "
      f"{threads} I/O thread(s), {workers} JS workers; nproc {os.cpu_count()}\n")
groups = [
    ("function", "seed-function", [
        ("seed stand-in: function imported once, called in process", "seed-function"),
        ("hearth: fresh module instance per call (default)", "hearth-function"),
        ("hearth: `isolation: \"worker\"`", "hearth-function-worker")]),
    ("script", "seed-script", [
        ("seed stand-in: python3 spawned per call, unsandboxed", "seed-script"),
        ("hearth: jailed python3 per call (default)", "hearth-script"),
        ("hearth: `persistent`, 2 jailed python3 kept", "hearth-script-persistent")]),
]
print("| endpoint | target | round | req/s | p50 (us) | p99 (us) | failures | server CPU/req (us) | "
      "its handler processes CPU/req (us) | req/s vs seed (same round) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for kind, base, rows in groups:
    for i in range(1, rounds + 1):
        b = r(base, i)["rps"]
        for label, name in rows:
            x = r(name, i)
            print(f"| {kind} | {label} | {i} | {x['rps']:.0f} | {x['p50_us']:.0f} | "
                  f"{x['p99_us']:.0f} | {x['failures']} | {x['own_us']:.0f} | {x['kids_us']:.0f} | "
                  f"{x['rps'] / b:.2f} |")
PY
