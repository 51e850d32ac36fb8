#!/usr/bin/env bash
# ctest entry of the differential test: installs ajv into the cache (setup_ajv.sh), then lets
# hearth_lafs_differential compare hearth's envelope validation with ajv on the fixtures and on
# COUNT seeded mutations. The ajv side reads the reference schema from ../shared; hearth's side
# uses its built-in validator.
# Usage: differential.sh HEARTH_LAFS_DIFFERENTIAL_BINARY [COUNT] [SEED]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${HEARTH_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
lafs="$src/../shared/conformance/lafs"
modules=$("$here/setup_ajv.sh") || exit $?
exec "$1" --fixtures "$lafs/fixtures" --schema "$lafs/schemas/v1/envelope.schema.json" \
  --node-modules "$modules" --ajv-script "$here/ajv_validate.cjs" --count "${2:-2000}" --seed "${3:-20261121}"
