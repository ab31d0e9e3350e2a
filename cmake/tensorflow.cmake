# The TensorFlow C library (tensorflow/c/c_api.h, libtensorflow.so) as the imported target
# tensorflow::tensorflow; sets INFERBENCH_HAVE_TENSORFLOW ON/OFF. INFERBENCH_TENSORFLOW_ROOT may be an
# unpacked libtensorflow tarball (include/ + lib/). Left empty, /usr/local (where that tarball is usually
# unpacked), /usr and third_party/libtensorflow are searched.
option(INFERBENCH_WITH_TENSORFLOW "Build the TensorFlow backend where the TensorFlow C library is found" ON)
set(INFERBENCH_TENSORFLOW_ROOT "" CACHE PATH "TensorFlow C library: a folder with include/ + lib/ (the tarball layout)")

set(INFERBENCH_HAVE_TENSORFLOW OFF)
if(INFERBENCH_TENSORFLOW_ROOT)
  set(_tf_roots "${INFERBENCH_TENSORFLOW_ROOT}")
else()
  set(_tf_roots "/usr/local" "/usr" "${PROJECT_SOURCE_DIR}/third_party/libtensorflow")
endif()

# The headers and the library from the same root, so that they match.
set(_tf_inc "")
set(_tf_lib "")
foreach(_root IN LISTS _tf_roots)
  foreach(_l IN ITEMS "${_root}/lib/libtensorflow.so" "${_root}/lib64/libtensorflow.so")
    if(EXISTS "${_root}/include/tensorflow/c/c_api.h" AND EXISTS "${_l}")
      set(_tf_inc "${_root}/include")
      set(_tf_lib "${_l}")
      break()
    endif()
  endforeach()
  if(_tf_lib)
    break()
  endif()
endforeach()

if(NOT INFERBENCH_WITH_TENSORFLOW)
  message(STATUS "TensorFlow: off (INFERBENCH_WITH_TENSORFLOW=OFF)")
elseif(_tf_lib)
  if(NOT TARGET tensorflow::tensorflow)
    add_library(tensorflow::tensorflow SHARED IMPORTED)
    set_target_properties(tensorflow::tensorflow PROPERTIES
      IMPORTED_LOCATION "${_tf_lib}"
      INTERFACE_INCLUDE_DIRECTORIES "${_tf_inc}")
  endif()
  set(INFERBENCH_HAVE_TENSORFLOW ON)
  message(STATUS "TensorFlow C library: ${_tf_lib} (headers ${_tf_inc})")
  set_property(GLOBAL APPEND PROPERTY INFERBENCH_FRAMEWORKS "TensorFlow C library (${_tf_lib})")
else()
  list(JOIN _tf_roots ", " _tf_roots)
  message(STATUS "TensorFlow C library: not found (no include/tensorflow/c/c_api.h with lib/libtensorflow.so under "
                 "${_tf_roots}); the TensorFlow backend is off. To get it, unpack the libtensorflow tarball "
                 "(https://www.tensorflow.org/install/lang_c: libtensorflow-cpu-linux-x86_64 or "
                 "libtensorflow-gpu-linux-x86_64) into /usr/local or a folder named by INFERBENCH_TENSORFLOW_ROOT.")
endif()
foreach(_v IN ITEMS _tf_roots _tf_inc _tf_lib _root _l)
  unset(${_v})
endforeach()
