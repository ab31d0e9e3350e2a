// Entry point of the torch-aoti backend module.
#include "backends/torch_aoti/aoti_backend.hpp"

namespace inferbench {
namespace {

Backend* create() { return make_torch_aoti_backend().release(); }

const BackendModule kModule{kBackendApiVersion, "torch-aoti",
                            "LibTorch AOTInductor (.pt2 packages compiled from PyTorch models, C++)", &create};

}  // namespace
}  // namespace inferbench

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &inferbench::kModule;
}
