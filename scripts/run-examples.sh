#!/usr/bin/env bash
# `make run`: the daemon on the bundled examples, with the local servers they call: the bookshelf
# example's catalogue (its http endpoints). Its MCP server is a stdio server hearth starts itself.
#   scripts/run-examples.sh HEARTH_BINARY PORT
set -euo pipefail
cd "$(dirname "$0")/.."
hearth=$1
port=$2
python3 examples/bookshelf/catalog/server.py --port 8765 &
catalog=$!
trap 'kill $catalog 2>/dev/null || true' EXIT INT TERM
"$hearth" serve examples/ --port "$port"
