# ctest's example_against_install: installs this build into a temporary prefix, configures and
# builds examples/traffic_generator against it alone (find_package(vtoe)), and runs it.
#   cmake -DVTOE_BUILD=<build dir> -DVTOE_SOURCE=<source dir> [-DCMAKE_GENERATOR=...] -P this
set(prefix ${VTOE_BUILD}/example/install)
set(build ${VTOE_BUILD}/example/build)
file(REMOVE_RECURSE ${VTOE_BUILD}/example)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("installing" ${CMAKE_COMMAND} --install ${VTOE_BUILD} --prefix ${prefix})
set(generator)
if(CMAKE_GENERATOR)
  set(generator -G ${CMAKE_GENERATOR})
endif()
run("configuring the example" ${CMAKE_COMMAND} -S ${VTOE_SOURCE}/examples/traffic_generator
    -B ${build} ${generator} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run("building the example" ${CMAKE_COMMAND} --build ${build})
run("running the example" ${build}/traffic_generator)
if(NOT last_output MATCHES "peer received [0-9]+ bytes of [0-9]+")
  message(FATAL_ERROR "the example's output is not what it should be:\n${last_output}")
endif()
message(STATUS "${last_output}")
file(REMOVE_RECURSE ${VTOE_BUILD}/example)
