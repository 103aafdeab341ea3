# The two commands: `make run` and `make test` (README.md). Both install what is missing,
# configure and build first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@scripts/install-deps

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on the bundled default: the bundled Fashion-MNIST CNN classifies a bundled
# image, its convolutions and dense layers on the cycle-accurate RTL simulator.
run: build
	./$(BUILD_DIR)/vacc run --sim --engine rtl --config default

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 1500

bench: build
	bench/run

clean:
	rm -rf $(BUILD_DIR)
