# Sourced by the scripts that install npm packages for tests and benchmarks into a cache folder
# outside the repository (never committed).
#
#   npm_cache_install WHO DIR PACKAGE@VERSION...
# installs the pinned packages into DIR (idempotent: a stamp naming them marks a complete install;
# a lock keeps two test runs from installing into the same folder at once) and prints
# DIR/node_modules. Exits 77 (ctest: skipped) when npm is not installed at all; any other failure
# is an error.
npm_cache_install() {
  local who=$1 dir=$2
  shift 2
  local stamp="$dir/.installed-$(echo "$*" | tr ' /@' '_+-')"
  if [[ ! -f "$stamp" ]]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "$who: npm is not installed (Debian package 'npm')" >&2
      exit 77
    fi
    mkdir -p "$dir"
    exec 9>"$dir/.lock"
    flock 9
    if [[ ! -f "$stamp" ]]; then
      [[ -f "$dir/package.json" ]] || echo '{"name":"hearth-test-tools","private":true}' > "$dir/package.json"
      npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@" >&2
      touch "$stamp"
    fi
    exec 9>&-
  fi
  echo "$dir/node_modules"
}
