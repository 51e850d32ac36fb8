#!/usr/bin/env bash
# Installs the reference MCP servers the mcp handler is tested against, pinned, into a cache
# folder outside the repository, and prints that folder's node_modules path. Idempotent: a
# complete install is reused.
#   @modelcontextprotocol/server-everything   stdio and Streamable HTTP
#   @modelcontextprotocol/server-filesystem   stdio
#   HEARTH_MCP_CACHE overrides the folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp).
# Exit 77 (skipped) when npm is not installed at all; any other failure is an error.
set -euo pipefail
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
dir=${HEARTH_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp}
stamp="$dir/.installed-everything-$EVERYTHING_VERSION-filesystem-$FILESYSTEM_VERSION"
if [[ ! -f "$stamp" ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup_servers: npm is not installed (Debian package 'npm')" >&2
    exit 77
  fi
  mkdir -p "$dir"
  # A lock keeps two test runs from installing into the same folder at once.
  exec 9>"$dir/.lock"
  flock 9
  if [[ ! -f "$stamp" ]]; then
    [[ -f "$dir/package.json" ]] || echo '{"name":"hearth-mcp-test-servers","private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
      "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
    touch "$stamp"
  fi
fi
echo "$dir/node_modules"
