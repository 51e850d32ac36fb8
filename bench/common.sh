# Sourced by the benchmark scripts (bench/run.sh, bench/js/run.sh, bench/outbound/run.sh), run from
# the repository's root with the build folder as $1 (default build/release). Sets BIN,
# CONNECTIONS, DURATION, THREADS (from the environment), a scratch folder $work removed at exit
# with every process started through `background`.
set -euo pipefail
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

# background COMMAND...: starts it, stopped at exit.
background() {
  "$@" &
  pids+=($!)
}

# start_hearth NAME [serve arguments...]: `hearth serve` on a free port, its files in $work/NAME.
start_hearth() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  background "$BIN/hearth" serve "$@" --port 0 --threads "$THREADS" \
    --ready-file "$work/$name/ready.json" --state-dir "$work/$name/state" \
    --token-file "$work/$name/token" > /dev/null
}

# wait_for FILE...: until each exists and is not empty (10 s at most).
wait_for() {
  for _ in $(seq 200); do
    local all=1
    for f in "$@"; do [ -s "$f" ] || all=0; done
    [ "$all" = 1 ] && return 0
    sleep 0.05
  done
  echo "bench: timed out waiting for $*" >&2
  return 1
}

# hearth_port NAME: the port of the daemon start_hearth NAME started.
hearth_port() {
  wait_for "$work/$1/ready.json"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/$1/ready.json"
}

# load RESULT PORT PATH BODY EXPECT CONNECTIONS SECONDS [hearth-load arguments...]: one
# hearth-load run, its JSON report in $work/RESULT.json.
load() {
  local name=$1 port=$2 path=$3 body=$4 expect=$5 conns=$6 dur=$7
  shift 7
  "$BIN/hearth-load" --port "$port" --path "$path" --body "$body" --expect "$expect" \
    --connections "$conns" --duration "$dur" "$@" > "$work/$name.json"
}

# mcp_sdk_server: the MCP TypeScript SDK and bench/js/mcp-server.mjs in a cache folder outside
# the repository (${HEARTH_BENCH_CACHE:-~/.cache/hearth/bench-mcp}); prints that folder.
mcp_sdk_server() {
  source tests/npm_cache.sh
  local cache=${HEARTH_BENCH_CACHE:-$HOME/.cache/hearth/bench-mcp}
  npm_cache_install bench "$cache" "@modelcontextprotocol/sdk@^1" > /dev/null
  cp bench/js/mcp-server.mjs "$cache/mcp-server.mjs"
  echo "$cache"
}

# start_js_and_sdk: hearth serving bench/js/service (JS_WORKERS workers, default 2) and the MCP
# SDK's server doing the same tool beside it; sets `port` (hearth) and `sdk_port`.
start_js_and_sdk() {
  local cache
  cache=$(mcp_sdk_server)
  start_hearth js bench/js/service --js-workers "${JS_WORKERS:-2}" --log-level error
  background sh -c 'cd "$1" && exec node mcp-server.mjs "$2"' - "$cache" "$work/mcp.port"
  port=$(hearth_port js)
  wait_for "$work/mcp.port"
  sdk_port=$(cat "$work/mcp.port")
}
