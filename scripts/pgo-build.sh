#!/usr/bin/env bash
# `make pgo`: build/pgo/app/vtoe, vtoe optimised with a profile of its own runs (GCC PGO;
# cmake/pgo.cmake, docs/performance.md "The profile-guided build"). Three steps:
#   1. build/pgo/instrumented: vtoe alone (no tests), instrumented (CMake preset pgo-instrumented);
#   2. scripts/pgo-train.sh runs it on the training set; the counts go to build/pgo/profile;
#   3. build/pgo: vtoe alone built with that profile (preset pgo).
# A profile belongs to one instrumented build and one training set: when either changes (a
# source, a flag, the training script), the profile is made anew and the optimised build starts
# over, so a stale profile is never used. Otherwise steps 2 and 3 cost nothing but the relink of
# a new `git describe`. JOBS sets the parallel compiles (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
top=build/pgo
instrumented=$top/instrumented
profile=$top/profile

cmake --preset pgo-instrumented >/dev/null
cmake --build "$instrumented" -j "$jobs" --target vtoe
# The profile's id: the instrumented objects and the training script. Not the binary: it embeds
# `git describe` (app's generated git_describe.cpp, not profiled), which changes at every commit
# and with every edit anywhere in the tree (-dirty) without changing a profiled function.
id=$( (find "$instrumented" -name '*.o' ! -name git_describe.cpp.o -print0 | sort -z | xargs -0 cat
       cat scripts/pgo-train.sh) | sha256sum | cut -c1-16)
if [ "$(cat "$profile/.trained" 2>/dev/null)" != "$id" ]; then
  echo "pgo-build: training the instrumented vtoe (profile $id)"
  rm -rf "$profile"
  if [ -f "$top/build.ninja" ]; then cmake --build "$top" --target clean >/dev/null; fi
  scripts/pgo-train.sh "$instrumented/app/vtoe"
  echo "$id" >"$profile/.trained"
fi
cmake --preset pgo >/dev/null
cmake --build "$top" -j "$jobs" --target vtoe
# The ARM software platform.cpu_model=iss boots (the module, the programs, the initramfs:
# target/), where make linux-images has fetched what it needs.
if cmake --build "$top" --target help | grep -q '^toe_initramfs'; then
  cmake --build "$top" -j "$jobs" --target toe_initramfs
fi
echo "pgo-build: $top/app/vtoe (profile $id)"
