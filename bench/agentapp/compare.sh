#!/usr/bin/env bash
# Compares `hearth app <command> --json` with the format's reference CLI (agentapp-ref 0.10.0)
# on package folders: stdout and exit code of validate, read-properties, to-catalog, project,
# readiness and migrate-check, with --version/--target/--workspace variants. The reference CLI
# is not part of hearth: give its bin/agentapp-ref.mjs (from the format's repository) as REF.
#   REF=/path/to/agentapp-ref.mjs [HEARTH=build/release/bin/hearth] bench/agentapp/compare.sh DIR...
# Prints one DIFF block per difference and "N packages, M differences"; exit 1 on any.
set -uo pipefail
hearth=${HEARTH:-build/release/bin/hearth}
ref=${REF:?REF must name the reference CLI agentapp-ref.mjs}
packages=0
diffs=0
for d in "$@"; do
  packages=$((packages + 1))
  for c in validate read-properties to-catalog project readiness migrate-check; do
    for opts in "" "--version 0.5" "--target 0.8.1" "--workspace /nonexistent" "--workspace /tmp"; do
      case "$c:$opts" in
        validate:--workspace*|migrate-check:--workspace*|readiness:--version*|readiness:--target*) continue ;;
        read-properties:?*|to-catalog:?*|project:?*) continue ;;
      esac
      # shellcheck disable=SC2086
      ro=$(node "$ref" "$c" "$d" $opts 2>/dev/null); rc=$?
      # shellcheck disable=SC2086
      ho=$("$hearth" app "$c" "$d" --json $opts 2>/dev/null); hc=$?
      if [ "$ro" != "$ho" ] || [ "$rc" != "$hc" ]; then
        diffs=$((diffs + 1))
        echo "DIFF $c $d $opts (reference exit $rc, hearth exit $hc)"
        diff <(echo "$ro") <(echo "$ho") | head -10
      fi
    done
  done
done
echo "$packages packages, $diffs differences"
[ "$diffs" -eq 0 ]
