// The options the ONNX Runtime backend takes under the plan's `backend_options.onnxruntime:` map.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/ort_gpu_provider.hpp"
#include "backends/onnxruntime/ort_precision_options.hpp"
#include "core/spec.hpp"

namespace inferbench {

// The GPU execution provider's settings (cuda:N cells); each a sweepable option.
struct OrtGpuOptions {
    GpuProvider provider = GpuProvider::cuda;
    std::string cudnn_conv_algo_search = "EXHAUSTIVE";  // as ONNX Runtime spells it
    std::string arena_extend_strategy = "kNextPowerOfTwo";
    std::int64_t gpu_mem_limit = 0;  // bytes; 0: no limit
    bool enable_cuda_graph = false;
    bool use_tf32 = true;
    bool prefer_nhwc = false;
    bool device_resident = false;  // inputs and outputs stay on the GPU: no H2D and D2H per iteration

    friend bool operator==(const OrtGpuOptions&, const OrtGpuOptions&) = default;
};

struct OnnxRuntimeOptions {
    std::string runtime;       // an ONNX Runtime folder or library; empty: the default search (ort_runtime)
    int intra_op_threads = 0;  // 0: ONNX Runtime's default (one per physical core)
    int inter_op_threads = 0;
    GraphOptimizationLevel graph_optimization = ORT_ENABLE_ALL;
    ExecutionMode execution_mode = ORT_SEQUENTIAL;
    // > 0: after the measured loop, a second session with ONNX Runtime's profiler on runs one warm-up and
    // then this many iterations, for per-layer times (`inferbench roofline --layers`); 0: off.
    std::int64_t layer_profile = 0;
    OrtGpuOptions gpu;
    OrtPrecisionOptions precision;  // how fp16 and int8 models are made
};

// The most iterations layer_profile takes: ONNX Runtime's profile holds one event per node and run.
inline constexpr std::int64_t kMaxLayerProfileIterations = 1000;

std::vector<BackendOption> onnxruntime_option_list();

// Throws UserError naming the option and its valid values for an unknown key or a bad value.
OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options);

// The GPU options given other values than their defaults, by option name: a CPU cell cannot honour them.
std::vector<std::string> gpu_options_given(const OnnxRuntimeOptions& options);

// The provider options ONNX Runtime takes for `options.gpu` (CUDA: cudnn_conv_algo_search, arena, memory
// limit, CUDA graphs, TF32, NHWC; TensorRT: CUDA graphs), without the device and the stream.
ProviderOptions gpu_provider_options(const OrtGpuOptions& options);

}  // namespace inferbench
