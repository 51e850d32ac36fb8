#!/usr/bin/env bash
# Installs the reference MCP servers the mcp handler is tested against, pinned, into a cache
# folder outside the repository, and prints that folder's node_modules path (see
# tests/npm_cache.sh).
#   @modelcontextprotocol/server-everything   stdio and Streamable HTTP
#   @modelcontextprotocol/server-filesystem   stdio
#   HEARTH_MCP_CACHE overrides the folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp).
set -euo pipefail
source "$(dirname "$0")/../npm_cache.sh"
npm_cache_install setup_servers "${HEARTH_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/mcp}" \
  @modelcontextprotocol/server-everything@2026.8.31 \
  @modelcontextprotocol/server-filesystem@2026.8.31
