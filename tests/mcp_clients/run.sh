#!/usr/bin/env bash
# Real MCP clients against hearth, unchanged: the MCP TypeScript SDK's Client and the MCP
# Inspector's CLI, over stdio (`hearth mcp serve`) and Streamable HTTP (/mcp on the daemon).
# Both are installed pinned into a cache folder outside the repository (tests/npm_cache.sh).
#   run.sh HEARTH_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../npm_cache.sh"
modules=$(npm_cache_install mcp_clients \
  "${HEARTH_MCP_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp-clients}" \
  @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/inspector-cli@1.0.3)
export HEARTH_BIN="$(realpath "$1")" HEARTH_MCP_MODULES="$modules" HEARTH_FIXTURE="$here/../services/mcp" \
  HEARTH_EXAMPLES="$here/../../examples"
exec node --test --test-reporter=spec "$here/clients.test.mjs"
