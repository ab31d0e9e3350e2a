// The module's entry point: the only symbol libinferbench_backend_tensorflow.so exports.
#include "backends/tensorflow/tensorflow_backend.hpp"

namespace {

inferbench::Backend* create_backend() { return inferbench::make_tensorflow_backend().release(); }

constexpr inferbench::BackendModule kModule{inferbench::kBackendApiVersion, "tensorflow",
                                            "TensorFlow (C API): frozen GraphDef or SavedModel", &create_backend};

}  // namespace

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &kModule;
}
