# inferbench_embed_files(OUTPUT file.cpp NAMESPACE ns HEADER "report/x.hpp" FILES name=path ...): a C++
# source defining `std::string_view ns::name()` for each file, returning the file's bytes as they were
# at build time (rebuilt when a file changes). Used for what a report must carry inline (uPlot).
set(_inferbench_embed_script ${CMAKE_CURRENT_LIST_DIR}/embed_files_script.cmake)

function(inferbench_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;NAMESPACE;HEADER" "FILES" ${ARGN})
  set(_paths "")
  set(_pairs "")
  foreach(_entry IN LISTS ARG_FILES)
    string(FIND "${_entry}" "=" _eq)
    string(SUBSTRING "${_entry}" 0 ${_eq} _name)
    math(EXPR _start "${_eq} + 1")
    string(SUBSTRING "${_entry}" ${_start} -1 _path)
    list(APPEND _paths "${_path}")
    list(APPEND _pairs "${_name}=${_path}")
  endforeach()
  string(REPLACE ";" "|" _pairs_arg "${_pairs}")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${ARG_OUTPUT}" "-DNAMESPACE=${ARG_NAMESPACE}" "-DHEADER=${ARG_HEADER}"
            "-DFILES=${_pairs_arg}" -P ${_inferbench_embed_script}
    DEPENDS ${_paths} ${_inferbench_embed_script}
    COMMENT "Embedding ${ARG_NAMESPACE} assets"
    VERBATIM)
endfunction()
