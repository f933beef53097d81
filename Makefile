# Thin wrappers for the README's commands. Everything builds under build/, runs write under out/.
PRESET ?= release
BUILD := build/$(PRESET)
JOBS ?= $(shell nproc)
VTOE := $(BUILD)/app/vtoe
VENV := build/venv
# Each step of the set-up and of `make test` is a phase: with $$VTOE_PHASES set (.ci/run sets it)
# scripts/phase.sh records its duration, and .ci/run prints them all at its end.
PHASE := scripts/phase.sh run
# A UBSan report stops the program (non-zero exit) instead of scrolling by in a passing test's
# output (the sanitizer build; nothing else links UBSan's runtime).
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1

.PHONY: quickstart test deps build pgo bench bench-iss clean format asan asan-ctest venv paper study-toe fuzz fuzz-smoke linux-images system-corpus linux-lockstep
FUZZ_SECONDS ?= 600

# The main job: vtoe built with a profile of its own runs (`make pgo`, below; the same results as
# build/release, 11-19 % less CPU time), then the quickstart scenario.
# linux-images first: with Debian's kernel there, the same binary also runs a scenario with
# platform.cpu_model=iss (docs/iss-mode.md).
quickstart: linux-images pgo
	build/pgo/app/vtoe run scenarios/quickstart.yaml --out out/quickstart

deps:
	@$(PHASE) "install what is missing" scripts/install-deps.sh
	@if [ "$(PRESET)" = asan ]; then $(PHASE) "SystemC with pthreads" scripts/build-systemc.sh pthreads; \
	 elif [ "$(PRESET)" != fuzz ]; then $(PHASE) "SystemC (static, -O3)" scripts/build-systemc.sh fast; fi

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@$(PHASE) "build ($(PRESET))" cmake --build $(BUILD) -j $(JOBS)

# vtoe optimised with a profile of its own runs (GCC PGO): an instrumented build, a training set of
# short scenario runs, the optimised build -> build/pgo/app/vtoe (scripts/pgo-build.sh; 11-19 %
# less CPU time than build/release, the same results: docs/performance.md, "The profile-guided
# build").
pgo: deps
	@$(PHASE) "build (pgo: instrumented, training, optimised)" env JOBS=$(JOBS) scripts/pgo-build.sh

# Python for integration tests and scripts: a venv made from the system interpreter.
# The vtoe package (python/vtoe, pyproject.toml) is installed editable: scripts import it as is.
$(VENV)/.stamp: requirements.txt pyproject.toml | deps
	@$(PHASE) "Python venv" sh -c '/usr/bin/python3 -m venv $(VENV) && $(VENV)/bin/pip install -q -r requirements.txt && $(VENV)/bin/pip install -q -e ".[plot,dask,schema]"'
	touch $@

venv: $(VENV)/.stamp

# Debian's armhf kernel and a busybox initramfs for the Linux boot test (tests/system), and that
# kernel's headers with the host's kbuild for the TOE's kernel module (target/linux), under
# build/linux; idempotent. Without the network the tests that need them are skipped and say why.
# Before `build`: CMake builds the module only where it finds the headers.
linux-images: deps
	@$(PHASE) "Debian's Linux images" sh -c 'scripts/fetch-debian-linux.sh || echo "linux-images: could not fetch Debian'"'"'s kernel; the boot test will be skipped"'
	@$(PHASE) "Debian's kernel headers" sh -c 'scripts/fetch-linux-headers.sh || echo "linux-images: could not fetch the kernel headers; the TOE module is not built and its test is skipped"'
	@$(PHASE) "Debian's Xen" scripts/fetch-debian-xen.sh

# pytest runs on two workers (pytest-xdist) with the slowest tests listed; the NetVP tests, which
# race real Linux peers in real time, run after the rest on their own.
test: linux-images build venv
	@$(PHASE) "ctest ($(PRESET))" sh -c 'cd $(BUILD) && ctest --output-on-failure -j $(JOBS)'
