# ctest's example_against_install: installs this build into a temporary prefix, moves the prefix
# elsewhere (it must not depend on its own path), checks that nothing in it points into the source
# or build tree (SystemC under build/systemc-fast included: it is installed with the prefix), then
# configures and builds examples/traffic_generator against the prefix alone (find_package(vtoe))
# with the tree's SystemC hidden where a mount namespace can be made, checks that its compile and
# link lines and the headers it read stay out of the tree, and runs it.
#   cmake -DVTOE_BUILD=<build dir> -DVTOE_SOURCE=<source dir> [-DCMAKE_GENERATOR=...] -P this
file(REAL_PATH "${VTOE_BUILD}" build_dir)
set(work ${build_dir}/example)
set(installed ${work}/install)
set(prefix ${work}/prefix)
set(build ${work}/build)
file(REMOVE_RECURSE ${work})
file(REAL_PATH "${VTOE_SOURCE}" tree)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# Fails if `text` (read from `where`) names a path in the tree other than the example's own
# sources and this test's directory.
function(outside_the_tree what text)
  foreach(allowed "${work}/" "${tree}/examples/traffic_generator")
    string(REPLACE "${allowed}" "" text "${text}")
  endforeach()
  string(REGEX MATCH "${tree}/[^ \n\";:]*" inside "${text}")
  if(inside)
    message(FATAL_ERROR "${what} points into the source or build tree: ${inside}")
  endif()
endfunction()

run("installing" ${CMAKE_COMMAND} --install ${build_dir} --prefix ${installed})
file(RENAME ${installed} ${prefix})
file(GLOB_RECURSE package_files ${prefix}/lib/cmake/*.cmake ${prefix}/lib/vtoe/*.cmake)
foreach(f ${package_files})
  file(READ ${f} text)
  outside_the_tree("${f}" "${text}")
endforeach()

set(generator)
if(CMAKE_GENERATOR)
  set(generator -G ${CMAKE_GENERATOR})
endif()
set(configure ${CMAKE_COMMAND} -S ${VTOE_SOURCE}/examples/traffic_generator -B ${build}
    ${generator} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
# The tree's own SystemC builds (build/systemc-*) out of reach while the example is configured
# and built: an empty file system over each, in a mount namespace of its own (unshare, where
# this user may make one; else the checks below alone).
file(GLOB tree_systemc LIST_DIRECTORIES true ${tree}/build/systemc-*)
set(hide "")
foreach(dir ${tree_systemc})
  if(IS_DIRECTORY ${dir})
    string(APPEND hide "mount -t tmpfs vtoe-hidden '${dir}' && ")
  endif()
endforeach()
find_program(UNSHARE unshare)
set(hidden FALSE)
if(UNSHARE AND hide)
  execute_process(COMMAND ${UNSHARE} -m sh -c "${hide}true" RESULT_VARIABLE rc OUTPUT_QUIET
                  ERROR_QUIET)
  if(rc EQUAL 0)
    set(hidden TRUE)
  endif()
endif()
if(hidden)
  message(STATUS "the example is built with ${tree_systemc} hidden")
  list(JOIN configure "' '" configure_line)
  run("configuring and building the example with ${tree_systemc} hidden" ${UNSHARE} -m sh -c
      "${hide}'${configure_line}' && '${CMAKE_COMMAND}' --build '${build}'")
else()
  message(STATUS "no mount namespace here: ${tree_systemc} stays visible; the checks below "
                 "tell whether the example used it")
  run("configuring the example" ${configure})
  run("building the example" ${CMAKE_COMMAND} --build ${build})
endif()
# What the build used: the packages it found, its compile and link lines, and (Ninja) every
# header the compiler read.
file(STRINGS ${build}/CMakeCache.txt found REGEX "_DIR:")
outside_the_tree("the example's CMakeCache.txt" "${found}")
foreach(f ${build}/build.ninja ${build}/CMakeFiles/traffic_generator.dir/link.txt
          ${build}/CMakeFiles/traffic_generator.dir/flags.make)
  if(EXISTS ${f})
    file(READ ${f} text)
    outside_the_tree("${f}" "${text}")
  endif()
endforeach()
if(EXISTS ${build}/build.ninja)
  find_program(NINJA ninja REQUIRED)
  run("listing the headers" ${NINJA} -C ${build} -t deps)
  outside_the_tree("a header of the example's build" "${last_output}")
  string(FIND "${last_output}" "${prefix}/include/vtoe/models/toe/toe.h" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the example did not read the installed models/toe/toe.h")
  endif()
endif()
run("running the example" ${build}/traffic_generator)
if(NOT last_output MATCHES "peer received [0-9]+ bytes of [0-9]+")
  message(FATAL_ERROR "the example's output is not what it should be:\n${last_output}")
endif()
message(STATUS "${last_output}")
file(REMOVE_RECURSE ${work})
