#include "backends/onnxruntime/onnxruntime_options.hpp"

#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>

#include "backends/options.hpp"

namespace inferbench {
namespace {

constexpr std::pair<std::string_view, GraphOptimizationLevel> kOptimizationLevels[] = {
    {"disable", ORT_DISABLE_ALL},
    {"basic", ORT_ENABLE_BASIC},
    {"extended", ORT_ENABLE_EXTENDED},
    {"all", ORT_ENABLE_ALL},
};

constexpr std::pair<std::string_view, ExecutionMode> kExecutionModes[] = {
    {"sequential", ORT_SEQUENTIAL},
    {"parallel", ORT_PARALLEL},
};

// ONNX Runtime takes thread counts as int.
constexpr std::int64_t kMaxThreads = std::numeric_limits<int>::max();

}  // namespace

std::vector<BackendOption> onnxruntime_option_list() {
    std::vector<BackendOption> list{
        {"intra_op_threads", "0", "threads used inside one operator; 0 = ONNX Runtime's default (physical cores)"},
        {"inter_op_threads", "0", "threads running independent operators (execution_mode parallel); 0 = default"},
        {"graph_optimization", "all", "graph optimization level: disable|basic|extended|all"},
        {"execution_mode", "sequential", "operator scheduling: sequential|parallel"},
        {"layer_profile", "0",
         "per-layer times: after the measured loop, a separate profiled run of this many iterations (max 1000) "
         "on a second session; 0 = off"},
    };
    for (BackendOption& option : ort_precision_option_list()) list.push_back(std::move(option));
    return list;
}

OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options) {
    const OptionReader read("onnxruntime", options, onnxruntime_option_list());
    OnnxRuntimeOptions parsed;
    parsed.intra_op_threads = static_cast<int>(read.count("intra_op_threads", kMaxThreads));
    parsed.inter_op_threads = static_cast<int>(read.count("inter_op_threads", kMaxThreads));
    parsed.graph_optimization = read.choice("graph_optimization", kOptimizationLevels);
    parsed.execution_mode = read.choice("execution_mode", kExecutionModes);
    parsed.layer_profile = read.count("layer_profile", kMaxLayerProfileIterations);
    parsed.precision = read_ort_precision_options(read);
    return parsed;
}

}  // namespace inferbench
