// The options of the TensorRT backend (plan: backend_options.tensorrt). SDK-free, so that they are
// parsed and tested on machines without TensorRT.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

inline constexpr int kDefaultBuilderOptimizationLevel = 3;  // TensorRT's own default
inline constexpr int kMaxBuilderOptimizationLevel = 5;
inline constexpr std::int64_t kMaxWorkspaceMb = std::int64_t{1} << 20;  // 1 TiB: anything larger is a typo

struct TensorRtOptions {
    bool device_resident = false;   // inputs and outputs stay on the device: no H2D/D2H, compute only
    bool cuda_graph = false;        // capture enqueueV3 once in a CUDA graph and launch the graph
    std::int64_t workspace_mb = 0;  // builder workspace pool limit; 0: TensorRT's default (device memory)
    std::string calibration_dir;    // int8: raw input batches (*.bin); empty: seeded random batches
    int builder_optimization_level = kDefaultBuilderOptimizationLevel;
    std::string cache_dir;  // engines and the timing cache; empty: <model cache dir>/tensorrt
};

std::vector<BackendOption> tensorrt_option_list();
TensorRtOptions parse_tensorrt_options(const OptionMap& options);  // throws UserError

}  // namespace inferbench
