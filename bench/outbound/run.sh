#!/usr/bin/env bash
# Handlers that reach out, against the services they call, one run, side by side, same load client:
#   1. a plain JSON HTTP service (node) called directly, and
#   2. through a hearth `http` endpoint (POST, JSON body; the daemon's pooled client);
#   3. the MCP TypeScript SDK server (Streamable HTTP, stateless, JSON responses) called directly
#      with tools/call, and
#   4. through a hearth `mcp` endpoint on that server (Streamable HTTP);
#   5. a hearth `mcp` endpoint on @modelcontextprotocol/server-everything over stdio (get-sum),
#      one jailed server process kept between calls.
# The ratio of 2 to 1 and of 4 to 3 is what hearth in front of a service costs.
# Usage: bench/outbound/run.sh [BUILD_DIR] (default build/release). CONNECTIONS, DURATION and
# THREADS may be set in the environment. Prints a Markdown table for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/release}
BIN=$BUILD/bin
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-10}
THREADS=${THREADS:-1}
CACHE=${HEARTH_BENCH_CACHE:-$HOME/.cache/hearth/bench-mcp}

mkdir -p "$CACHE"
if [ ! -f "$CACHE/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  npm install --prefix "$CACHE" --no-audit --no-fund --silent @modelcontextprotocol/sdk@^1 >&2
fi
cp bench/js/mcp-server.mjs "$CACHE/mcp-server.mjs"
servers=$(bash tests/mcp/setup_servers.sh)

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

node bench/outbound/backend.mjs "$work/backend.port" &
pids+=($!)
(cd "$CACHE" && exec node mcp-server.mjs "$work/mcp.port") &
pids+=($!)
for _ in $(seq 200); do [ -s "$work/backend.port" ] && [ -s "$work/mcp.port" ] && break; sleep 0.05; done
backend=$(cat "$work/backend.port")
mcp_port=$(cat "$work/mcp.port")

svc="$work/outbound"
mkdir -p "$svc"
cp -al "$servers" "$svc/node_modules"
cat > "$svc/mcp-config.json" <<JSON
{"mcpServers": {
  "sdk": {"url": "http://127.0.0.1:$mcp_port/mcp"},
  "everything": {"command": "node",
                 "args": ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]}}}
JSON
input='"schema": {"input": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}'
cat > "$svc/lavs.json" <<JSON
{"lavs": "1.0", "name": "outbound", "version": "1.0.0",
 "endpoints": [
  {"id": "httpAdd", "method": "query", $input,
   "handler": {"type": "http", "url": "http://127.0.0.1:$backend/add", "method": "POST"}},
  {"id": "mcpHttpAdd", "method": "query", $input,
   "handler": {"type": "mcp", "server": "sdk", "tool": "add"}},
  {"id": "mcpStdioSum", "method": "query", $input,
   "handler": {"type": "mcp", "server": "everything", "tool": "get-sum"}}],
 "permissions": {"networkAccess": ["127.0.0.1"]}}
JSON

"$BIN/hearth" serve "$svc" --port 0 --threads "$THREADS" \
  --log-level error --ready-file "$work/ready.json" --state-dir "$work/state" \
  --token-file "$work/token" > /dev/null &
pids+=($!)
for _ in $(seq 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/ready.json")

run() {  # name port path body expect connections duration [extra args...]
  local name=$1 port=$2 path=$3 body=$4 expect=$5 conns=$6 dur=$7
  shift 7
  "$BIN/hearth-load" --port "$port" --path "$path" --body "$body" --expect "$expect" \
    --connections "$conns" --duration "$dur" "$@" > "$work/$name.json"
}
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"ENDPOINT","input":{"a":1,"b":2}}}'
mcp='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
accept=(--header "Accept: application/json, text/event-stream")
token=(--token-file "$work/token")

# Warm-up: connections, the MCP sessions and the stdio server start.
run w1 "$port" /rpc "${call/ENDPOINT/httpAdd}" '"sum":3' 4 1 "${token[@]}"
run w2 "$port" /rpc "${call/ENDPOINT/mcpHttpAdd}" '"sum":3' 4 1 "${token[@]}"
run w3 "$port" /rpc "${call/ENDPOINT/mcpStdioSum}" '3' 4 1 "${token[@]}"

run direct_http "$backend" /add '{"a":1,"b":2}' '"sum":3' "$CONNECTIONS" "$DURATION" --plain
run hearth_http "$port" /rpc "${call/ENDPOINT/httpAdd}" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
run direct_mcp "$mcp_port" /mcp "$mcp" '"sum":3' "$CONNECTIONS" "$DURATION" "${accept[@]}"
run hearth_mcp "$port" /rpc "${call/ENDPOINT/mcpHttpAdd}" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
run hearth_stdio "$port" /rpc "${call/ENDPOINT/mcpStdioSum}" '3' "$CONNECTIONS" "$DURATION" "${token[@]}"

python3 - "$work" "$CONNECTIONS" "$DURATION" "$THREADS" <<'PY'
import json, os, sys
work, conns, dur, threads = sys.argv[1:]
r = {n: json.load(open(os.path.join(work, n + ".json")))
     for n in ("direct_http", "hearth_http", "direct_mcp", "hearth_mcp", "hearth_stdio")}
print(f"{conns} keep-alive connections, {dur} s each; hearth: {threads} I/O thread(s); "
      f"nproc: {os.cpu_count()}\n")
print("| target | req/s | p50 (us) | p99 (us) | failures | vs direct |")
print("|---|---:|---:|---:|---:|---:|")
rows = [("node JSON service, called directly", "direct_http", "direct_http"),
        ("the same through a hearth `http` endpoint", "hearth_http", "direct_http"),
        ("MCP TypeScript SDK server, tools/call directly (Streamable HTTP)", "direct_mcp", "direct_mcp"),
        ("the same tool through a hearth `mcp` endpoint (Streamable HTTP)", "hearth_mcp", "direct_mcp"),
        ("server-everything get-sum through a hearth `mcp` endpoint (stdio, jailed)", "hearth_stdio", None)]
for label, key, base in rows:
    x = r[key]
    ratio = f"{x['rps'] / r[base]['rps']:.2f}" if base else "-"
    print(f"| {label} | {x['rps']:.0f} | {x['p50_us']:.0f} | {x['p99_us']:.0f} | {x['failures']} | {ratio} |")
PY
