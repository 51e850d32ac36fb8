#!/usr/bin/env bash
# Installs every Debian package hearth needs to build, test, benchmark and run its examples.
# Idempotent and non-interactive: packages already present are left alone; apt runs only when
# something is missing. Run as root (or through sudo).
set -euo pipefail

packages=(
  # toolchain and build
  build-essential cmake ninja-build pkg-config ccache git
  # libraries (see docs/architecture.md, "Dependencies")
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libvalijson-dev libcli11-dev libspdlog-dev libfmt-dev
  # JSON Schema patterns: RE2 (linear-time matching, no recursion)
  libre2-dev
  # A2S: SQLite (the storage layer), YAML service definitions, Snowball stemming for search
  libsqlite3-dev libyaml-cpp-dev libstemmer-dev
  # A2S search: WordNet's database, read at run time for related words (src/a2s/search/wordnet.*)
  wordnet-base
  # the PostgreSQL storage engine (libpq); the server for its tests, which start throwaway
  # servers of their own from /usr/lib/postgresql/15/bin (never the system cluster the package
  # starts)
  libpq-dev postgresql-15
  # Agent Apps: reading .tar.gz packages
  libarchive-dev
  # the jail: seccomp filters (Landlock and namespaces are raw system calls)
  libseccomp-dev
  # function handlers: the SpiderMonkey 102 JavaScript engine; TLS for ctx.fetch
  libmozjs-102-dev libssl-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev json-schema-test-suite
  python3 python3-pytest python3-jsonschema curl openssl
  # the install test: man pages rendered (groff, man-db), zsh and fish completions parsed
  groff-base man-db zsh fish
  # spawn benchmark baseline (bench/spawn)
  bubblewrap
  # examples (contacts uses sqlite via python3's sqlite3 module; todo-manager uses node)
  nodejs sqlite3
  # test and benchmark set-up: ajv (LAFS differential test), playwright-core (browser tests) and
  # the MCP SDK (bench/js) from npm, installed into ~/.cache/hearth, never into the repository
  npm
  # browser tests of the view host (tests/e2e), driven by playwright-core
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # A command that is already on PATH (node installed outside apt, say) satisfies its package.
    case "$p" in
      nodejs) command -v node >/dev/null 2>&1 && continue ;;
      npm) command -v npm >/dev/null 2>&1 && continue ;;
      python3) [ -x /usr/bin/python3 ] && continue ;;
      git) command -v git >/dev/null 2>&1 && continue ;;
      curl) command -v curl >/dev/null 2>&1 && continue ;;
    esac
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
