#!/usr/bin/env bash
# Builds of hearth side by side on one JS endpoint of bench/seed/service: each build's daemon
# started once (--js-workers 2), then ROUNDS rounds in which the load client runs against each
# daemon in turn, so that the machine's drift hits the builds alike. The same load client (the
# first build's hearth-load) for all; every body checked ("sum":3).
# Usage: bench/seed/builds.sh ENDPOINT BUILD_DIR... (ENDPOINT: add, the default isolation, or
# addKept, `isolation: "worker"`); CONNECTIONS (default 32), DURATION (default 4), ROUNDS
# (default 3) from the environment. A build folder needs bin/hearth, bin/hearth-js-worker and
# bin/hearth-launch. Prints a Markdown table for docs/benchmarks.md.
cd "$(dirname "$0")/../.."
endpoint=${1:?usage: bench/seed/builds.sh ENDPOINT BUILD_DIR...}
shift
[ $# -ge 1 ] || { echo "usage: bench/seed/builds.sh ENDPOINT BUILD_DIR..." >&2; exit 2; }
builds=("$@")
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-4}
source bench/common.sh "${builds[0]}"
ROUNDS=${ROUNDS:-3}
loader=$BIN/hearth-load

ports=()
for i in "${!builds[@]}"; do
  BIN=${builds[$i]}/bin
  start_hearth "b$i" bench/seed/service --js-workers 2 --log-level error
  ports+=("$(hearth_port "b$i")")
done
BIN=$(dirname "$loader")
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"'"$endpoint"'","input":{"a":1,"b":2}}}'
for i in "${!builds[@]}"; do  # warm-up: workers, caches
  load "warm-$i" "${ports[$i]}" /rpc "$call" '"sum":3' 4 1 --token-file "$work/b$i/token"
done

echo "$CONNECTIONS keep-alive connections, $endpoint, $DURATION s a build, $ROUNDS rounds interleaved; nproc $(nproc)"
echo
echo "| round | build | req/s | p50 (us) | p99 (us) | failures |"
echo "|---:|---|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
  for i in "${!builds[@]}"; do
    name="r$round-b$i"
    load "$name" "${ports[$i]}" /rpc "$call" '"sum":3' "$CONNECTIONS" "$DURATION" \
      --token-file "$work/b$i/token"
    python3 - "$work/$name.json" "$round" "${builds[$i]}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['rps']:,.0f} | {r['p50_us']:,} | {r['p99_us']:,} | {r['failures']} |")
EOF
  done
done
