# llama.cpp as the imported target llama::llama (llama.h + ggml headers, libllama and libggml linked);
# sets INFERBENCH_HAVE_LLAMA_CPP ON/OFF, and INFERBENCH_LLAMA_CPP_VERSION (what was fetched) for the backend's
# version(). INFERBENCH_LLAMA_CPP_ROOT is what scripts/fetch-llama-cpp.sh provisions (the default) or any
# folder with include/llama.h and lib/libllama.so of one llama.cpp build: the backend is compiled against
# those headers, and finds the CPU (and CUDA) backend modules beside libllama at run time.
option(INFERBENCH_WITH_LLAMA_CPP "Build the llama.cpp backend where llama.cpp is found" ON)
set(INFERBENCH_LLAMA_CPP_ROOT "${PROJECT_SOURCE_DIR}/third_party/llama.cpp" CACHE PATH
    "llama.cpp: a folder with include/llama.h and lib/libllama.so (scripts/fetch-llama-cpp.sh)")

set(INFERBENCH_HAVE_LLAMA_CPP OFF)
set(_llama_root "${INFERBENCH_LLAMA_CPP_ROOT}")
if(INFERBENCH_WITH_LLAMA_CPP AND EXISTS "${_llama_root}/include/llama.h" AND EXISTS "${_llama_root}/include/ggml.h"
   AND EXISTS "${_llama_root}/lib/libllama.so" AND EXISTS "${_llama_root}/lib/libggml-base.so")
  if(NOT TARGET llama::llama)
    add_library(llama::llama INTERFACE IMPORTED)
    set(_llama_libs "${_llama_root}/lib/libllama.so" "${_llama_root}/lib/libggml-base.so")
    if(EXISTS "${_llama_root}/lib/libggml.so")
      list(APPEND _llama_libs "${_llama_root}/lib/libggml.so")
    endif()
    set_target_properties(llama::llama PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_llama_root}/include"
                                                  INTERFACE_LINK_LIBRARIES "${_llama_libs}")
  endif()
  set(INFERBENCH_LLAMA_CPP_VERSION "llama.cpp")
  if(EXISTS "${_llama_root}/VERSION")
    file(STRINGS "${_llama_root}/VERSION" _llama_release REGEX "\\(llama.cpp v[0-9.]+\\)" LIMIT_COUNT 1)
    string(REGEX MATCH "v[0-9.]+" _llama_release "${_llama_release}")
    file(STRINGS "${_llama_root}/VERSION" _llama_commit REGEX "^source: llama.cpp commit " LIMIT_COUNT 1)
    string(REGEX REPLACE "^source: llama.cpp commit ([0-9a-f]......).*" "\\1" _llama_commit "${_llama_commit}")
    set(INFERBENCH_LLAMA_CPP_VERSION "${_llama_release} (commit ${_llama_commit})")
  endif()
  set(INFERBENCH_HAVE_LLAMA_CPP ON)
  message(STATUS "llama.cpp: ${_llama_root} (${INFERBENCH_LLAMA_CPP_VERSION})")
  set_property(GLOBAL APPEND PROPERTY INFERBENCH_FRAMEWORKS "llama.cpp ${INFERBENCH_LLAMA_CPP_VERSION}")
elseif(INFERBENCH_WITH_LLAMA_CPP)
  message(STATUS "llama.cpp: not found (no include/llama.h and lib/libllama.so under INFERBENCH_LLAMA_CPP_ROOT="
                 "${_llama_root}); the llamacpp backend is off. To get it, run scripts/fetch-llama-cpp.sh.")
endif()
foreach(_v IN ITEMS _llama_root _llama_libs _llama_release _llama_commit)
  unset(${_v})
endforeach()