ifeq ($(PRESET),asan)
	@# Sanitized: the scenario runs, the ISS and the system platform under ASan/UBSan/LSan; the
	@# scripts' tests (sweeps, plots, the paper's report) drive the same simulations and run in the
	@# normal build only (docs/fuzzing.md, "What runs under the sanitizers").
	@$(PHASE) "pytest (asan)" env VTOE_PRESET=asan $(VENV)/bin/pytest -q -n $(JOBS) --durations=25 tests/integration tests/iss tests/system
	@$(PHASE) "pytest netvp (asan)" env VTOE_PRESET=asan $(VENV)/bin/pytest -q tests/netvp
else
	@$(PHASE) "pytest ($(PRESET))" env VTOE_PRESET=$(PRESET) $(VENV)/bin/pytest -q -n $(JOBS) --durations=25 tests/integration tests/scripts tests/iss tests/system
	@$(PHASE) "pytest netvp ($(PRESET))" env VTOE_PRESET=$(PRESET) $(VENV)/bin/pytest -q tests/netvp
	@# The harnesses have their own sanitized build (build/fuzz): one smoke run serves both presets.
	@$(MAKE) fuzz-smoke
endif

# libFuzzer harnesses (tests/fuzz): a short bounded run in `make test`, long runs with `make fuzz`.
fuzz-smoke: deps
	@cmake --preset fuzz >/dev/null
	@$(PHASE) "build (fuzz harnesses)" cmake --build build/fuzz -j $(JOBS) --target fuzz_frames fuzz_tcp_session fuzz_scenario fuzz_guest
	@$(PHASE) "fuzz smoke run" scripts/fuzz.sh 15

fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

# The whole suite with ASan, UBSan and LeakSanitizer at -O1; SystemC with pthread processes; tests
# whose point is scale run shorter under it (docs/fuzzing.md). CI runs it after `make test`.
asan:
	$(MAKE) test PRESET=asan

# Only the C++ part of the suite (every ctest bench) under the sanitizers.
asan-ctest:
	$(MAKE) build PRESET=asan
	cd build/asan && ctest --output-on-failure -j $(JOBS)

# Section 5 of the paper: every experiment, one figure per paper figure, out/paper/report.md.
paper: build venv
	VTOE_BIN=$(VTOE) $(VENV)/bin/python scripts/reproduce.py --jobs $(JOBS)

# The TOE's design space (beyond the paper): scenarios/study/toe/, out/study-toe/report.md.
study-toe: build venv
	VTOE_BIN=$(VTOE) $(VENV)/bin/python scripts/study_toe.py --jobs $(JOBS)

# The related papers as studies (issues 29, 40): out/studies/<paper>/report.md, each opening with
# its verdict table and its sensitivity to the assumed costs (swept), out/studies/summary.md, the
# four studies' verdicts and the check of the figures the docs quote from them, and
# out/studies/report.html, all of it on one page; fails when a verdict fails
# (scripts/studies.py). A quick variant of each runs in `make test` (tests/scripts/test_study_*.py).
.PHONY: studies
studies: build venv
	VTOE_BIN=$(VTOE) $(VENV)/bin/python scripts/studies.py --jobs $(JOBS)

bench: build
	bench/run_bench.sh $(VTOE)

# The whole generated system-mode corpus in lockstep with qemu-system-arm (`make test` runs its
# sample; docs/iss.md has its size and result), and Debian's kernel in lockstep from start_kernel.
system-corpus: build venv
	env VTOE_PRESET=$(PRESET) VTOE_SYSTEM_CORPUS=all $(VENV)/bin/pytest -q -n $(JOBS) tests/system/test_system_corpus.py

linux-lockstep: build venv linux-images
	$(VENV)/bin/python scripts/linux_lockstep.py --vtoe $(VTOE)

# ISS speed: the CoreMark-like program on vtoe's ISS and on qemu-arm (docs/iss.md#speed).
bench-iss: build
	bench/iss_bench.sh $(VTOE)

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build out
