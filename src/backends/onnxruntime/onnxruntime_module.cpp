// The module's entry point: the only symbol libinferbench_backend_onnxruntime.so exports.
#include "backends/onnxruntime/onnxruntime_backend.hpp"

namespace {

inferbench::Backend* create_backend() { return inferbench::make_onnxruntime_backend().release(); }

constexpr inferbench::BackendModule kModule{inferbench::kBackendApiVersion, "onnxruntime",
                                            "ONNX Runtime (C/C++ API): CPU, and CUDA or TensorRT execution providers on cuda devices", &create_backend};

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &kModule;
}
