#!/usr/bin/env bash
# Builds SystemC with POSIX-thread processes into build/systemc-pthreads/ for the sanitizer build
# (preset asan); done once, later calls return at once. Why: Debian's libsystemc runs SC_THREADs as
# QuickThreads coroutines on mmap'ed stacks. LeakSanitizer does not scan those stacks (the locals of
# a thread still waiting when the simulation ends are reported as leaks), and 2.3.4's fiber
# annotations miss the switch when a thread ends, so ASan can keep a freed coroutine stack as the
# main thread's and LeakSanitizer's tracer crashes on it. With --enable-pthreads every process is a
# real thread that ASan and LSan know. The source is the distribution's own systemc source
# package, fetched with apt through a private deb-src list under build/ (the system's apt
# configuration is not changed). The release build keeps Debian's libsystemc.
# Process switches use one semaphore per thread (scripts/systemc-pthreads-semaphores.patch): the
# stock mutex and condition-variable handoff costs about twice the CPU time per switch, and every
# wait() in the models is two switches. An install made without the patch is rebuilt.
# The build does not register itself in CMake's user package registry (release builds would find it).
#   scripts/build-systemc-pthreads.sh      (needs cmake, ninja, g++: scripts/install-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD/build/systemc-pthreads
prefix=$top/install
patch_file=$PWD/scripts/systemc-pthreads-semaphores.patch
stamp=$prefix/.semaphores-$(sha256sum "$patch_file" | cut -c1-16)
[ -f "$prefix/lib/cmake/SystemCLanguage/SystemCLanguageConfig.cmake" ] && [ -f "$stamp" ] && exit 0

echo "build-systemc-pthreads: fetching the systemc source package and building it into $top"
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
apt-get "${apt_opts[@]}" -q update >"$top/apt.log" 2>&1 || { cat "$top/apt.log" >&2; exit 1; }
(cd "$top/src" && apt-get "${apt_opts[@]}" -q source --download-only systemc >>"$top/apt.log" 2>&1) ||
  { cat "$top/apt.log" >&2; exit 1; }
tar -xzf "$top"/src/systemc_*.orig.tar.gz -C "$top/src"
srcdir=$(find "$top/src" -mindepth 1 -maxdepth 1 -type d -name 'systemc-*' | head -1)
patch -d "$srcdir" -p1 -s <"$patch_file"

# C++17 as the project (SystemC checks the standard at link time); not instrumented itself.
cmake -S "$srcdir" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 -DENABLE_PTHREADS=ON -DBUILD_SHARED_LIBS=ON -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$top/cmake.log" 2>&1 || { cat "$top/cmake.log" >&2; exit 1; }
cmake --build "$top/build" -j "$(nproc)" >"$top/build.log" 2>&1 || { tail -40 "$top/build.log" >&2; exit 1; }
cmake --install "$top/build" >"$top/install.log" 2>&1
touch "$stamp"
rm -rf "$apt_dir/cache" "$apt_dir/lists"
echo "build-systemc-pthreads: installed in $prefix"
