# The TensorFlow backend's sources: built into the module where the TensorFlow C library is found, and
# by the tests on every machine against a fake libtensorflow (tests/backends/tensorflow/fake_tf).
set(INFERBENCH_TENSORFLOW_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/tensorflow_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorflow_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorflow_api.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensorflow_backend.cpp)
set(INFERBENCH_TENSORFLOW_MODULE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/tensorflow_module.cpp)
