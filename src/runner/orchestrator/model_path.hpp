// The file a backend reads for a cell's model: a zoo model exported to ONNX into the model cache
// (unless the backend builds zoo models itself), a PyTorch model spec exported to ONNX or TorchScript
// (runner/orchestrator/spec_export; unless the backend reads specs itself: those that build zoo models), a user's file
// as given; or why the backend cannot read it, or why making its file failed.
#pragma once

#include <optional>
#include <string>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench::runner {

struct ResolvedModel {
    std::string model_path;
    std::optional<std::string> skip_reason;
    std::optional<std::string> failure = {};  // making the file failed: the cell fails with this reason
    std::string output_tail = {};             // what the exporter printed last (a Python traceback's end)
};

ResolvedModel resolve_model(const BenchmarkSpec& spec, const Capabilities& caps);

}  // namespace inferbench::runner
