# The torch-aoti backend's sources, in two halves: the SDK-free one (options, the exporter's request and
# answer, the package checks) is built everywhere with the exporter's client; the LibTorch one needs the
# AOTIModelPackageLoader header (LibTorch >= 2.6) and is built into the module where it exists, and by the
# tests against a fake loader (tests/backends/torch_aoti/fake_aoti) on LibTorch 1.13.
set(INFERBENCH_TORCH_AOTI_COMMON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/aoti_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aoti_package.cpp)
set(INFERBENCH_TORCH_AOTI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/aoti_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aoti_backend.cpp)
set(INFERBENCH_TORCH_AOTI_MODULE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/aoti_module.cpp)
