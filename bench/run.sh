#!/usr/bin/env bash
# Load benchmark: one run, side by side, on this machine.
#   1. hearth-echo-server: a bare Beast HTTP server (no JSON-RPC, no auth): the ceiling.
#   2. hearth, lavs/manifest: transport + auth + JSON-RPC dispatch, no handler.
#   3. hearth, lavs/call on a trivial script endpoint (`cat`): the whole pipeline with a process,
#      in the jail (every mechanism the machine offers).
#   4. the same on a second daemon started with --insecure-no-sandbox: the jail's share of a call.
# Usage: bench/run.sh [BUILD_DIR] (default build/release). CONNECTIONS, DURATION and THREADS
# may be set in the environment. Prints a Markdown table for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
BIN=$BUILD/bin
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-10}
THREADS=${THREADS:-1}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$BIN/hearth-echo-server" --threads "$THREADS" > "$work/echo.port" &
pids+=($!)
"$BIN/hearth" serve tests/services/load --port 0 --threads "$THREADS" --log-level warn \
  --ready-file "$work/ready.json" --state-dir "$work/state" --token-file "$work/token" > /dev/null &
pids+=($!)
mkdir -p "$work/open"
"$BIN/hearth" serve tests/services/load --port 0 --threads "$THREADS" --log-level error \
  --insecure-no-sandbox --ready-file "$work/open/ready.json" --state-dir "$work/open/state" \
  --token-file "$work/open/token" > /dev/null &
pids+=($!)
for _ in $(seq 200); do [ -s "$work/ready.json" ] && [ -s "$work/echo.port" ] && [ -s "$work/open/ready.json" ] && break; sleep 0.05; done
echo_port=$(cat "$work/echo.port")
hearth_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/ready.json")
open_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/open/ready.json")

run() {  # name port body expect [token]
  local name=$1 port=$2 body=$3 expect=$4 token=${5:-}
  local args=(--port "$port" --path /rpc --body "$body" --expect "$expect" --connections "$CONNECTIONS" --duration "$DURATION")
  [ -n "$token" ] && args+=(--token-file "$token")
  "$BIN/hearth-load" "${args[@]}" > "$work/$name.json"
}

run echo "$echo_port" '{"jsonrpc":"2.0","id":1,"method":"ping"}' '"result"'
run manifest "$hearth_port" '{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}' '"name":"load"' "$work/token"
run call "$hearth_port" '{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"echo","input":{"x":1}}}' '"result":{"x":1}' "$work/token"
run open "$open_port" '{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"echo","input":{"x":1}}}' '"result":{"x":1}' "$work/open/token"

python3 - "$work" "$CONNECTIONS" "$DURATION" "$THREADS" <<'PY'
import json, sys, os
work, conns, dur, threads = sys.argv[1:]
r = {n: json.load(open(os.path.join(work, n + ".json"))) for n in ("echo", "manifest", "call", "open")}
echo = r["echo"]["rps"]
print(f"{conns} keep-alive connections, {dur} s each, server I/O threads: {threads}, nproc: {os.cpu_count()}\n")
print("| target | req/s | p50 (us) | p99 (us) | failures | req/s vs echo |")
print("|---|---:|---:|---:|---:|---:|")
names = {"echo": "raw Beast echo server (ceiling)", "manifest": "hearth `lavs/manifest` (transport + dispatch)",
         "call": "hearth `lavs/call`, script `cat`, jailed (process per call)",
         "open": "same, `--insecure-no-sandbox` (no jail)"}
for n in ("echo", "manifest", "call", "open"):
    x = r[n]
    print(f"| {names[n]} | {x['rps']:.0f} | {x['p50_us']:.0f} | {x['p99_us']:.0f} | {x['failures']} | {x['rps']/echo:.3f} |")
PY
