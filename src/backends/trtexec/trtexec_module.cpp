// The module's entry point: the only symbol libinferbench_backend_trtexec.so exports.
#include "backends/trtexec/trtexec_backend.hpp"

namespace {

inferbench::Backend* create_backend() { return inferbench::trtexec::make_trtexec_backend().release(); }

constexpr inferbench::BackendModule kModule{inferbench::kBackendApiVersion, "trtexec",
                                            "TensorRT through its trtexec tool (needs trtexec at run time only)",
                                            &create_backend};

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &kModule;
}
