// The options of the LibTorch backend (plan: backend_options.torch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

struct TorchOptions {
    bool channels_last = false;    // NHWC memory format for 4-D inputs and weights
    bool cuda_graph = false;       // capture one inference in a CUDA graph and replay it
    bool cudnn_benchmark = true;   // let cuDNN time its algorithms during warm-up
    // float32 matrix products (cuBLAS) on TF32 tensor cores. PyTorch's default is off (its convolutions use TF32
    // by default); ONNX Runtime's CUDA provider's use_tf32 is on: float32 figures of the two differ by this.
    bool tf32_matmul = false;
    bool autocast = false;         // keep fp32 weights and let autocast pick fp16/bf16 per op
    bool device_resident = false;  // inputs and outputs stay on the device: no H2D/D2H, compute only
    std::int64_t threads = 0;      // CPU intra-op threads; 0: one per logical core
    std::string input_shape;       // TorchScript only: input dims without the batch, e.g. 3x224x224
    // > 0 (ONNX models): after the measured loop, one warm-up and this many runs with each node timed,
    // for per-layer times (`inferbench roofline --layers`); 0: off.
    std::int64_t layer_profile = 0;
};

// The most runs layer_profile takes.
inline constexpr std::int64_t kMaxTorchLayerProfileRuns = 1000;

std::vector<BackendOption> torch_option_list();
TorchOptions parse_torch_options(const OptionMap& options);  // throws UserError

}  // namespace inferbench
