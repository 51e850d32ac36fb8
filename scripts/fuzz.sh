#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (the `fuzz` preset, Debian's clang) and runs each for
# FUZZ_SECONDS (default 60), starting from its corpus in fuzz/corpus/<target>. New inputs go to a
# scratch folder, crashes to build/fuzz/findings/<target>/. Prints the executions per target.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
targets=(json jsonrpc schema manifest lafs egress_request js_frame jsworker_message mcp_sse mcp_message
         http_response a2s_template a2s_definition model_stream)
[ $# -gt 0 ] && targets=("$@")  # or only those named
cmake --preset fuzz > /dev/null
cmake --build --preset fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
status=0
for t in "${targets[@]}"; do
  scratch=$(mktemp -d)
  mkdir -p "build/fuzz/findings/$t"
  log=$(mktemp)
  if ! build/fuzz/bin/fuzz_"$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build/fuzz/findings/$t/" "$scratch" "fuzz/corpus/$t" > "$log" 2>&1; then
    echo "fuzz: $t FAILED (input in build/fuzz/findings/$t/)"; tail -30 "$log"; status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -z "$execs" ] && execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  echo "fuzz: $t: ${execs:-?} executions in ${SECONDS_EACH} s, $(ls "$scratch" | wc -l) new inputs"
  rm -rf "$scratch" "$log"
done
exit $status
