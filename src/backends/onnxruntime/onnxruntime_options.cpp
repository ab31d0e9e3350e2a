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

constexpr std::pair<std::string_view, GpuProvider> kProviders[] = {
    {"cuda", GpuProvider::cuda},
    {"tensorrt", GpuProvider::tensorrt},
};

constexpr std::pair<std::string_view, std::string_view> kConvAlgoSearch[] = {
    {"exhaustive", "EXHAUSTIVE"},
    {"heuristic", "HEURISTIC"},
    {"default", "DEFAULT"},
};

constexpr std::pair<std::string_view, std::string_view> kArenaStrategies[] = {
    {"next_power_of_two", "kNextPowerOfTwo"},
    {"same_as_requested", "kSameAsRequested"},
};

// ONNX Runtime takes thread counts as int.
constexpr std::int64_t kMaxThreads = std::numeric_limits<int>::max();

const char* flag(bool value) { return value ? "1" : "0"; }

}  // namespace

std::vector<BackendOption> onnxruntime_option_list() {
    std::vector<BackendOption> list{
        {"runtime", "",
         "the ONNX Runtime to run: a folder (or its lib/) holding libonnxruntime.so.1, or the library itself; "
         "empty = INFERBENCH_ONNXRUNTIME_ROOT, else the bundled one, else the one built with",
         OptionType::path},
        {"intra_op_threads", "0", "threads used inside one operator; 0 = ONNX Runtime's default (physical cores)",
         OptionType::count},
        {"inter_op_threads", "0", "threads running independent operators (execution_mode parallel); 0 = default",
         OptionType::count},
        {"graph_optimization", "all", "graph optimization level: disable|basic|extended|all", OptionType::choice},
        {"execution_mode", "sequential", "operator scheduling: sequential|parallel", OptionType::choice},
        {"layer_profile", "0",
         "per-layer times: after the measured loop, a separate profiled run of this many iterations (max 1000) "
         "on a second session; 0 = off (a cuda cell still profiles one run, for the nodes' placement)",
         OptionType::count},
        {"execution_provider", "cuda", "cuda devices: the execution provider, cuda|tensorrt", OptionType::choice},
        {"cudnn_conv_algo_search", "exhaustive",
         "cuda: how cuDNN convolution algorithms are chosen: "
         "exhaustive|heuristic|default",
         OptionType::choice},
        {"arena_extend_strategy", "next_power_of_two",
         "cuda: how the GPU memory arena grows: "
         "next_power_of_two|same_as_requested",
         OptionType::choice},
        {"gpu_mem_limit", "0", "cuda: the GPU memory arena's limit in bytes; 0 = no limit", OptionType::count},
        {"enable_cuda_graph", "false", "cuda, tensorrt: capture the run once as a CUDA graph and replay it",
         OptionType::flag},
        {"use_tf32", "true", "cuda: let float32 matrix products and convolutions use TF32 tensor cores",
         OptionType::flag},
        {"prefer_nhwc", "false", "cuda: run convolutions in NHWC layout where ONNX Runtime can", OptionType::flag},
        device_resident_option(),
    };
    for (BackendOption& option : ort_precision_option_list()) list.push_back(std::move(option));
    return list;
}

OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options) {
    const OptionReader read("onnxruntime", options, onnxruntime_option_list());
    OnnxRuntimeOptions parsed;
    parsed.runtime = read.text("runtime");
    parsed.intra_op_threads = static_cast<int>(read.count("intra_op_threads", kMaxThreads));
    parsed.inter_op_threads = static_cast<int>(read.count("inter_op_threads", kMaxThreads));
    parsed.graph_optimization = read.choice("graph_optimization", kOptimizationLevels);
    parsed.execution_mode = read.choice("execution_mode", kExecutionModes);
    parsed.layer_profile = read.count("layer_profile", kMaxLayerProfileIterations);
    OrtGpuOptions& gpu = parsed.gpu;
    gpu.provider = read.choice("execution_provider", kProviders);
    gpu.cudnn_conv_algo_search = std::string(read.choice("cudnn_conv_algo_search", kConvAlgoSearch));
    gpu.arena_extend_strategy = std::string(read.choice("arena_extend_strategy", kArenaStrategies));
    gpu.gpu_mem_limit = read.count("gpu_mem_limit");
    gpu.enable_cuda_graph = read.flag("enable_cuda_graph");
    gpu.use_tf32 = read.flag("use_tf32");
    gpu.prefer_nhwc = read.flag("prefer_nhwc");
    gpu.device_resident = read.flag("device_resident");
    parsed.precision = read_ort_precision_options(read);
    return parsed;
}

std::vector<std::string> gpu_options_given(const OnnxRuntimeOptions& options) {
    const OrtGpuOptions defaults;
    const OrtGpuOptions& gpu = options.gpu;
    std::vector<std::string> given;
    const auto note = [&](bool differs, const char* name) {
        if (differs) given.emplace_back(name);
    };
    note(gpu.provider != defaults.provider, "execution_provider");
    note(gpu.cudnn_conv_algo_search != defaults.cudnn_conv_algo_search, "cudnn_conv_algo_search");
    note(gpu.arena_extend_strategy != defaults.arena_extend_strategy, "arena_extend_strategy");
    note(gpu.gpu_mem_limit != defaults.gpu_mem_limit, "gpu_mem_limit");
    note(gpu.enable_cuda_graph != defaults.enable_cuda_graph, "enable_cuda_graph");
    note(gpu.use_tf32 != defaults.use_tf32, "use_tf32");
    note(gpu.prefer_nhwc != defaults.prefer_nhwc, "prefer_nhwc");
    note(gpu.device_resident != defaults.device_resident, "device_resident");
    return given;
}

ProviderOptions gpu_provider_options(const OrtGpuOptions& options) {
    if (options.provider == GpuProvider::tensorrt) return {{"trt_cuda_graph_enable", flag(options.enable_cuda_graph)}};
    ProviderOptions provider{
        {"cudnn_conv_algo_search", options.cudnn_conv_algo_search},
        {"arena_extend_strategy", options.arena_extend_strategy},
        {"enable_cuda_graph", flag(options.enable_cuda_graph)},
        {"use_tf32", flag(options.use_tf32)},
        {"prefer_nhwc", flag(options.prefer_nhwc)},
    };
    if (options.gpu_mem_limit > 0) provider["gpu_mem_limit"] = std::to_string(options.gpu_mem_limit);
    return provider;
}

}  // namespace inferbench
