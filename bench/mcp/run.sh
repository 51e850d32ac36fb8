#!/usr/bin/env bash
# tools/call through hearth's MCP endpoint against the MCP TypeScript SDK's server doing the same
# work, one run, same load client (hearth-load), rounds interleaved:
#   1. hearth /mcp, tools/call `add` (a `function` endpoint: jailed, pooled JS worker), stateless;
#   2. hearth /rpc, lavs/call on the same endpoint (the MCP layer's share is the difference);
#   3. the MCP TypeScript SDK, tools/call `add` (Streamable HTTP, stateless, JSON responses).
# Usage: bench/mcp/run.sh [BUILD_DIR]. CONNECTIONS, DURATION (per round), ROUNDS, THREADS and
# JS_WORKERS may be set in the environment. Prints a Markdown table for docs/benchmarks.md.
cd "$(dirname "$0")/../.."
source bench/common.sh
JS_WORKERS=${JS_WORKERS:-2}
ROUNDS=${ROUNDS:-3}
start_js_and_sdk
tool='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"add","input":{"a":1,"b":2}}}'
accept=(--header "Accept: application/json, text/event-stream")
token=(--token-file "$work/js/token")

load warm1 "$port" /mcp "$tool" '"sum":3' 4 1 "${token[@]}" "${accept[@]}"
load warm2 "$sdk_port" /mcp "$tool" '"sum":3' 4 1 "${accept[@]}"
for round in $(seq 1 "$ROUNDS"); do
  load "hearth_mcp_$round" "$port" /mcp "$tool" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}" "${accept[@]}"
  load "hearth_rpc_$round" "$port" /rpc "$call" '"sum":3' "$CONNECTIONS" "$DURATION" "${token[@]}"
  load "sdk_$round" "$sdk_port" /mcp "$tool" '"sum":3' "$CONNECTIONS" "$DURATION" "${accept[@]}"
done

python3 - "$work" "$CONNECTIONS" "$DURATION" "$ROUNDS" "$THREADS" "$JS_WORKERS" <<'PY'
import json, os, sys
work, conns, dur, rounds, threads, workers = sys.argv[1:]
rounds = int(rounds)
def runs(key):
    return [json.load(open(os.path.join(work, f"{key}_{i}.json"))) for i in range(1, rounds + 1)]
rows = [("hearth /mcp, tools/call (`function` endpoint, stateless)", "hearth_mcp"),
        ("hearth /rpc, lavs/call on the same endpoint", "hearth_rpc"),
        ("MCP TypeScript SDK, tools/call (Streamable HTTP, stateless)", "sdk")]
sdk = [r["rps"] for r in runs("sdk")]
print(f"{conns} keep-alive connections, {rounds} interleaved rounds of {dur} s; hearth: {threads} I/O "
      f"thread(s), {workers} JS workers; nproc: {os.cpu_count()}\n")
print("| target | req/s per round | p50 (us) | p99 (us) | failures | req/s vs MCP SDK (per round) |")
print("|---|---:|---:|---:|---:|---:|")
for label, key in rows:
    rs = runs(key)
    rps = " / ".join(f"{r['rps']:.0f}" for r in rs)
    ratio = " / ".join(f"{r['rps'] / s:.2f}" for r, s in zip(rs, sdk))
    p50 = max(r["p50_us"] for r in rs)
    p99 = max(r["p99_us"] for r in rs)
    fails = sum(r["failures"] for r in rs)
    print(f"| {label} | {rps} | {p50:.0f} | {p99:.0f} | {fails} | {ratio} |")
PY
