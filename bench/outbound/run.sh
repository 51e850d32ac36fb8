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
cd "$(dirname "$0")/../.."
source bench/common.sh
CACHE=$(mcp_sdk_server)
servers=$(bash tests/mcp/setup_servers.sh)

background node bench/outbound/backend.mjs "$work/backend.port"
background sh -c 'cd "$1" && exec node mcp-server.mjs "$2"' - "$CACHE" "$work/mcp.port"
wait_for "$work/backend.port" "$work/mcp.port"
backend=$(cat "$work/backend.port")
mcp_port=$(cat "$work/mcp.port")

svc="$work/svc"
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

start_hearth outbound "$svc" --log-level error
port=$(hearth_port outbound)
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"ENDPOINT","input":{"a":1,"b":2}}}'
mcp='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
accept=(--header "Accept: application/json, text/event-stream")
token=(--token-file "$work/outbound/token")

# Warm-up: connections, the MCP sessions and the stdio server start.
load w1 "$port" /rpc "${call/ENDPOINT/httpAdd}" '"sum":3' 4 1 "${token[@]}"
load w2 "$port" /rpc "${call/ENDPOINT/mcpHttpAdd}" '"sum":3' 4 1 "${token[@]}"
load w3 "$port" /rpc "${call/ENDPOINT/mcpStdioSum}" '3' 4 1 "${token[@]}"

load direct_http "$backend" /add '{"a":1,"b":2}' '"sum":3' "$CONNECTIONS" "$DURATION" --plain
load hearth_http "$port" /rpc "${call/ENDPOINT/httpAdd}" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
load direct_mcp "$mcp_port" /mcp "$mcp" '"sum":3' "$CONNECTIONS" "$DURATION" "${accept[@]}"
load hearth_mcp "$port" /rpc "${call/ENDPOINT/mcpHttpAdd}" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
load hearth_stdio "$port" /rpc "${call/ENDPOINT/mcpStdioSum}" '3' "$CONNECTIONS" "$DURATION" "${token[@]}"

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
