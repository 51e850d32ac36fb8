# hearth: front end to CMake presets. `make run` and `make test` do all set-up on a fresh Debian bookworm.
.PHONY: all deps build run test dev test-dev bench fuzz format lint tidy clean install

PORT ?= 5555
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
RELEASE := build/release
DEV := build/dev

all: build

deps:
	@bash scripts/install-deps.sh

$(RELEASE)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset release

build: deps $(RELEASE)/build.ninja
	cmake --build --preset release -j $(JOBS)

# Builds only what it runs: the daemon and the helper executables it starts (not the tests).
run: deps $(RELEASE)/build.ninja
	cmake --build --preset release -j $(JOBS) --target hearth
	bash scripts/run-examples.sh $(RELEASE)/bin/hearth $(PORT)

test: build
	ctest --preset release

# Installs hearth under PREFIX (default /usr/local; PREFIX=$$HOME/.local for one user), staged
# under DESTDIR when set: the binary, its helpers, the view host's page, man pages, shell
# completions and the systemd user unit (cmake/Install.cmake). Builds only what it installs; as
# root (sudo make install) after a `make build`, it only copies.
install: $(RELEASE)/build.ninja
	cmake --build --preset release -j $(JOBS) --target hearth hearth_generated
	DESTDIR="$(DESTDIR)" cmake --install $(RELEASE) --prefix "$(PREFIX)"

$(DEV)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset dev

dev: deps $(DEV)/build.ninja
	cmake --build --preset dev -j $(JOBS)

test-dev: dev
	ctest --preset dev

bench: build
	bash bench/run.sh

# libFuzzer targets (clang, installed if missing), FUZZ_SECONDS each (default 60).
fuzz:
	bash scripts/fuzz.sh

# The pinned clang-format (14) on every C++ file.
format:
	git ls-files '*.cpp' '*.hpp' | grep -v '/third_party/' | xargs clang-format -i

# What CI checks: formatting of the tree, clang-tidy on the files changed (scripts/lint.sh).
lint:
	bash scripts/lint.sh

# clang-tidy on every source file (but src/js/engine.cpp: see scripts/lint.sh).
tidy:
	cmake -S . -B build/lint -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=OFF > /dev/null
	run-clang-tidy -p build/lint -quiet -j $(JOBS) 'src/(?!js/engine\.cpp).*\.cpp$$'

clean:
	rm -rf build
