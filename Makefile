# Wraps CMake so that a fresh machine needs two commands (README's Quick start):
#   make run    build the library and the CLI, then reduce random arrays (on the GPU if there
#               is one, else on the CPU, saying so). Needs only the CUDA toolkit, CMake, a compiler.
#   make test   build, then run every test; ends with one line: how many ran, passed, skipped
#               and why. Needs the test libraries too (it names any that are missing).
# CMAKE_ARGS passes options to CMake, e.g. CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=90.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
SHELL := /bin/bash
# nvcc is often installed without being put on PATH
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all configure build run test clean

all: build

# Configure every time (quick once done): a failed configure leaves no cache behind, so the
# next attempt starts clean instead of failing on a half-written build folder.
configure:
	@cmake -S . -B $(BUILD) $(CMAKE_ARGS) || { rm -f $(BUILD)/CMakeCache.txt; \
	  echo "make: CMake could not configure $(BUILD) (see above)"; exit 1; }

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: configure
	cmake --build $(BUILD) -j $(JOBS) --target cureduce cureduce_cli
	$(BUILD)/cureduce info
	$(BUILD)/cureduce run --random 100000000 --dtype bf16 --op sum --exact
	$(BUILD)/cureduce run --random 100000000 --dtype f32 --op argmax

test: configure
	@if [ -f $(BUILD)/missing-test-dependencies.txt ]; then \
	  echo "make test: $$(cat $(BUILD)/missing-test-dependencies.txt)"; exit 1; fi
	cmake --build $(BUILD) -j $(JOBS)
	@set -o pipefail; rm -f $(BUILD)/ctest-junit.xml; \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml \
	    --test-output-size-passed 1000000 \
	    | scripts/test-summary --filter; rc=$$?; \
	  scripts/test-summary $(BUILD)/ctest-junit.xml || rc=1; exit $$rc

clean:
	rm -rf $(BUILD)
