// The file a backend reads for a cell's model: a zoo model exported to ONNX into the model cache
// (unless the backend builds zoo models itself), a user's file as given; or why the backend cannot
// read it.
#pragma once

#include <optional>
#include <string>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct ResolvedModel {
    std::string model_path;
    std::optional<std::string> skip_reason;
};

ResolvedModel resolve_model(const BenchmarkSpec& spec, const Capabilities& caps);

}  // namespace inferbench
