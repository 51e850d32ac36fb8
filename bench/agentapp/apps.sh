#!/usr/bin/env bash
# The capability bridge with several apps at once (docs/benchmarks.md, "Agent Apps: the bridge for
# 8 apps at once"). APPS copies of the field-notes example, each under its own name, installed
# and enabled in a fresh state dir; then `capability/invoke lime.storage get` (the checks, the
# app's own SQLite database, an evidence entry committed to disk) with hearth-load:
#   alone   one app, CONNECTIONS connections, the others idle;
#   all     every app at once, one hearth-load per app with CONNECTIONS connections each.
# If no app waits for another's query, each app's rate with all of them running stays near its
# rate alone until the machine (CPU or the disk's flushes) is full; the sum is printed too.
# Usage: bench/agentapp/apps.sh [BUILD_DIR] (default build/release); APPS=8 CONNECTIONS=4
# DURATION=4 ROUNDS=2 from the environment.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/release}/bin
apps=${APPS:-8}
connections=${CONNECTIONS:-4}
duration=${DURATION:-4}
rounds=${ROUNDS:-2}
state=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$state"' EXIT
for i in $(seq "$apps"); do
  name="notes-$i"
  cp -r examples/apps/field-notes "$state/$name"
  sed -i "s/^name: field-notes$/name: $name/" "$state/$name/APP.md"
  "$bin/hearth" app install "$state/$name" --dev --state-dir "$state/hearth" >/dev/null
  "$bin/hearth" app enable "$name" --state-dir "$state/hearth" >/dev/null
done
"$bin/hearth" serve examples/notes --port 0 --state-dir "$state/hearth" \
  --ready-file "$state/ready.json" --log-level warn >"$state/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s "$state/ready.json" ]] && break; sleep 0.1; done
port=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['port'])" "$state/ready.json")
body() {
  printf '{"jsonrpc":"2.0","id":1,"method":"capability/invoke","params":{"appId":"notes-%s","capability":"lime.storage","method":"get","params":{"key":"k"}}}' "$1"
}
load() {  # app out
  "$bin/hearth-load" --port "$port" --token-file "$state/hearth/token" --body "$(body "$1")" \
    --expect '"result"' --connections "$connections" --duration "$duration" > "$2"
}
load 1 /dev/null  # warm-up: each app's database opened once
for i in $(seq 2 "$apps"); do "$bin/hearth-load" --port "$port" --token-file "$state/hearth/token" \
  --body "$(body "$i")" --expect '"result"' --connections 1 --requests 20 >/dev/null; done
snap() {  # out: the daemon's CPU (us) and the machine's busy and total jiffies
  { python3 bench/proc_cpu.py "$pid" | cut -d' ' -f1; head -1 /proc/stat | awk '{b=$2+$3+$4+$7+$8; print b, b+$5+$6}'; } > "$1"
}
for round in $(seq "$rounds"); do
  snap "$state/alone-$round.cpu0"
  load 1 "$state/alone-$round.json"
  snap "$state/alone-$round.cpu1"
  children=()
  snap "$state/all-$round.cpu0"
  for i in $(seq "$apps"); do
    load "$i" "$state/all-$round-$i.json" &
    children+=($!)
  done
  wait "${children[@]}"
  snap "$state/all-$round.cpu1"
done
python3 - "$state" "$apps" "$rounds" "$connections" "$duration" <<'PY'
import json, os, sys
state, apps, rounds, conns, dur = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def last(path):
    return json.loads(open(path).read().strip().splitlines()[-1])
def cpu(name, requests):
    a = open(os.path.join(state, name + ".cpu0")).read().split()
    b = open(os.path.join(state, name + ".cpu1")).read().split()
    own = (float(b[0]) - float(a[0])) / max(1, requests)
    busy = (int(b[1]) - int(a[1])) / max(1, int(b[2]) - int(a[2]))
    return f"{own:.0f} | {busy:.0%}"
print(f"capability/invoke lime.storage get; {conns} connections an app, {dur} s; nproc {os.cpu_count()}\n")
print("| round | load | apps | req/s an app (min / median / max) | sum req/s | p50 an app, median (us) | p99 an app, max (us) | failures | daemon CPU/req (us) | machine busy |")
print("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|")
for r in range(1, rounds + 1):
    a = last(os.path.join(state, f"alone-{r}.json"))
    print(f"| {r} | one app alone | 1 | {a['rps']:.0f} | {a['rps']:.0f} | {a['p50_us']:.0f} | {a['p99_us']:.0f} | {a['failures']} | {cpu('alone-' + str(r), a['requests'])} |")
    xs = [last(os.path.join(state, f"all-{r}-{i}.json")) for i in range(1, apps + 1)]
    rps = sorted(x["rps"] for x in xs)
    p50 = sorted(x["p50_us"] for x in xs)
    print(f"| {r} | all at once | {apps} | {rps[0]:.0f} / {rps[len(rps)//2]:.0f} / {rps[-1]:.0f} | "
          f"{sum(rps):.0f} | {p50[len(p50)//2]:.0f} | {max(x['p99_us'] for x in xs):.0f} | "
          f"{sum(x['failures'] for x in xs)} | {cpu('all-' + str(r), sum(x['requests'] for x in xs))} |")
PY
