#!/usr/bin/env bash
# `make run`: the daemon on the bundled examples, with the local servers they call: the bookshelf
# example's catalogue (its http endpoints) and the three A2S example services of
# examples/registry (local test domains localhost:8741-8743). Its MCP server is a stdio server
# hearth starts itself. The virtual workspaces of examples/workspace-search (its side effects
# call the product-catalog service) and examples/trip-planner (whose trip-services endpoints are
# backed by the registry's capabilities) are served too; agent runs need a model server: pass
# HEARTH_SERVE_ARGS="--model-url http://127.0.0.1:11434/v1 --model qwen2.5:7b" for Ollama.
# The Agent App of examples/apps/field-notes is installed in development mode (docs/agent-apps.md).
#   scripts/run-examples.sh HEARTH_BINARY PORT
set -euo pipefail
cd "$(dirname "$0")/.."
hearth=$1
port=$2
# One daemon per state folder: a second `make run` says where the first one is instead of
# starting the example servers again.
if "$hearth" status >/dev/null 2>&1; then
  "$hearth" status >&2
  echo "run-examples: hearth already runs (above); \`$hearth stop\` stops it" >&2
  exit 1
fi
python3 examples/bookshelf/catalog/server.py --port 8765 &
catalog=$!
python3 examples/registry/servers/example_services.py --bind 127.0.0.1 --ports 8741,8742,8743 &
services=$!
trap 'kill $catalog $services 2>/dev/null || true' EXIT INT TERM
# The example services' demo credentials, stored once in the vault (never over an existing value).
seed() {
  if ! "$hearth" vault get "$1" "$2" >/dev/null 2>&1; then
    printf '%s' "$3" | "$hearth" vault set "$1" "$2" >/dev/null
  fi
}
seed localhost:8741 API_KEY demo-weather-key
seed localhost:8742 CLIENT_ID demo-client
seed localhost:8742 CLIENT_SECRET demo-secret
seed localhost:8743 API_KEY demo-hotel-key
# The example Agent App, installed (unsigned, so in development mode) and left disabled for the
# person to review: `hearth app show field-notes`, then `hearth app enable field-notes`.
# A failure here is reported and does not stop the daemon from serving everything else.
if ! "$hearth" app show field-notes >/dev/null 2>&1; then
  "$hearth" app install examples/apps/field-notes --dev ||
    echo "run-examples: the example app was not installed (see above)" >&2
fi
"$hearth" serve examples/ examples/trip-planner/service --port "$port" --registry examples/registry \
  --local-domain localhost:8741 --local-domain localhost:8742 --local-domain localhost:8743 \
  --workspace examples/workspace-search/workspace --workspace examples/trip-planner/workspace \
  ${HEARTH_SERVE_ARGS:-}
