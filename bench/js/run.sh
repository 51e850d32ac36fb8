#!/usr/bin/env bash
# JS function handlers against the alternatives, one run, side by side, same load client:
#   1. lavs/call on a `function` endpoint (a + b in a pooled, jailed hearth-js-worker);
#   2. the same endpoint as a `script` handler (node, a process per call, jailed);
#   3. the same tool on an MCP TypeScript SDK server (Streamable HTTP, stateless, JSON responses);
#   4. lavs/manifest on the same daemon (no handler), to read off a worker round trip's share;
# plus `hearth-js-worker --bench-global`: the cost of the fresh global every call gets, and
# `--bench-call`: one call inside a worker without the daemon or pipes.
# The SDK is installed by this script into a cache folder (never into the repository):
#   ${HEARTH_BENCH_CACHE:-~/.cache/hearth/bench-mcp}.
# Usage: bench/js/run.sh [BUILD_DIR] (default build/release). CONNECTIONS, DURATION, THREADS and
# JS_WORKERS may be set in the environment. Prints a Markdown table for docs/benchmarks.md.
cd "$(dirname "$0")/../.."
source bench/common.sh
JS_WORKERS=${JS_WORKERS:-2}
start_js_and_sdk
mcp_port=$sdk_port
call='{"jsonrpc":"2.0","id":1,"method":"lavs/call","params":{"endpoint":"ENDPOINT","input":{"a":1,"b":2}}}'
mcp='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
accept=(--header "Accept: application/json, text/event-stream")

load warmup "$port" /rpc "${call/ENDPOINT/add}" '"sum":3' 4 1 --token-file "$work/js/token"
load mcpwarm "$mcp_port" /mcp "$mcp" '"sum":3' 4 1 "${accept[@]}"
load function "$port" /rpc "${call/ENDPOINT/add}" '"sum":3' "$CONNECTIONS" "$DURATION" --token-file "$work/js/token"
load script "$port" /rpc "${call/ENDPOINT/addScript}" '"sum":3' "$CONNECTIONS" "$DURATION" --token-file "$work/js/token"
load mcp "$mcp_port" /mcp "$mcp" '"sum":3' "$CONNECTIONS" "$DURATION" "${accept[@]}"
# One connection: latency without queueing.
load function1 "$port" /rpc "${call/ENDPOINT/add}" '"sum":3' 1 "$DURATION" --token-file "$work/js/token"
load manifest1 "$port" /rpc '{"jsonrpc":"2.0","id":1,"method":"lavs/manifest"}' '"name":"bench-js"' 1 "$DURATION" --token-file "$work/js/token"
global_us=$("$BIN/hearth-js-worker" --bench-global 2000)
eager_us=$("$BIN/hearth-js-worker" --bench-global 2000 --eager-classes)
call_us=$("$BIN/hearth-js-worker" --bench-call bench/js/service add.mjs add 5000 '{"a":1,"b":2}')

python3 - "$work" "$CONNECTIONS" "$DURATION" "$THREADS" "$JS_WORKERS" "$global_us" "$eager_us" "$call_us" <<'PY'
import json, os, sys
work, conns, dur, threads, workers, global_us, eager_us, call_us = sys.argv[1:]
r = {n: json.load(open(os.path.join(work, n + ".json")))
     for n in ("function", "script", "mcp", "function1", "manifest1")}
mcp = r["mcp"]["rps"]
print(f"{conns} keep-alive connections, {dur} s each; hearth: {threads} I/O thread(s), "
      f"{workers} JS workers; nproc: {os.cpu_count()}\n")
print("| target | req/s | p50 (us) | p99 (us) | failures | req/s vs MCP SDK |")
print("|---|---:|---:|---:|---:|---:|")
rows = [("lavs/call, `function` handler (jailed JS worker pool)", "function"),
        ("lavs/call, `script` handler (node per call, jailed)", "script"),
        ("MCP TypeScript SDK, tools/call (Streamable HTTP, stateless)", "mcp")]
for label, key in rows:
    x = r[key]
    print(f"| {label} | {x['rps']:.0f} | {x['p50_us']:.0f} | {x['p99_us']:.0f} | "
          f"{x['failures']} | {x['rps'] / mcp:.2f} |")
trip = r["function1"]["p50_us"] - r["manifest1"]["p50_us"]
print(f"\nOne connection: lavs/call on the function endpoint p50 {r['function1']['p50_us']:.0f} us, "
      f"lavs/manifest p50 {r['manifest1']['p50_us']:.0f} us: a worker round trip (frame out, fresh "
      f"global, module instantiated and evaluated, call, frame back) adds about {trip:.0f} us.")
print(f"A fresh global (new realm, hearth's globals): {float(global_us):.1f} us "
      f"(`hearth-js-worker --bench-global 2000`); with every standard class initialised up front: "
      f"{float(eager_us):.1f} us (`--eager-classes`).")
print(f"One call inside a worker, without the daemon or pipes: {float(call_us):.1f} us "
      "(`hearth-js-worker --bench-call bench/js/service add.mjs add 5000 '{\"a\":1,\"b\":2}'`).")
PY
