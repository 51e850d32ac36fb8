#!/usr/bin/env bash
# Installs ajv (draft-07) and ajv-formats, pinned, into a cache folder outside the repository and
# prints that folder's node_modules path (see tests/npm_cache.sh).
#   HEARTH_NPM_CACHE overrides the folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/npm).
set -euo pipefail
source "$(dirname "$0")/../npm_cache.sh"
npm_cache_install setup_ajv "${HEARTH_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/npm}" \
  ajv@8.17.1 ajv-formats@3.0.1
