#!/usr/bin/env bash
# Browser tests of the view host: Debian's chromium driven by playwright-core, against the real
# daemon. Usage: tests/e2e/run.sh [path/to/hearth] [test files...]
# playwright-core is installed once into the cache (never into the repository).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
hearth="${1:-$root/build/release/bin/hearth}"
shift || true
playwright_version="1.65.1"
cache="${HEARTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth}/e2e"

if [[ ! -x "$hearth" ]]; then
  echo "e2e: no hearth binary at $hearth" >&2
  exit 2
fi
chromium="${HEARTH_CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
  echo "e2e: $chromium is missing (apt-get install -y chromium, or scripts/install-deps.sh)" >&2
  exit 2
fi
installed="$cache/node_modules/playwright-core/package.json"
if [[ ! -f "$installed" ]] || ! grep -q "\"version\": \"$playwright_version\"" "$installed"; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "playwright-core@$playwright_version" >&2
fi

# The official MCP Apps host side for tests/e2e/mcp-app-bridge.test.mjs: ext-apps' AppBridge and
# the MCP SDK client it is built on (its peers, pinned), bundled for the page by esbuild.
source "$root/tests/npm_cache.sh"
HEARTH_E2E_MCP_APPS_MODULES=$(npm_cache_install e2e "$cache/mcp-apps" \
  @modelcontextprotocol/ext-apps@2.0.4 @modelcontextprotocol/client@2.0.0 \
  @modelcontextprotocol/core@2.0.0 zod@4.6.7 esbuild@0.25.12)
export HEARTH_E2E_MCP_APPS_MODULES

# Node 22 has a global WebSocket; Node 20 has it behind a flag. The tests use it to ask the daemon
# for view/mounts and to drive lavs-client.js.
node_flags=()
if ! node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)'; then
  node_flags+=(--experimental-websocket)
fi

export HEARTH_BIN="$(cd "$(dirname "$hearth")" && pwd)/$(basename "$hearth")"
export HEARTH_E2E_CACHE="$cache"
export HEARTH_CHROMIUM="$chromium"
export HEARTH_E2E_ARTIFACTS="${HEARTH_E2E_ARTIFACTS:-$root/build/e2e-artifacts}"
mkdir -p "$HEARTH_E2E_ARTIFACTS"

cd "$root"
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  files=(tests/e2e/*.test.mjs)
fi
# One file at a time: each starts its own daemon and browser.
exec node "${node_flags[@]}" --test --test-concurrency=1 "${files[@]}"
