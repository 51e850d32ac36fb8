#!/usr/bin/env bash
# Idle resident memory and time to ready of `hearth serve examples/`, for one or more hearth
# binaries side by side (rounds interleaved): the resident set of the daemon itself (not its JS
# workers) 3 s after its ready file appears, and how long the ready file took.
#   bench/idle/run.sh [HEARTH_BINARY...]   (default build/release/bin/hearth); ROUNDS (3)
cd "$(dirname "$0")/../.."
bins=("$@")
[[ ${#bins[@]} -eq 0 ]] && bins=(build/release/bin/hearth)
ROUNDS=${ROUNDS:-3}
measure() {
  local bin=$1 d
  d=$(mktemp -d)
  local start
  start=$(date +%s%N)
  "$bin" serve examples --state-dir "$d/state" --ready-file "$d/ready.json" --port 0 --log-level error \
    > "$d/log" 2>&1 &
  local pid=$!
  while [[ ! -s "$d/ready.json" ]]; do
    kill -0 "$pid" 2>/dev/null || { cat "$d/log" >&2; exit 1; }
    sleep 0.01
  done
  local ready_ms=$((($(date +%s%N) - start) / 1000000))
  sleep 3
  local rss
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  kill "$pid"
  wait "$pid" 2>/dev/null
  rm -rf "$d"
  echo "$rss $ready_ms"
}
echo "| binary | round | idle RSS (KiB) | ready after (ms) |"
echo "|---|---:|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
  for bin in "${bins[@]}"; do
    read -r rss ready <<< "$(measure "$bin")"
    echo "| $bin | $round | $rss | $ready |"
  done
done
