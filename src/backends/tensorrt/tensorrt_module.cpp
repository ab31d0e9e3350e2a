// The module's entry point: the only symbol libinferbench_backend_tensorrt.so exports.
#include "backends/tensorrt/tensorrt_backend.hpp"

namespace {

inferbench::Backend* create_backend() { return inferbench::make_tensorrt_backend().release(); }

constexpr inferbench::BackendModule kModule{inferbench::kBackendApiVersion, "tensorrt",
                                            "TensorRT (C++ API): ONNX -> engine per precision, CUDA events",
                                            &create_backend};

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &kModule;
}
