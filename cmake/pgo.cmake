# Profile-guided optimisation with GCC (`make pgo`, scripts/pgo-build.sh; docs/performance.md,
# "The profile-guided build"). Two builds of the same tree, in two build directories:
#   VTOE_PGO=generate  instrumented: every run of it adds its counts to VTOE_PGO_PROFILE
#   VTOE_PGO=use       optimised with those counts
# The preset `pgo` also turns on link-time optimisation (CMAKE_INTERPROCEDURAL_OPTIMIZATION): with
# the profile it inlines across the models' libraries, a further 5-8 % of CPU time; the
# instrumented build does without it (the counts are per source file either way).
# The profile files are named after each object's path below its own build directory
# (-fprofile-prefix-path), so the instrumented build's counts find the optimised build's objects.
# Functions the training set never ran keep their ordinary optimisation
# (-fprofile-partial-training) instead of being optimised for size as never executed. A source
# changed after training is an error (GCC's -Wcoverage-mismatch), never a silently stale profile;
# scripts/pgo-build.sh retrains whenever the instrumented program changes.
set(VTOE_PGO "" CACHE STRING "Profile-guided build: generate, use or empty (off)")
set(VTOE_PGO_PROFILE "" CACHE PATH "Directory of the profile (.gcda files) for VTOE_PGO")
if(NOT VTOE_PGO)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "VTOE_PGO needs GCC (its .gcda profiles), not ${CMAKE_CXX_COMPILER_ID}")
endif()
if(NOT VTOE_PGO_PROFILE)
  message(FATAL_ERROR "VTOE_PGO=${VTOE_PGO} needs VTOE_PGO_PROFILE (the profile directory)")
endif()
set(vtoe_pgo_prefix -fprofile-prefix-path=${PROJECT_BINARY_DIR})
if(VTOE_PGO STREQUAL "generate")
  # vtoe runs every SystemC process on one OS thread: plain counter updates are exact, and atomic
  # ones would only slow the training runs.
  # Sources generated into the build directory (app's git_describe.cpp) have another path in each
  # build, which GCC takes for a changed source: they are not profiled.
  add_compile_options(-fprofile-generate=${VTOE_PGO_PROFILE} ${vtoe_pgo_prefix} -fprofile-update=single
                      -fprofile-exclude-files=^${PROJECT_BINARY_DIR}/)
  add_link_options(-fprofile-generate=${VTOE_PGO_PROFILE})
elseif(VTOE_PGO STREQUAL "use")
  # The profile's hot-path copies (build_udp_frame and build_icmp_frame in models/tcpip/headers.cpp;
  # with link-time optimisation NetVP's IngressFixup::fix) give GCC 12 paths where a length is
  # near 2^64, which cannot occur (the vector of header + length bytes would have thrown first):
  # its -Wstringop-overflow there is a false alarm the release build does not see.
  add_compile_options(-fprofile-use=${VTOE_PGO_PROFILE} ${vtoe_pgo_prefix} -fprofile-partial-training
                      -Wno-missing-profile -Wno-stringop-overflow)
  add_link_options(-Wno-stringop-overflow)
else()
  message(FATAL_ERROR "VTOE_PGO=${VTOE_PGO}: give generate, use or nothing")
endif()
message(STATUS "Profile-guided build (${VTOE_PGO}): profile in ${VTOE_PGO_PROFILE}")
