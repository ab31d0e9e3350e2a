// The module's entry point: the only symbol libinferbench_backend_llamacpp.so exports.
#include "backends/llamacpp/llamacpp_backend.hpp"

namespace {

inferbench::Backend* create_backend() { return inferbench::make_llamacpp_backend().release(); }

constexpr inferbench::BackendModule kModule{inferbench::kBackendApiVersion, "llamacpp",
                                            "llama.cpp (C API): GGUF decoder models, generation on the CPU and on "
                                            "CUDA devices where its CUDA module loads",
                                            &create_backend};

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &kModule;
}
