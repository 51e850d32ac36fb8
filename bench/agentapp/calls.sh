#!/usr/bin/env bash
# Calls an Agent App makes, under load (docs/benchmarks.md, "Agent Apps: calls"): the example app
# installed in a fresh state dir and enabled, then hearth-load with 32 connections on
#   bridge   capability/invoke lime.storage get (checks, the app's SQLite, an evidence entry)
#   backend  app/backend/call to its jailed Python backend over stdio
#   manifest lavs/manifest of the notes example, for scale
# Usage: bench/agentapp/calls.sh [BUILD_DIR] (default build/release); DURATION=4 ROUNDS=2.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/release}/bin
duration=${DURATION:-4}
rounds=${ROUNDS:-2}
state=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$state"' EXIT
"$bin/hearth" app install examples/apps/field-notes --dev --state-dir "$state" >/dev/null
"$bin/hearth" app enable field-notes --state-dir "$state" >/dev/null
"$bin/hearth" serve examples/notes --port 0 --state-dir "$state" --ready-file "$state/ready.json" \
  --log-level warn >"$state/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s "$state/ready.json" ]] && break; sleep 0.1; done
port=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['port'])" "$state/ready.json")
declare -A bodies=(
  [bridge]='{"jsonrpc":"2.0","id":1,"method":"capability/invoke","params":{"appId":"field-notes","capability":"lime.storage","method":"get","params":{"key":"k"}}}'
  [backend]='{"jsonrpc":"2.0","id":1,"method":"app/backend/call","params":{"appId":"field-notes","service":"backend","method":"notes.summarise","params":{"notes":["heron at the weir"]}}}'
  [manifest]='{"jsonrpc":"2.0","id":1,"method":"lavs/manifest","params":{"service":"simple-notes"}}'
)
for round in $(seq "$rounds"); do
  for name in bridge backend manifest; do
    printf '%s round %s: ' "$name" "$round"
    "$bin/hearth-load" --port "$port" --token-file "$state/token" --body "${bodies[$name]}" \
      --expect '"result"' --connections 32 --duration "$duration" | tail -1
  done
done
