// How a backend runs a PyTorch model spec (core/plan/model_spec): it builds the model itself
// (Capabilities::builds_zoo_models), or it reads the ONNX or TorchScript file runners/torch_export.py makes
// of it, or it cannot; the one rule that cell_problem() answers and the model's resolution follows.
#pragma once

#include <optional>
#include <string>

#include "backends/backend.hpp"

namespace inferbench {

// "onnx" or "torchscript": the file a backend that does not build models gets for a spec; empty: none it reads.
std::string spec_export_format(const Capabilities& caps);

// Why `backend` cannot run the cell's model when that is a PyTorch model spec, or nothing.
std::optional<std::string> model_spec_refusal(const std::string& backend, const Capabilities& caps,
                                              const BenchmarkSpec& spec);

}  // namespace inferbench
