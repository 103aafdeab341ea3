# The two commands: `make run` and `make test` (README.md). Both install what is missing,
# configure and build first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
# ccache's base directory is the checkout: compile commands are hashed with paths relative to
# the build tree, so a fresh clone of the same sources (CI's) reuses what another compiled.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: all deps deps-run configure configure-all print-run-configure build build-all run test \
  soak test-asan fuzz bench clean

all: build

# Debian packages (scripts/packages.txt): the product's only for `make run`, the tests' too for
# `make test`.
deps-run:
	@scripts/install-deps --run

deps:
	@scripts/install-deps

# A fresh build tree is configured without the tests and benchmarks when the product is all
# that is asked for (VACC_BUILD_TESTS=OFF: no GoogleTest needed, none of the tests' RTL
# generated or verilated while configuring), and with the main job's RTL model alone
# (VACC_RTL_CONFIGS; another config's model is built on first use into the per-user cache, as
# any config's is); a tree that has the tests keeps them.
RUN_CONFIGURE = -DVACC_BUILD_TESTS=OFF -DVACC_RTL_CONFIGS=default
configure: deps-run
	@test -f $(BUILD_DIR)/build.ninja || \
	  cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) $(RUN_CONFIGURE)

# The same tree with the tests and benchmarks switched on, and the RTL models of every bundled
# config (VACC_RTL_CONFIGS back to simulator/rtl's default, unless CMAKE_FLAGS names others).
configure-all: deps
	@(test -f $(BUILD_DIR)/build.ninja && \
	  grep -qx 'VACC_BUILD_TESTS:BOOL=ON' $(BUILD_DIR)/CMakeCache.txt) || \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -UVACC_RTL_CONFIGS $(CMAKE_FLAGS) -DVACC_BUILD_TESTS=ON

# make run's configure options, for tests/build.
print-run-configure:
	@echo $(RUN_CONFIGURE)

# What a user runs: the `vacc` command (with its RTL models and the MPI module it loads) and
# the Python module (build/python, so that `import vacc` works after `make run`). The tests and
# benchmarks are built by `make test` and `make bench` only.
PRODUCT_TARGETS ?= vacc vacc_python

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(PRODUCT_TARGETS)

# Everything: the product, every test and every benchmark.
build-all: configure-all
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on the bundled default: the bundled Fashion-MNIST CNN classifies a bundled
# image, its convolutions and dense layers on the cycle-accurate RTL simulator.
run: build
	./$(BUILD_DIR)/vacc run --sim --engine rtl --config default

test: build-all
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 1500

# Longer runs of property tests that `make test` samples: perf == rtl on SOAK_CONFIGS random
# configs (from SOAK_FIRST; each config's RTL model is built once into the build tree's cache,
# minutes each) with SOAK_SEEDS random programs on each; a sweep SIGKILLed and resumed
# SOAK_SWEEP_KILLS times; SOAK_CLIENTS clients x SOAK_RUNS requests against `vacc serve`, with
# faults mixed in.
SOAK_CONFIGS ?= 8
SOAK_SWEEP_KILLS ?= 10
SOAK_SEEDS ?= 200
SOAK_FIRST ?= 0
SOAK_CLIENTS ?= 8
SOAK_RUNS ?= 50
soak: build-all
	cd $(BUILD_DIR) && VACC_PROPERTY_CONFIGS=$(SOAK_CONFIGS) VACC_PROPERTY_SEEDS=$(SOAK_SEEDS) \
	  VACC_PROPERTY_FIRST=$(SOAK_FIRST) VACC_SWEEP_KILLS=$(SOAK_SWEEP_KILLS) \
	  VACC_SOAK_CLIENTS=$(SOAK_CLIENTS) VACC_SOAK_RUNS=$(SOAK_RUNS) \
	  ctest --output-on-failure -R '^(perf_equals_rtl|sweep_kills|remote_soak)$$' --timeout 28800

# One sanitizer build tree, clang with AddressSanitizer (and LeakSanitizer),
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation (docs/fuzzing.md), for
# both of these:
#   make test-asan   the whole test suite under the sanitizers
#   make fuzz        every libFuzzer target (tests/fuzz), each run for FUZZ_SECONDS
SAN_DIR ?= build-san
FUZZ_SECONDS ?= 60
# Tests left out of the sanitizer stage: by label (ctest -LE) and by name (ctest -E); none by
# default. CI's stage (.ci/run) names what it leaves out and why.
ASAN_EXCLUDE ?=
ASAN_EXCLUDE_TESTS ?=
# Leaks inside Debian's libraries that vacc cannot free (each named with why in the file).
SAN_ENV = LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0

$(SAN_DIR)/build.ninja: | deps
	cmake -S . -B $(SAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DVACC_FUZZ=ON -DVACC_UNITY_BUILD=OFF \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG"

test-asan: deps $(SAN_DIR)/build.ninja
	cmake --build $(SAN_DIR) -j $(JOBS)
	cd $(SAN_DIR) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 3000 \
	  $(if $(ASAN_EXCLUDE),-LE '$(ASAN_EXCLUDE)') $(if $(ASAN_EXCLUDE_TESTS),-E '$(ASAN_EXCLUDE_TESTS)')

fuzz: build $(SAN_DIR)/build.ninja
	cmake --build $(SAN_DIR) -j $(JOBS) --target fuzzers
	$(SAN_ENV) tests/fuzz/run-fuzzers $(BUILD_DIR)/vacc $(SAN_DIR) $(FUZZ_SECONDS)

bench: build-all
	bench/run

clean:
	rm -rf $(BUILD_DIR)
