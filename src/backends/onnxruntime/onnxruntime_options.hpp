// The options the ONNX Runtime backend takes under the plan's `backend_options.onnxruntime:` map.
#pragma once

#include <onnxruntime_c_api.h>

#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct OnnxRuntimeOptions {
    int intra_op_threads = 0;  // 0: ONNX Runtime's default (one per physical core)
    int inter_op_threads = 0;
    GraphOptimizationLevel graph_optimization = ORT_ENABLE_ALL;
    ExecutionMode execution_mode = ORT_SEQUENTIAL;
};

std::vector<BackendOption> onnxruntime_option_list();

// Throws UserError naming the option and its valid values for an unknown key or a bad value.
OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options);

}  // namespace inferbench
