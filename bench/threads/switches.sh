#!/usr/bin/env bash
# Where a second I/O thread's time goes: context switches, CPU migrations and CPU time per
# request of the raw Beast echo server and of hearth's lavs/manifest, each with --threads 1 and
# --threads 2, under the same load (hearth-load, 32 connections, 4 s), read by `perf stat -p`.
#   bench/threads/switches.sh [BUILD_DIR]   (default build/release); prints Markdown rows.
# Needs perf (Debian: linux-perf, not installed by scripts/install-deps.sh: benchmarks only).
cd "$(dirname "$0")/../.."
B=${1:-build/release}/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| server | threads | requests | context switches/req | migrations/req | task-clock us/req |"
echo "|---|---:|---:|---:|---:|---:|"
for t in 1 2; do
  $B/hearth-echo-server --threads $t > $work/e$t.port & epid=$!
  d=$(mktemp -d)
  $B/hearth serve tests/services/load --port 0 --threads $t --log-level error --ready-file $d/ready.json --state-dir $d/state --token-file $d/token > /dev/null 2>&1 & hpid=$!
  while [ ! -s $d/ready.json ] || [ ! -s $work/e$t.port ]; do sleep 0.05; done
  hport=$(python3 -c "import json;print(json.load(open('$d/ready.json'))['port'])")
  eport=$(cat $work/e$t.port)
  for target in echo hearth; do
    if [ $target = echo ]; then pid=$epid; args="--port $eport --body {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"; else pid=$hpid; args="--port $hport --token-file $d/token --body {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lavs/manifest\"}"; fi
    $B/hearth-load $args --path /rpc --expect '"result"' --connections 4 --duration 1 > /dev/null
    perf stat -e task-clock,context-switches,cpu-migrations -p $pid -o $work/perf-$target-$t.txt -- sleep 4.5 &
    ppid=$!
    out=$($B/hearth-load $args --path /rpc --expect '"result"' --connections 32 --duration 4)
    wait $ppid
    req=$(echo "$out" | python3 -c "import json,sys;print(json.load(sys.stdin)['requests'])")
    cs=$(awk '/context-switches/ {gsub(",","",$1); print $1}' $work/perf-$target-$t.txt)
    mig=$(awk '/cpu-migrations/ {gsub(",","",$1); print $1}' $work/perf-$target-$t.txt)
    tc=$(awk '/task-clock/ {gsub(",","",$1); print $1}' $work/perf-$target-$t.txt)
    python3 -c "r=$req; print(f'| $target | $t | {r} | {$cs/r:.3f} | {$mig/r:.4f} | {$tc*1000/r:.1f} |')"
  done
  kill $epid $hpid; wait $epid $hpid 2>/dev/null; rm -rf $d
done
