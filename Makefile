# Wraps CMake so that a fresh machine needs two commands (README's Quick start):
#   make run    build, then reduce a random array (on the GPU if there is one, else the CPU)
#   make test   build, then run every test (GPU tests report "skipped" with the reason
#               when there is no GPU)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all build run test clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/cureduce info
	$(BUILD)/cureduce run --random 100000000 --dtype bf16 --op sum --exact
	$(BUILD)/cureduce run --random 100000000 --dtype f32 --op max

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); rc=$$?; \
	  scripts/skip-reasons $(BUILD); exit $$rc

clean:
	rm -rf $(BUILD)
