# Install rules: the model libraries, their headers and a CMake package, so that another project's
# SystemC platform embeds the models with
#   find_package(vtoe REQUIRED)
#   target_link_libraries(my_platform PRIVATE vtoe::toe vtoe::mem vtoe::net)   # or vtoe::models
# (examples/traffic_generator does). Headers go to include/vtoe/ with the tree's own paths, so
# `#include "models/toe/toe.h"` works the same inside and outside. The vtoe program is installed
# too; tests, the Python side and the fuzz harnesses are not. The prefix needs nothing of the
# build tree: a SystemC built inside the tree (build/systemc-fast) is installed with it, under
# lib/vtoe/systemc, and the package finds it there (cmake/test_example.cmake checks).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(VTOE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/vtoe)
set(VTOE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/vtoe)

# library target -> vtoe::<name>
set(vtoe_exported core tcpip mem gic smmu net cpu iss iss_tlm uart rtc pci psci toe stack hypervisor guest
                  netvp config platform system_platform)
set(vtoe_export_targets)
foreach(name ${vtoe_exported})
  if(TARGET vtoe_${name})
    set_target_properties(vtoe_${name} PROPERTIES EXPORT_NAME ${name})
    list(APPEND vtoe_export_targets vtoe_${name})
    # The source tree while building, the installed headers for a consumer.
    get_target_property(dirs vtoe_${name} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      set_property(TARGET vtoe_${name} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                   $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                   $<INSTALL_INTERFACE:${VTOE_INSTALL_INCLUDEDIR}>)
    endif()
  endif()
endforeach()
# What a consumer compiles the headers with: SystemC's standard and dynamic processes.
target_compile_definitions(vtoe_core INTERFACE SC_CPLUSPLUS=${VTOE_SC_CPLUSPLUS}
                                               SC_INCLUDE_DYNAMIC_PROCESSES)
target_compile_features(vtoe_core INTERFACE cxx_std_${CMAKE_CXX_STANDARD})
# Every model of models/ in one target.
add_library(vtoe_models INTERFACE)
set_target_properties(vtoe_models PROPERTIES EXPORT_NAME models)
target_link_libraries(vtoe_models INTERFACE vtoe_core vtoe_tcpip vtoe_mem vtoe_gic vtoe_smmu
                                            vtoe_net vtoe_cpu vtoe_toe vtoe_stack)
list(APPEND vtoe_export_targets vtoe_models)

install(TARGETS ${vtoe_export_targets} EXPORT vtoeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET vtoe)
  install(TARGETS vtoe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(dir models hypervisor guest netvp config platform)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${VTOE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h" PATTERN "target*" EXCLUDE)
endforeach()
# SystemC from inside the source tree (scripts/build-systemc.sh's install, a relocatable CMake
# package) goes with the prefix; one installed elsewhere is found where it is.
set(VTOE_SYSTEMC_BUNDLED OFF)
set(VTOE_INSTALL_SYSTEMCDIR ${CMAKE_INSTALL_LIBDIR}/vtoe/systemc)
set(VTOE_SYSTEMC_HINT "${SystemCLanguage_DIR}")  # where the package looks for one not bundled
if(SystemCLanguage_FOUND)
  # SystemCLanguage_DIR is <root>/lib*/cmake/SystemCLanguage
  get_filename_component(vtoe_systemc_root "${SystemCLanguage_DIR}/../../.." ABSOLUTE)
  cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${vtoe_systemc_root}" NORMALIZE vtoe_systemc_in_tree)
  cmake_path(IS_PREFIX PROJECT_BINARY_DIR "${vtoe_systemc_root}" NORMALIZE vtoe_systemc_in_build)
  if(vtoe_systemc_in_tree OR vtoe_systemc_in_build)
    set(VTOE_SYSTEMC_BUNDLED ON)
    set(VTOE_SYSTEMC_HINT "")  # the prefix names no path of the tree
    file(RELATIVE_PATH vtoe_systemc_cmakedir "${vtoe_systemc_root}" "${SystemCLanguage_DIR}")
    install(DIRECTORY ${vtoe_systemc_root}/ DESTINATION ${VTOE_INSTALL_SYSTEMCDIR}
            USE_SOURCE_PERMISSIONS PATTERN ".built-*" EXCLUDE)
  endif()
endif()
install(EXPORT vtoeTargets NAMESPACE vtoe:: DESTINATION ${VTOE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vtoeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/vtoeConfig.cmake
                              INSTALL_DESTINATION ${VTOE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vtoeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vtoeConfig.cmake ${PROJECT_BINARY_DIR}/vtoeConfigVersion.cmake
        DESTINATION ${VTOE_INSTALL_CMAKEDIR})
