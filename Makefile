# hearth: front end to CMake presets. `make run` and `make test` do all set-up on a fresh Debian bookworm.
.PHONY: all deps build run test dev test-dev bench fuzz format tidy clean

PORT ?= 5555
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

run: build
	bash scripts/run-examples.sh $(RELEASE)/bin/hearth $(PORT)

test: build
	ctest --preset release

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

format:
	find src tests bench -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

tidy: build
	run-clang-tidy -p $(RELEASE) -quiet 'src/.*\.cpp$$'

clean:
	rm -rf build
