# Thin wrappers for the README's commands. Everything builds under build/, runs write under out/.
PRESET ?= release
BUILD := build/$(PRESET)
JOBS ?= $(shell nproc)
VTOE := $(BUILD)/scenarios/vtoe

.PHONY: quickstart test deps build bench clean format asan

quickstart: build
	$(VTOE) run scenarios/quickstart.yaml --out out/quickstart

deps:
	@scripts/install-deps.sh

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan:
	$(MAKE) test PRESET=asan

bench: build
	bench/run_bench.sh $(VTOE)

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build out
