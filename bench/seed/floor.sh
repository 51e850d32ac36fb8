#!/usr/bin/env bash
# How far a JS function endpoint could go on this machine if everything hearth does besides the
# engine and the hop to a worker cost what a bare HTTP server costs. Measured in one run, rounds
# interleaved, with the same load client:
#   the raw Beast echo server (hearth-echo-server): the least an HTTP request can cost;
#   the seed's stand-in (bench/seed/server.mjs, the function called in process, no sandbox);
#   hearth, `add` (a fresh module instance per call) and `addKept` (`isolation: "worker"`);
#   SpiderMonkey's own work for one call in one process (hearth-js-worker --bench-call,
#   --bench-prepared, --bench-kept);
#   a request handed to another process through a pipe and answered (hearth-pipe-hop).
# At saturation (CONNECTIONS, default 32) the two cores are shared by server and client, so a
# target's rate goes as 1 / (the CPU its request costs the server, its processes and the client
# together). The floor of a JS call is the echo server's request (server and client) plus the
# engine's call plus the hop; the best ratio to the seed any design with the handler in another
# process could reach is the seed's request over that floor. At concurrency 1 the floor of the
# latency is the echo server's p50 plus the hop's p50 plus the engine's call (for the default,
# the call in a realm prepared while idle). Usage: bench/seed/floor.sh [BUILD_DIR]; CONNECTIONS,
# DURATION (default 4), ROUNDS (default 2) from the environment. Prints Markdown tables for
# docs/benchmarks.md.
cd "$(dirname "$0")/../.."
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-4}
source bench/common.sh
ROUNDS=${ROUNDS:-2}
service=bench/seed/service

start_hearth seed "$service" --js-workers 2 --log-level error
hearth_pid=${pids[-1]}
background sh -c 'exec node bench/seed/server.mjs "$1" "$2" > /dev/null' - "$service" "$work/seed.port"
seed_pid=${pids[-1]}
background sh -c 'exec "$1" > "$2"' - "$BIN/hearth-echo-server" "$work/echo.port"
echo_pid=${pids[-1]}
port=$(hearth_port seed)
wait_for "$work/seed.port" "$work/echo.port"
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"ENDPOINT","input":{"a":1,"b":2}}}'
token=(--token-file "$work/seed/token")

# name pid port expect endpoint [hearth-load arguments...]
targets=(
  "echo $echo_pid $(cat "$work/echo.port") \"ok\":true add"
  "seed $seed_pid $(cat "$work/seed.port") \"sum\":3 add"
  "default $hearth_pid $port \"sum\":3 add ${token[*]}"
  "worker $hearth_pid $port \"sum\":3 addKept ${token[*]}"
)
for t in "${targets[@]}"; do  # warm-up: workers, caches
  set -- $t
  load "warm-$1" "$3" /rpc "${call/ENDPOINT/$5}" "$4" 4 1 "${@:6}"
done
for round in $(seq "$ROUNDS"); do
  for conns in "$CONNECTIONS" 1; do
    for t in "${targets[@]}"; do
      set -- $t
      name="$1-$conns-$round"
      python3 bench/proc_cpu.py "$2" > "$work/$name.cpu0"
      load "$name" "$3" /rpc "${call/ENDPOINT/$5}" "$4" "$conns" "$DURATION" "${@:6}"
      python3 bench/proc_cpu.py "$2" > "$work/$name.cpu1"
    done
  done
  for mode in call prepared kept; do
    "$BIN/hearth-js-worker" "--bench-$mode" "$service" add.mjs add 3000 '{"a":1,"b":2}' \
      > "$work/engine-$mode-$round"
  done
  "$BIN/hearth-pipe-hop" --peers 2 --in-flight 16 --seconds 2 > "$work/hop-sat-$round.json"
  "$BIN/hearth-pipe-hop" --peers 1 --in-flight 1 --seconds 2 > "$work/hop-one-$round.json"
done

python3 - "$work" "$ROUNDS" "$CONNECTIONS" "$DURATION" <<'PY'
import json, os, sys
sys.path.insert(0, "bench")
from proc_cpu import per_request
work, rounds, conns, dur = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(name, c, i):
    x = per_request(work, f"{name}-{c}-{i}")
    x["total"] = x["own_us"] + x["kids_us"] + x["client_us"]
    return x
def number(name, i):
    return float(open(os.path.join(work, f"{name}-{i}")).read())
def hop(kind, i):
    return json.load(open(os.path.join(work, f"hop-{kind}-{i}.json")))
print(f"{conns} keep-alive connections at saturation, then 1, {dur} s a target, {rounds} rounds "
      f"interleaved; nproc {os.cpu_count()}\n")
print("| round | target | req/s | p50 (us) | server CPU/req (us) | its processes (us) | "
      "load client (us) | a request in all (us) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for i in range(1, rounds + 1):
    for name in ("echo", "seed", "default", "worker"):
        x = load(name, conns, i)
        print(f"| {i} | {name} | {x['rps']:.0f} | {x['p50_us']} | {x['own_us']:.1f} | "
              f"{x['kids_us']:.1f} | {x['client_us']:.1f} | {x['total']:.1f} |")
print()
print("| round | SpiderMonkey a call: fresh realm / prepared realm / kept module (us) | "
      "pipe hop at saturation: CPU a round trip (us) | pipe hop, one at a time: p50 (us) |")
print("|---:|---|---:|---:|")
for i in range(1, rounds + 1):
    print(f"| {i} | {number('engine-call', i):.1f} / {number('engine-prepared', i):.1f} / "
          f"{number('engine-kept', i):.1f} | {hop('sat', i)['cpu_us']:.1f} | "
          f"{hop('one', i)['p50_us']} |")
print()
print("At saturation: the floor of a request is the echo server's (server and client) plus the "
      "engine's call plus the hop; the best ratio is the seed's request over it.\n")
print("| round | target | the seed's request (us) | floor (us) | best ratio at the floor | "
      "target ratio | hearth's request (us) | hearth's ratio (req/s, same round) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for i in range(1, rounds + 1):
    echo, seed = load("echo", conns, i), load("seed", conns, i)
    for label, name, engine, target in (("default (fresh instance)", "default", "engine-call", 0.5),
                                        ("`isolation: \"worker\"`", "worker", "engine-kept", 1.5)):
        x = load(name, conns, i)
        floor = echo["total"] + number(engine, i) + hop("sat", i)["cpu_us"]
        print(f"| {i} | {label} | {seed['total']:.1f} | {floor:.1f} | "
              f"{seed['total'] / floor:.2f} | {target} | {x['total']:.1f} | "
              f"{x['rps'] / seed['rps']:.2f} |")
print()
print("At concurrency 1: the floor of the latency is the echo server's p50, the hop's p50 and the "
      "engine's call (the default's in a realm prepared while the worker was idle).\n")
print("| round | target | the seed's p50 (us) | floor (us) | hearth's p50 (us) |")
print("|---:|---|---:|---:|---:|")
for i in range(1, rounds + 1):
    echo, seed = load("echo", 1, i), load("seed", 1, i)
    for label, name, engine in (("default (fresh instance)", "default", "engine-prepared"),
                                ("`isolation: \"worker\"`", "worker", "engine-kept")):
        floor = echo["p50_us"] + hop("one", i)["p50_us"] + number(engine, i)
        print(f"| {i} | {label} | {seed['p50_us']} | {floor:.0f} | {load(name, 1, i)['p50_us']} |")
PY
