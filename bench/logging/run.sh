#!/usr/bin/env bash
# The per-call log line's cost: the same daemon at --log-level info (one line per call, to stderr
# and STATE_DIR/hearth.log) and at warn (none), side by side on `lavs/manifest` (transport +
# dispatch, no handler: where the line's share is largest).
# Usage: bench/logging/run.sh [BUILD_DIR]. CONNECTIONS, DURATION, THREADS as for bench/run.sh.
cd "$(dirname "$0")/../.."
source bench/common.sh

start_hearth info tests/services/load --log-level info 2> /dev/null
start_hearth warn tests/services/load --log-level warn
info_port=$(hearth_port info)
warn_port=$(hearth_port warn)
body='{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}'
# Alternated, twice each: the machine's noise lands on both.
for round in 1 2; do
  load "warn$round" "$warn_port" /rpc "$body" '"name":"load"' "$CONNECTIONS" "$DURATION" --token-file "$work/warn/token"
  load "info$round" "$info_port" /rpc "$body" '"name":"load"' "$CONNECTIONS" "$DURATION" --token-file "$work/info/token"
done
lines=$(cat "$work"/info/state/hearth.log* | grep -c ' call lavs/manifest ok ' || true)

python3 - "$work" "$CONNECTIONS" "$DURATION" "$THREADS" "$lines" <<'PY'
import json, os, sys
work, conns, dur, threads, lines = sys.argv[1:]
r = {n: json.load(open(os.path.join(work, n + ".json"))) for n in ("warn1", "info1", "warn2", "info2")}
print(f"{conns} keep-alive connections, {dur} s each, two rounds alternated, server I/O threads: {threads}, nproc: {os.cpu_count()}\n")
print("| daemon | round | req/s | p50 (us) | p99 (us) | failures |")
print("|---|---:|---:|---:|---:|---:|")
for n in ("warn1", "info1", "warn2", "info2"):
    x = r[n]
    label = "--log-level warn (no line)" if n.startswith("warn") else "--log-level info (a line per call)"
    print(f"| {label} | {n[-1]} | {x['rps']:.0f} | {x['p50_us']:.0f} | {x['p99_us']:.0f} | {x['failures']} |")
warn = r["warn1"]["rps"] + r["warn2"]["rps"]
info = r["info1"]["rps"] + r["info2"]["rps"]
print(f"\ninfo / warn throughput: {info / warn:.3f}; lines in hearth.log and its rotated files (5 MiB each, 3 kept): {lines}")
PY
