#!/usr/bin/env bash
# Installs ajv (draft-07) and ajv-formats, pinned, into a cache folder outside the repository and
# prints that folder's node_modules path. Idempotent: a complete install is reused.
#   HEARTH_NPM_CACHE overrides the folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/npm).
# Exit 77 (ctest: skipped) when npm is not installed at all; any other failure is an error.
set -euo pipefail
AJV_VERSION=8.17.1
AJV_FORMATS_VERSION=3.0.1
dir=${HEARTH_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/npm}
stamp="$dir/.installed-ajv-$AJV_VERSION-formats-$AJV_FORMATS_VERSION"
if [[ ! -f "$stamp" ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup_ajv: npm is not installed (Debian package 'npm')" >&2
    exit 77
  fi
  mkdir -p "$dir"
  # A lock keeps two ctest jobs from installing into the same folder at once.
  exec 9>"$dir/.lock"
  flock 9
  if [[ ! -f "$stamp" ]]; then
    [[ -f "$dir/package.json" ]] || echo '{"name":"hearth-test-tools","private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
      "ajv@$AJV_VERSION" "ajv-formats@$AJV_FORMATS_VERSION" >&2
    touch "$stamp"
  fi
fi
echo "$dir/node_modules"
