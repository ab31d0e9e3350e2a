// Entry point of the LibTorch backend module.
#include "backends/torch/torch_backend.hpp"

namespace inferbench {
namespace {

Backend* create() { return make_torch_backend().release(); }

const BackendModule kModule{kBackendApiVersion, "torch", "LibTorch (TorchScript and ONNX models, C++)", &create};

}  // namespace
}  // namespace inferbench

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &inferbench::kModule;
}
