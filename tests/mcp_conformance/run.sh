#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, the newest version that
# runs on Node 20: 0.1.14 and later need Node 22's fs.globSync) against hearth's /mcp, with the
# expected failures of expected-failures.yml (reasons in docs/conformance.md). The daemon serves
# tests/services/mcp, whose endpoints are the tools the scenarios call.
#   run.sh HEARTH_BINARY [--suite active|all|pending]
# The suite speaks Streamable HTTP only; stdio is tested by tests/mcp_clients (the SDK's client
# and the Inspector CLI) and tests/integration/test_mcp_server.py, on the same protocol engine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hearth="$(realpath "$1")"
shift
suite=("$@")
[[ ${#suite[@]} -eq 0 ]] && suite=(--suite all)
source "$here/../npm_cache.sh"
modules=$(npm_cache_install mcp_conformance \
  "${HEARTH_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp-conformance}" \
  @modelcontextprotocol/conformance@0.1.13)

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
node "$modules/.bin/conformance" server --url "$url/mcp?token=$token" "${suite[@]}" \
  --expected-failures "$here/expected-failures.yml" -o "$tmp/results"
