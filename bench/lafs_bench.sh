#!/usr/bin/env bash
# LAFS envelope validation throughput, hearth against ajv, in one run on this machine.
# Usage: bench/lafs_bench.sh [BUILD_DIR] [SECONDS]   (default build/release, 3 s each)
# Needs ajv in the cache folder (tests/lafs/setup_ajv.sh installs it) and ../shared beside the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
SECONDS_EACH=${2:-3}
LAFS=../shared/conformance/lafs
modules=$(bash tests/lafs/setup_ajv.sh)
hearth=$("$BUILD/bin/hearth-lafs-bench" "$LAFS/fixtures" "$SECONDS_EACH")
ajv=$(NODE_PATH="$modules" node bench/lafs_ajv_bench.cjs "$LAFS/schemas/v1/envelope.schema.json" "$LAFS/fixtures" "$SECONDS_EACH")
echo "$hearth"
echo "$ajv"
python3 - "$hearth" "$ajv" <<'PY'
import json, sys
h, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert h["documents"] == a["documents"] and h["valid"] == a["valid"], "the two sides saw different documents"
print(f"| validator | documents (valid) | validations/s |")
print(f"|---|---:|---:|")
print(f"| hearth (src/lafs) | {h['documents']} ({h['valid']}) | {h['perSecond']} |")
print(f"| ajv 8 + ajv-formats (node {__import__('subprocess').check_output(['node','--version'],text=True).strip()}) | {a['documents']} ({a['valid']}) | {a['perSecond']} |")
print(f"hearth/ajv ratio: {h['perSecond'] / a['perSecond']:.2f}")
PY
