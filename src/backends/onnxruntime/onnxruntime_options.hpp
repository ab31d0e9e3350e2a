// The options the ONNX Runtime backend takes under the plan's `backend_options.onnxruntime:` map.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/ort_precision_options.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct OnnxRuntimeOptions {
    int intra_op_threads = 0;  // 0: ONNX Runtime's default (one per physical core)
    int inter_op_threads = 0;
    GraphOptimizationLevel graph_optimization = ORT_ENABLE_ALL;
    ExecutionMode execution_mode = ORT_SEQUENTIAL;
    // > 0: after the measured loop, a second session with ONNX Runtime's profiler on runs one warm-up and
    // then this many iterations, for per-layer times (`inferbench roofline --layers`); 0: off.
    std::int64_t layer_profile = 0;
    OrtPrecisionOptions precision;  // how fp16 and int8 models are made
};

// The most iterations layer_profile takes: ONNX Runtime's profile holds one event per node and run.
inline constexpr std::int64_t kMaxLayerProfileIterations = 1000;

std::vector<BackendOption> onnxruntime_option_list();

// Throws UserError naming the option and its valid values for an unknown key or a bad value.
OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options);

}  // namespace inferbench
