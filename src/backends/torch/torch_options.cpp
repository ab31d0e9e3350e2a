#include "backends/torch/torch_options.hpp"

#include "backends/options.hpp"

namespace inferbench {

std::vector<BackendOption> torch_option_list() {
    return {
        {"channels_last", "false", "NHWC memory format for 4-D inputs and the model", OptionType::flag},
        cuda_graph_option(),
        {"cudnn_benchmark", "true", "let cuDNN pick its fastest algorithms during warm-up (cuda only)",
         OptionType::flag},
        {"tf32_matmul", "false",
         "fp32 matrix products on TF32 tensor cores (cuda only; PyTorch's default is off, its convolutions use TF32; "
         "onnxruntime's use_tf32 is on)",
         OptionType::flag},
        {"autocast", "false", "keep fp32 weights; autocast runs eligible ops in the plan's fp16/bf16",
         OptionType::flag},
        device_resident_option(),
        threads_option(),
        {"input_shape", "", "TorchScript (.pt) models: input dims without the batch, e.g. 3x224x224", OptionType::list},
        {"layer_profile", "0",
         "ONNX models: per-layer times from a separate run after the measured loop, one warm-up and this many "
         "runs (max 1000) with each node timed (CUDA events on a GPU); 0 = off",
         OptionType::count},
    };
}

TorchOptions parse_torch_options(const OptionMap& options) {
    const OptionReader read("torch", options, torch_option_list());
    TorchOptions parsed;
    parsed.channels_last = read.flag("channels_last");
    parsed.cuda_graph = read.flag("cuda_graph");
    parsed.cudnn_benchmark = read.flag("cudnn_benchmark");
    parsed.tf32_matmul = read.flag("tf32_matmul");
    parsed.autocast = read.flag("autocast");
    parsed.device_resident = read.flag("device_resident");
    parsed.threads = read.count("threads");
    parsed.input_shape = read.text("input_shape");
    parsed.layer_profile = read.count("layer_profile", kMaxTorchLayerProfileRuns);
    return parsed;
}

}  // namespace inferbench
