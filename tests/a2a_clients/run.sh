#!/usr/bin/env bash
# The official A2A JS SDK against hearth, unchanged: @a2a-js/sdk's ClientFactory in its default
# A2A 1.0 mode (JSON-RPC and HTTP+JSON) and its 0.3 compatibility mode (legacyCompat). Installed
# pinned into a cache folder outside the repository (tests/npm_cache.sh).
#   run.sh HEARTH_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../npm_cache.sh"
modules=$(npm_cache_install a2a_clients \
  "${HEARTH_A2A_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/a2a-clients}" \
  @a2a-js/sdk@1.3.0)
export HEARTH_BIN="$(realpath "$1")" HEARTH_A2A_MODULES="$modules" HEARTH_FIXTURE="$here/../services/mcp"
exec node --test --test-reporter=spec "$here/clients.test.mjs"
