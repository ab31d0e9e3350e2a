// The entry point of one external-runner backend module. This file is compiled once per module, with
// INFERBENCH_EXTERNAL_BACKEND naming the variant (src/backends/external/CMakeLists.txt).
#include "backends/external/external_backend.hpp"

#ifndef INFERBENCH_EXTERNAL_BACKEND
#error "INFERBENCH_EXTERNAL_BACKEND must name the runner variant this module is built for"
#endif

namespace {

inferbench::Backend* create_backend() {
    return inferbench::external::make_external_backend(INFERBENCH_EXTERNAL_BACKEND).release();
}

const inferbench::BackendModule& module_descriptor() {
    static const std::string description(inferbench::external::find_variant(INFERBENCH_EXTERNAL_BACKEND).description);
    static const inferbench::BackendModule module{inferbench::kBackendApiVersion, INFERBENCH_EXTERNAL_BACKEND,
                                                  description.c_str(), &create_backend};
    return module;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &module_descriptor();
}
