# TensorRT (C++ API and ONNX parser) as the imported targets TensorRT::nvinfer and TensorRT::nvonnxparser,
# with CUDA::cudart from find_package(CUDAToolkit); sets INFERBENCH_HAVE_TENSORRT ON/OFF.
# INFERBENCH_TENSORRT_ROOT may be an unpacked TensorRT tarball (include/ + lib/). Left empty, the
# Debian/Ubuntu packages (libnvinfer-dev, libnvonnxparsers-dev: /usr/include/<arch> + /usr/lib/<arch>)
# and /usr/local/tensorrt are searched. TensorRT 8.6 is the oldest the backend is written for.
option(INFERBENCH_WITH_TENSORRT "Build the TensorRT backend where the TensorRT SDK is found" ON)
set(INFERBENCH_TENSORRT_ROOT "" CACHE PATH "TensorRT: a folder with include/ + lib/ (the tarball layout)")

set(INFERBENCH_HAVE_TENSORRT OFF)
# The CUDA runtime is looked for even without TensorRT: the tests type-check the backend against it.
find_package(CUDAToolkit QUIET)

set(_trt_arch "${CMAKE_LIBRARY_ARCHITECTURE}")
if(NOT _trt_arch)
  set(_trt_arch "x86_64-linux-gnu")
endif()
if(INFERBENCH_TENSORRT_ROOT)
  set(_trt_inc_dirs "${INFERBENCH_TENSORRT_ROOT}/include" "${INFERBENCH_TENSORRT_ROOT}")
  set(_trt_lib_dirs "${INFERBENCH_TENSORRT_ROOT}/lib" "${INFERBENCH_TENSORRT_ROOT}/lib64"
                    "${INFERBENCH_TENSORRT_ROOT}/targets/x86_64-linux-gnu/lib" "${INFERBENCH_TENSORRT_ROOT}")
  set(_trt_where "INFERBENCH_TENSORRT_ROOT=${INFERBENCH_TENSORRT_ROOT}")
else()
  set(_trt_inc_dirs "/usr/include/${_trt_arch}" "/usr/include" "/usr/local/tensorrt/include")
  set(_trt_lib_dirs "/usr/lib/${_trt_arch}" "/usr/lib64" "/usr/lib" "/usr/local/tensorrt/lib"
                    "/usr/local/tensorrt/lib64")
  set(_trt_where "/usr/include/${_trt_arch}, /usr/lib/${_trt_arch} and /usr/local/tensorrt")
endif()

# Plain existence checks, not find_path/find_library: their cached results would outlive a change of
# INFERBENCH_TENSORRT_ROOT.
set(_trt_inc "")
foreach(_d IN LISTS _trt_inc_dirs)
  if(EXISTS "${_d}/NvInfer.h" AND EXISTS "${_d}/NvOnnxParser.h")
    set(_trt_inc "${_d}")
    break()
  endif()
endforeach()
foreach(_name IN ITEMS nvinfer nvonnxparser)
  set(_trt_lib_${_name} "")
  foreach(_d IN LISTS _trt_lib_dirs)
    if(EXISTS "${_d}/lib${_name}.so")
      set(_trt_lib_${_name} "${_d}/lib${_name}.so")
      break()
    endif()
  endforeach()
endforeach()

# The version: NV_TENSORRT_MAJOR (TRT_MAJOR_ENTERPRISE in newer headers) in NvInferVersion.h.
set(_trt_version "")
if(_trt_inc AND EXISTS "${_trt_inc}/NvInferVersion.h")
  foreach(_part IN ITEMS MAJOR MINOR PATCH)
    file(STRINGS "${_trt_inc}/NvInferVersion.h" _trt_line
         REGEX "^#define (NV_TENSORRT_${_part}|TRT_${_part}_ENTERPRISE) +[0-9]+")
    if(NOT _trt_line)
      set(_trt_version "")  # an unknown header layout: the version is not checked
      break()
    endif()
    list(GET _trt_line 0 _trt_line)
    string(REGEX REPLACE "^#define [A-Z_]+ +([0-9]+).*" "\\1" _trt_number "${_trt_line}")
    list(APPEND _trt_version "${_trt_number}")
  endforeach()
  list(JOIN _trt_version "." _trt_version)
endif()

set(_trt_missing "")
if(NOT _trt_inc)
  list(APPEND _trt_missing "NvInfer.h and NvOnnxParser.h")
endif()
if(NOT _trt_lib_nvinfer)
  list(APPEND _trt_missing "libnvinfer.so")
endif()
if(NOT _trt_lib_nvonnxparser)
  list(APPEND _trt_missing "libnvonnxparser.so")
endif()
if(_trt_version AND _trt_version VERSION_LESS 8.6)
  list(APPEND _trt_missing "TensorRT 8.6 or newer (found ${_trt_version})")
endif()
if(NOT TARGET CUDA::cudart)
  list(APPEND _trt_missing "the CUDA runtime (CUDA::cudart; set CUDAToolkit_ROOT)")
endif()

if(NOT INFERBENCH_WITH_TENSORRT)
  message(STATUS "TensorRT: off (INFERBENCH_WITH_TENSORRT=OFF)")
elseif(NOT _trt_missing)
  foreach(_name IN ITEMS nvinfer nvonnxparser)
    if(NOT TARGET TensorRT::${_name})
      add_library(TensorRT::${_name} SHARED IMPORTED)
      set_target_properties(TensorRT::${_name} PROPERTIES
        IMPORTED_LOCATION "${_trt_lib_${_name}}"
        INTERFACE_INCLUDE_DIRECTORIES "${_trt_inc}"
        INTERFACE_LINK_LIBRARIES CUDA::cudart)
    endif()
  endforeach()
  set(INFERBENCH_HAVE_TENSORRT ON)
  message(STATUS "TensorRT ${_trt_version}: ${_trt_lib_nvinfer} (headers ${_trt_inc}; CUDA ${CUDAToolkit_VERSION})")
  set_property(GLOBAL APPEND PROPERTY INFERBENCH_FRAMEWORKS "TensorRT ${_trt_version} (CUDA ${CUDAToolkit_VERSION})")
else()
  list(JOIN _trt_missing ", " _trt_missing)
  message(STATUS "TensorRT: not found (no ${_trt_missing}; searched ${_trt_where}); the TensorRT backend is off. "
                 "To get it, install NVIDIA's packages from the CUDA apt repository (libnvinfer-dev "
                 "libnvonnxparsers-dev) or unpack the TensorRT tarball and set INFERBENCH_TENSORRT_ROOT; "
                 "the CUDA toolkit (CUDA::cudart) is needed too.")
endif()
foreach(_v IN ITEMS _trt_arch _trt_inc_dirs _trt_lib_dirs _trt_where _trt_inc _trt_lib_nvinfer _trt_lib_nvonnxparser
                    _trt_version _trt_line _trt_number _trt_missing _part _name _d)
  unset(${_v})
endforeach()
