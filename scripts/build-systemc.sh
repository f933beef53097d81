#!/usr/bin/env bash
# Builds SystemC from the distribution's own systemc source package (fetched with apt through a
# private deb-src list under build/; the system's apt configuration is not changed), in one of
# two variants; done once per variant, later calls return at once.
#
#   scripts/build-systemc.sh fast       -> build/systemc-fast/install (release and debug builds)
#   scripts/build-systemc.sh pthreads   -> build/systemc-pthreads/install (the sanitizer build)
#
# Both carry scripts/systemc-timed-queue.patch: the kernel's timed-event queue with its time
# comparison inlined (the same heap, so the same order of events and the same results), and
# scripts/systemc-kernel-events.patch: the kernel's per-event paths (the queue's extraction,
# sc_event::notify and trigger, sc_time::from_value) in fewer instructions with the same
# semantics and the same order of events (issue 27; the steps in docs/performance.md).
#
# fast: QuickThreads coroutines as Debian's libsystemc, but a static library built at -O3 (no
# calls through the PLT into the kernel): together with the patch about 12 % fewer instructions
# and 9 % less CPU time on native/tx_10g than Debian's shared libsystemc (docs/performance.md).
# Without the network or the source package it prints why and exits 0: CMake then uses
# Debian's libsystemc, the results are the same, only slower.
#
# pthreads: every SC_THREAD a POSIX thread, for ASan and LSan. Debian's libsystemc runs
# SC_THREADs as QuickThreads coroutines on mmap'ed stacks. LeakSanitizer does not scan those
# stacks (the locals of a thread still waiting when the simulation ends are reported as leaks),
# and 2.3.4's fiber annotations miss the switch when a thread ends, so ASan can keep a freed
# coroutine stack as the main thread's and LeakSanitizer's tracer crashes on it. Process switches
# use one semaphore per thread (scripts/systemc-pthreads-semaphores.patch): the stock mutex and
# condition-variable handoff costs about twice the CPU time per switch, and every wait() in the
# models is two switches.
#
# An install made from other patches or options is rebuilt. Neither registers itself in CMake's
# user package registry. Needs cmake, ninja, g++ (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:-}
patches=("$PWD/scripts/systemc-timed-queue.patch" "$PWD/scripts/systemc-kernel-events.patch")
case "$variant" in
  fast)
    options=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG" -DBUILD_SHARED_LIBS=OFF)
    ;;
  pthreads)
    patches+=("$PWD/scripts/systemc-pthreads-semaphores.patch")
    options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DENABLE_PTHREADS=ON -DBUILD_SHARED_LIBS=ON)
    ;;
  *)
    echo "usage: scripts/build-systemc.sh fast|pthreads" >&2
    exit 2
    ;;
esac
top=$PWD/build/systemc-$variant
prefix=$top/install
stamp=$prefix/.built-$( (cat "${patches[@]}"; echo "${options[@]}") | sha256sum | cut -c1-16)
[ -f "$prefix/lib/cmake/SystemCLanguage/SystemCLanguageConfig.cmake" ] && [ -f "$stamp" ] && exit 0

# The fast variant is an optimisation: if it cannot be built, say why and let CMake fall back.
fail() {
  if [ "$variant" = fast ]; then
    echo "build-systemc: $1; the build uses Debian's libsystemc instead (same results, slower)" >&2
    rm -rf "$prefix"
    exit 0
  fi
  echo "build-systemc: $1" >&2
  exit 1
}

echo "build-systemc: fetching the systemc source package and building the $variant variant into $top"
apt_dir=$top/apt
rm -rf "$apt_dir" "$top/src" "$top/build" "$prefix"
mkdir -p "$apt_dir/sources.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$top/src"
# The system's package sources as deb-src entries: deb822 files and one-line lists.
for f in /etc/apt/sources.list.d/*.sources; do
  if [ -f "$f" ]; then sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/sources.d/$(basename "$f")"; fi
done
: >"$apt_dir/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  if [ -f "$f" ]; then sed -nE 's/^deb[[:space:]]+/deb-src /p' "$f" >>"$apt_dir/sources.list"; fi
done
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/sources.d"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1")
apt-get "${apt_opts[@]}" -q update >"$top/apt.log" 2>&1 || { cat "$top/apt.log" >&2; fail "apt-get update failed"; }
(cd "$top/src" && apt-get "${apt_opts[@]}" -q source --download-only systemc >>"$top/apt.log" 2>&1) ||
  { cat "$top/apt.log" >&2; fail "could not fetch the systemc source package"; }
tar -xzf "$top"/src/systemc_*.orig.tar.gz -C "$top/src"
srcdir=$(find "$top/src" -mindepth 1 -maxdepth 1 -type d -name 'systemc-*' | head -1)
for p in "${patches[@]}"; do patch -d "$srcdir" -p1 -s <"$p" || fail "$(basename "$p") does not apply"; done

# C++17 as the project (SystemC checks the standard at link time); not instrumented itself.
cmake -S "$srcdir" -B "$top/build" -G Ninja "${options[@]}" \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$top/cmake.log" 2>&1 || { cat "$top/cmake.log" >&2; fail "configuring failed"; }
cmake --build "$top/build" -j "$(nproc)" >"$top/build.log" 2>&1 || { tail -40 "$top/build.log" >&2; fail "building failed"; }
cmake --install "$top/build" >"$top/install.log" 2>&1
touch "$stamp"
rm -rf "$apt_dir/cache" "$apt_dir/lists" "$top/build" "$top/src"
echo "build-systemc: installed the $variant variant in $prefix"
