#!/usr/bin/env bash
# `make lint`, run by CI: every C++ file formatted by the pinned clang-format, and clang-tidy
# (the checks of .clang-tidy, warnings as errors) on the C++ sources changed since LINT_BASE.
#   LINT_BASE: a git revision; default the merge base with origin/main, or the previous commit
#              when HEAD is origin/main (CI on a clean clone of main).
#   BUILD_DIR: where compile_commands.json is (default build/lint, configured here: the release
#              tree compiles its sources in batches, a unity build, so its compile database names
#              the batches, not the files).
set -euo pipefail
cd "$(dirname "$0")/.."

want=14  # Debian bookworm's clang-format and clang-tidy
for tool in clang-format clang-tidy; do
  have=$("$tool" --version | grep -o 'version [0-9]*' | grep -o '[0-9]*' | head -1)
  if [ "$have" != "$want" ]; then
    echo "lint: $tool $want is required (found ${have:-none}): formatting differs between versions" >&2
    exit 1
  fi
done

mapfile -t all < <(git ls-files '*.cpp' '*.hpp' | grep -v '/third_party/')
if ! clang-format --dry-run --Werror "${all[@]}"; then
  echo "lint: the files above are not formatted: run 'make format'" >&2
  exit 1
fi
echo "lint: ${#all[@]} files formatted"

base=${LINT_BASE:-}
if [ -z "$base" ]; then
  if git rev-parse -q --verify origin/main >/dev/null &&
     [ "$(git rev-parse HEAD)" != "$(git rev-parse origin/main)" ]; then
    base=$(git merge-base HEAD origin/main)
  elif git rev-parse -q --verify HEAD~1 >/dev/null; then
    base=HEAD~1
  else
    base=$(git hash-object -t tree /dev/null)
  fi
fi
# Sources (headers are checked through the sources that include them: HeaderFilterRegex).
# Not parsed by clang-tidy 14: SpiderMonkey 102's headers stop with #error "A clang providing
# __builtin_c[lt]z is required" (mozilla/MathAlgorithms.h), as clang 14's __has_builtin does not
# report those builtins. GCC builds them with -Wall -Wextra; the JS worker's tests cover them.
untidied='^src/js/engine\.cpp$'
mapfile -t changed < <(git diff --name-only --diff-filter=ACMR "$base" -- 'src/*.cpp' |
                       grep -v '/third_party/' | grep -Ev "$untidied" || true)
if [ "${#changed[@]}" -eq 0 ]; then
  echo "lint: no C++ source changed since $base"
  exit 0
fi
build=${BUILD_DIR:-}
if [ -z "$build" ]; then
  # A compile database with one entry per source file: configured, never built (no header of
  # the project is generated, so clang-tidy needs nothing else from it).
  build=build/lint
  mkdir -p "$build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=OFF \
    > "$build/configure.log" 2>&1 || {
    cat "$build/configure.log" >&2
    echo "lint: configuring $build failed" >&2
    exit 1
  }
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint: $build/compile_commands.json is missing" >&2
  exit 1
fi
echo "lint: clang-tidy on ${#changed[@]} files changed since $(git rev-parse --short "$base")"
run-clang-tidy -p "$build" -quiet -j "$(nproc)" "${changed[@]/%/\$}" \
  > "$build/clang-tidy.log" 2>&1 || {
  grep -E 'warning:|error:' "$build/clang-tidy.log" | sort -u >&2
  echo "lint: clang-tidy found the problems above (full output: $build/clang-tidy.log)" >&2
  exit 1
}
echo "lint: clang-tidy clean"
