# The TensorRT backend's sources, in two halves: the SDK-free one is built everywhere (its tests run on
# machines without TensorRT), the SDK one only where TensorRT is found, and by the tests against fake
# TensorRT headers (type-checked there, never linked or run).
set(INFERBENCH_TENSORRT_COMMON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_version.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_typed_onnx.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_platform.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_engine_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_calibration_data.cpp)
set(INFERBENCH_TENSORRT_SDK_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_cuda.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_logger.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_engine_builder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_calibrator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_execution.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_fp32_reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_backend.cpp)
set(INFERBENCH_TENSORRT_MODULE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/tensorrt_module.cpp)
