# What `inferbench --version` says this build holds: the backend modules built and the framework each was
# built against (collected by inferbench_backend_module and the framework finders into global properties).
# Included after src/, when every module is known.
get_property(_modules GLOBAL PROPERTY INFERBENCH_BACKEND_MODULES)
get_property(_frameworks GLOBAL PROPERTY INFERBENCH_FRAMEWORKS)
list(SORT _modules)
list(JOIN _modules ", " INFERBENCH_BUILT_BACKENDS)
if(NOT _frameworks)
  set(_frameworks "none")
endif()
list(JOIN _frameworks "; " INFERBENCH_BUILT_FRAMEWORKS)
configure_file(${PROJECT_SOURCE_DIR}/src/cli/build_facts.cpp.in ${PROJECT_BINARY_DIR}/generated/build_facts.cpp @ONLY)
target_sources(inferbench_cli PRIVATE ${PROJECT_BINARY_DIR}/generated/build_facts.cpp)
unset(_modules)
unset(_frameworks)
