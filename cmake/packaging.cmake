# Installation (`cmake --install BUILD --prefix P`) and the Debian package (scripts/package-deb.sh, CPack).
#   P/bin/inferbench                                the CLI (and the worker it starts)
#   P/lib/inferbench/backends/*.so                  backend modules (found next to ../lib/inferbench/backends)
#   P/lib/inferbench/libinferbench_probe_cuda.so    the CUDA probe, where nvcc built it
#   P/lib/inferbench/libinferbench_pipeline_cuda.so the GPU pipeline stages, where nvcc built them
#   P/lib/inferbench/lib/                           ONNX Runtime's runtime; with INFERBENCH_BUNDLE_LIBS, every
#                                                   library beyond the C/C++ runtime (for another distribution)
#   P/share/inferbench/{runners,plans}/             Python runners, example plans
#   P/share/bash-completion/completions/inferbench  bash completion (inferbench completion bash)
#   P/share/doc/inferbench/                         README and docs/
option(INFERBENCH_BUNDLE_LIBS "Install the shared libraries inferbench needs beyond the C/C++ runtime into lib/inferbench/lib (for a package that runs on another distribution)" OFF)
if(INFERBENCH_MODULES_ONLY)
  return()
endif()

set_target_properties(inferbench PROPERTIES INSTALL_RPATH "$ORIGIN/../lib/inferbench/lib")

# What `run` and `report` need, and all that is installed: the CLI, the backend modules and the CUDA probe
# (scripts/setup.sh builds this alone; the tests, benches and fuzzers come with the test command).
add_custom_target(inferbench-tool)
add_dependencies(inferbench-tool inferbench)
get_property(_modules GLOBAL PROPERTY INFERBENCH_BACKEND_MODULES)
foreach(_m IN LISTS _modules)
  add_dependencies(inferbench-tool inferbench_backend_${_m})
endforeach()
if(TARGET inferbench_probe_cuda)
  add_dependencies(inferbench-tool inferbench_probe_cuda)
endif()
if(TARGET inferbench_pipeline_cuda)
  add_dependencies(inferbench-tool inferbench_pipeline_cuda)
endif()

if(INFERBENCH_HAVE_ONNXRUNTIME)
  # The runtime the ONNX Runtime backend opens first from its own install (src/backends/onnxruntime/ort_runtime):
  # lib/inferbench/lib/libonnxruntime.so.1, with the provider libraries fetched beside it.
  get_filename_component(_ort_dir "${INFERBENCH_ONNXRUNTIME_LIBRARY}" DIRECTORY)
  file(GLOB _ort_files "${_ort_dir}/libonnxruntime*.so*")
  install(FILES ${_ort_files} DESTINATION lib/inferbench/lib)
  unset(_ort_dir)
  unset(_ort_files)
endif()

if(INFERBENCH_HAVE_LLAMA_CPP)
  # llama.cpp's libraries where the installed llamacpp module's RUNPATH ($ORIGIN/../lib) finds libllama, with its
  # CPU (and CUDA) backend modules beside it: the backend loads them from libllama's folder.
  file(GLOB _llama_files "${INFERBENCH_LLAMA_CPP_ROOT}/lib/lib*.so")
  install(FILES ${_llama_files} DESTINATION lib/inferbench/lib)
  unset(_llama_files)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/plans/ DESTINATION share/inferbench/plans)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/inferbench OPTIONAL)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/inferbench/docs)
# The completion script, from the built CLI itself (so that it lists exactly its commands and flags).
install(CODE "
  set(_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions\")
  file(MAKE_DIRECTORY \"\${_dir}\")
  execute_process(COMMAND \"$<TARGET_FILE:inferbench>\" completion bash OUTPUT_FILE \"\${_dir}/inferbench\"
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR \"inferbench completion bash failed (\${_rc})\")
  endif()
  message(STATUS \"Installing: \${_dir}/inferbench\")")

if(INFERBENCH_BUNDLE_LIBS)
  # Every library the CLI, its modules and the probe load, except the C/C++ runtime and the GPU driver's
  # (which the target machine has in its own, newer version) and ONNX Runtime (installed above).
  get_property(_modules GLOBAL PROPERTY INFERBENCH_BACKEND_MODULES)
  set(_module_files "")
  foreach(_m IN LISTS _modules)
    list(APPEND _module_files "$<TARGET_FILE:inferbench_backend_${_m}>")
  endforeach()
  if(TARGET inferbench_probe_cuda)
    list(APPEND _module_files "$<TARGET_FILE:inferbench_probe_cuda>")
  endif()
  if(TARGET inferbench_pipeline_cuda)
    list(APPEND _module_files "$<TARGET_FILE:inferbench_pipeline_cuda>")
  endif()
  install(CODE "
    file(GET_RUNTIME_DEPENDENCIES
      EXECUTABLES \"$<TARGET_FILE:inferbench>\"
      MODULES ${_module_files}
      RESOLVED_DEPENDENCIES_VAR _libs
      UNRESOLVED_DEPENDENCIES_VAR _missing
      PRE_EXCLUDE_REGEXES \"^(linux-vdso|ld-linux|libc\\\\.|libm\\\\.|libdl\\\\.|libpthread\\\\.|librt\\\\.|libstdc\\\\+\\\\+|libgcc_s|libcuda\\\\.|libnvidia-|libonnxruntime)\")
    if(_missing)
      message(FATAL_ERROR \"not found for the bundle: \${_missing}\")
    endif()
    foreach(_lib IN LISTS _libs)
      file(INSTALL \"\${_lib}\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/inferbench/lib\" FOLLOW_SYMLINK_CHAIN)
    endforeach()")
  unset(_modules)
  unset(_module_files)
endif()

# The Debian package: what `cmake --install` puts under /usr. Built by scripts/package-deb.sh with the
# libraries bundled, so that it installs on Debian 12 and Ubuntu 22.04/24.04 alike without a compiler.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME inferbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "inferbench developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "benchmarks AI inference on CPUs and GPUs, stores every iteration, explains the results")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The C/C++ runtime of Debian 12 (glibc 2.36, GCC 12) or newer, and gnuplot, which `report` draws its PNG/SVG
# figures with (it stops without it unless --no-plots: checked on an H200 server); the rest is bundled.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1, gnuplot-nox")
# The Python runners (torch-eager, torch-compile, onnxruntime-python) where the user wants them.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
include(CPack)
