#!/usr/bin/env bash
# Load benchmark: one run, side by side, on this machine.
#   1. hearth-echo-server: a bare Beast HTTP server (no JSON-RPC, no auth): the ceiling.
#   2. hearth, lavs/manifest: transport + auth + JSON-RPC dispatch, no handler.
#   3. hearth, lavs/call on a trivial script endpoint (`cat`): the whole pipeline with a process,
#      in the jail (every mechanism the machine offers).
#   4. the same on a second daemon started with --insecure-no-sandbox: the jail's share of a call.
# Usage: bench/run.sh [BUILD_DIR] (default build/release). CONNECTIONS, DURATION and THREADS
# may be set in the environment. Prints a Markdown table for docs/benchmarks.md.
cd "$(dirname "$0")/.."
source bench/common.sh

background "$BIN/hearth-echo-server" --threads "$THREADS" > "$work/echo.port"
start_hearth jailed tests/services/load --log-level warn
start_hearth open tests/services/load --log-level error --insecure-no-sandbox
wait_for "$work/echo.port"
echo_port=$(cat "$work/echo.port")
hearth_port=$(hearth_port jailed)
open_port=$(hearth_port open)

run() {  # name port body expect [token]
  local name=$1 port=$2 body=$3 expect=$4 token=${5:-}
  local args=()
  [ -n "$token" ] && args+=(--token-file "$token")
  load "$name" "$port" /rpc "$body" "$expect" "$CONNECTIONS" "$DURATION" "${args[@]}"
}

run echo "$echo_port" '{"jsonrpc":"2.0","id":1,"method":"ping"}' '"result"'
run manifest "$hearth_port" '{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}' '"name":"load"' "$work/jailed/token"
run call "$hearth_port" '{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"echo","input":{"x":1}}}' '"result":{"x":1}' "$work/jailed/token"
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

# Several daemons on one database (docs/benchmarks.md, "Several daemons on one database").
echo
python3 bench/storage/shared.py --seconds 6 --workspaces 16 --clients-per-daemon 8

# Issue 41's floors (docs/benchmarks.md, "Issue 41"): workspace commits from 1-8 threads beside
# SQLite's flush floor; the capability bridge with 8 apps at once; App Server events appended
# and delivered.
echo
"$BIN/workspace_bench" --benchmark_filter='StoreCommit|Floor' --benchmark_min_time=1
echo
ROUNDS=1 bash bench/agentapp/apps.sh "$BUILD"
echo
python3 bench/agentapp/events.py --rounds 1 "$BUILD"

# Issue 41's comparisons: the seed's runtime (function and script endpoints) and the floor of a
# JS call beside it, /mcp against lavs/call, lavs/manifest against the echo server, and the
# fan-out to 10,000 subscribers beside the machine's own floor for it.
echo
ROUNDS=1 bash bench/seed/run.sh "$BUILD"
echo
ROUNDS=1 bash bench/seed/floor.sh "$BUILD"
echo
ROUNDS=1 bash bench/mcp/run.sh "$BUILD"
echo
ROUNDS=1 python3 bench/threads/run.py "$BUILD"
echo
SUBSCRIBERS=10000 ROUNDS=5 THREADS=2 bash bench/fanout/run.sh "$BUILD"
(ulimit -n "$(ulimit -Hn)" && "$BIN/hearth-fanout" --floor 1 --subscribers 10000 --rounds 5)

# Service search (docs/a2s-search-results.md): the corpus of 1,000+ definitions with BM25 beside
# it, timed at 10,000 definitions, and in a one-line catalogue's shape; then the generated
# 10,000-definition registry.
echo
"$BIN/a2s_search_corpus" bench/a2s/corpus --scale 10000
echo
"$BIN/a2s_search_corpus" bench/a2s/corpus --terse
echo
"$BIN/a2s_search_bench" --benchmark_filter=NONE
