# ONNX Runtime's headers as the imported target onnxruntime::headers and the library the backend falls back
# to as INFERBENCH_ONNXRUNTIME_LIBRARY; sets INFERBENCH_HAVE_ONNXRUNTIME ON/OFF.
# INFERBENCH_ONNXRUNTIME_ROOT may be what scripts/fetch-onnxruntime.sh provisions (the default), an
# official release tarball (include/ + lib/), or any folder holding libonnxruntime.so.1[.x.y] (e.g. a
# Python wheel's onnxruntime/capi/), the headers then given by INFERBENCH_ONNXRUNTIME_INCLUDE_DIR.
set(INFERBENCH_ONNXRUNTIME_ROOT "${PROJECT_SOURCE_DIR}/third_party/onnxruntime" CACHE PATH
    "ONNX Runtime: a folder with include/ + lib/, or one holding libonnxruntime.so.1*")
set(INFERBENCH_ONNXRUNTIME_INCLUDE_DIR "" CACHE PATH
    "Folder holding onnxruntime_cxx_api.h when it is not under INFERBENCH_ONNXRUNTIME_ROOT")

set(INFERBENCH_HAVE_ONNXRUNTIME OFF)
set(_ort_root "${INFERBENCH_ONNXRUNTIME_ROOT}")

# Headers: the explicit folder if given, else <root>/include (release tarball) or <root>/include/onnxruntime.
set(_ort_inc "")
if(INFERBENCH_ONNXRUNTIME_INCLUDE_DIR)
  set(_ort_candidates "${INFERBENCH_ONNXRUNTIME_INCLUDE_DIR}")
else()
  set(_ort_candidates "${_ort_root}/include" "${_ort_root}/include/onnxruntime")
endif()
foreach(_d IN LISTS _ort_candidates)
  if(EXISTS "${_d}/onnxruntime_cxx_api.h")
    set(_ort_inc "${_d}")
    break()
  endif()
endforeach()

# Library: libonnxruntime.so.1, else a versioned libonnxruntime.so.1.x.y, in <root>/lib, <root>/lib64 or <root>.
set(_ort_lib "")
foreach(_d IN ITEMS "${_ort_root}/lib" "${_ort_root}/lib64" "${_ort_root}")
  file(GLOB _ort_found "${_d}/libonnxruntime.so.1" "${_d}/libonnxruntime.so.1.*")
  if(_ort_found)
    list(SORT _ort_found)  # the plain .so.1 sorts first
    list(GET _ort_found 0 _ort_lib)
    break()
  endif()
endforeach()

if(_ort_inc AND _ort_lib)
  # The backend opens the library at run time (src/backends/onnxruntime/ort_runtime): nothing links it, the
  # headers are all the build takes; this library is the last place the backend looks.
  if(NOT TARGET onnxruntime::headers)
    add_library(onnxruntime::headers INTERFACE IMPORTED)
    set_target_properties(onnxruntime::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_ort_inc}")
  endif()
  set(INFERBENCH_ONNXRUNTIME_LIBRARY "${_ort_lib}")
  file(STRINGS "${_ort_inc}/onnxruntime_c_api.h" _ort_api REGEX "^#define ORT_API_VERSION [0-9]+")
  string(REGEX REPLACE "[^0-9]" "" _ort_api "${_ort_api}")
  set(INFERBENCH_HAVE_ONNXRUNTIME ON)
  message(STATUS "ONNX Runtime: ${_ort_lib} (headers ${_ort_inc}, ORT_API_VERSION ${_ort_api})")
  # The runtime's release, from the symbol versions it exports (VERS_1.29.0), for `inferbench --version`.
  file(STRINGS "${_ort_lib}" _ort_release REGEX "VERS_1\\.[0-9]+\\.[0-9]+" LIMIT_COUNT 1)
  string(REGEX MATCH "1\\.[0-9]+\\.[0-9]+" _ort_release "${_ort_release}")
  if(NOT _ort_release)
    set(_ort_release "release unknown")
  endif()
  set_property(GLOBAL APPEND PROPERTY INFERBENCH_FRAMEWORKS "ONNX Runtime ${_ort_release} (headers: API ${_ort_api})")
else()
  set(_ort_missing "")
  if(NOT _ort_inc)
    list(APPEND _ort_missing "onnxruntime_cxx_api.h")
  endif()
  if(NOT _ort_lib)
    list(APPEND _ort_missing "libonnxruntime.so.1")
  endif()
  list(JOIN _ort_missing " and " _ort_missing)
  message(STATUS "ONNX Runtime: not found (no ${_ort_missing} under INFERBENCH_ONNXRUNTIME_ROOT=${_ort_root}); "
                 "the ONNX Runtime backend is off. To get it, run scripts/fetch-onnxruntime.sh, or point "
                 "INFERBENCH_ONNXRUNTIME_ROOT (and INFERBENCH_ONNXRUNTIME_INCLUDE_DIR) at an ONNX Runtime install.")
endif()
foreach(_v IN ITEMS _ort_release _ort_root _ort_inc _ort_lib _ort_api _ort_candidates _ort_found _ort_missing _d)
  unset(${_v})
endforeach()
