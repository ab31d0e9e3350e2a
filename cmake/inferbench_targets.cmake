# Per-target build settings: warnings are set on our targets only, never globally.
function(inferbench_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wsign-conversion -Wnon-virtual-dtor -Wold-style-cast)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports impossible std::string copies at -O2 and above (GCC bug 105651).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(INFERBENCH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# inferbench_module(NAME SOURCES a.cpp ... DEPS target ...): one static library per module.
function(inferbench_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(inferbench_${name} STATIC ${ARG_SOURCES})
  add_library(inferbench::${name} ALIAS inferbench_${name})
  target_include_directories(inferbench_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(inferbench_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  inferbench_warnings(inferbench_${name})
endfunction()

# inferbench_backend_module(NAME SOURCES ... DEPS ...): a backend as a shared module loaded at run time.
function(inferbench_backend_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(inferbench_backend_${name} MODULE ${ARG_SOURCES})
  target_link_libraries(inferbench_backend_${name} PRIVATE inferbench::backends ${ARG_DEPS})
  set_target_properties(inferbench_backend_${name} PROPERTIES
    PREFIX "lib" OUTPUT_NAME "inferbench_backend_${name}"
    LIBRARY_OUTPUT_DIRECTORY ${INFERBENCH_BACKEND_DIR}
    CXX_VISIBILITY_PRESET hidden)
  inferbench_warnings(inferbench_backend_${name})
  set_target_properties(inferbench_backend_${name} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  install(TARGETS inferbench_backend_${name} LIBRARY DESTINATION lib/inferbench/backends)
  set_property(GLOBAL APPEND PROPERTY INFERBENCH_BACKEND_MODULES ${name})
endfunction()

# inferbench_test(NAME SOURCES ... DEPS ...): a GoogleTest executable registered with CTest.
function(inferbench_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  inferbench_warnings(${name})
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
endfunction()
