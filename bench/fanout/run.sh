#!/usr/bin/env bash
# One mutation, N WebSocket subscribers: the time from the mutation's HTTP response to each
# subscriber's lavs/data, read off the kernel's receive timestamps by hearth-fanout (so the client
# reading 10,000 sockets one after another does not inflate the figures).
# Usage: bench/fanout/run.sh [BUILD_DIR]; SUBSCRIBERS (default 10000), ROUNDS (default 20) and
# THREADS (I/O threads, default 2) from the environment. Prints hearth-fanout's JSON line.
cd "$(dirname "$0")/../.."
THREADS=${THREADS:-2}
source bench/common.sh
SUBSCRIBERS=${SUBSCRIBERS:-10000}
ROUNDS=${ROUNDS:-20}
ulimit -n "$(ulimit -Hn)"
start_hearth fanout bench/fanout/service --log-level error --max-connections 15000 \
  --max-websockets 14000
port=$(hearth_port fanout)
"$BIN/hearth-fanout" --port "$port" --token-file "$work/fanout/token" \
  --subscribers "$SUBSCRIBERS" --rounds "$ROUNDS"
