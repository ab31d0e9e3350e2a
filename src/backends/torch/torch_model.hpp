// What the LibTorch backend runs: a TorchScript module (.pt) or an ONNX graph interpreted with
// LibTorch ops (.onnx, which is how every zoo model runs here), behind one interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "backends/backend.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "backends/torch/torch_tensors.hpp"

namespace inferbench {

class TorchModel {
public:
    virtual ~TorchModel() = default;
    // Declared inputs, batch resolved; dtype is the model's own (before any precision conversion).
    virtual std::vector<TensorInfo> inputs() const = 0;
    virtual std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs) = 0;
    // The names of forward()'s outputs, in order, where the file names them (ONNX); empty otherwise.
    virtual std::vector<std::string> output_names() const { return {}; }
    // Fixes the input shapes to those of `inputs` where the model can use them (the interpreter
    // folds its shape arithmetic into constants: see OnnxProgram::specialize); forward() then takes
    // inputs of these shapes only.
    virtual void specialize(const std::vector<torch::Tensor>& inputs) { (void)inputs; }
    // The interpreted ONNX program, which can be run node by node; null for TorchScript.
    virtual const torch_onnx::OnnxProgram* program() const { return nullptr; }
};

struct TorchModelConfig {
    torch::Device device = torch::kCPU;
    torch::ScalarType float_type = torch::kFloat;  // weights of floating type are converted to this
    bool channels_last = false;
    std::int64_t batch_size = 1;
    std::string input_shape;  // TorchScript: dims without the batch ("3x224x224")
};

// Chooses by extension: .pt/.pth/.ts TorchScript, .onnx the ONNX interpreter. Throws on errors.
std::unique_ptr<TorchModel> load_torch_model(const std::string& path, const TorchModelConfig& config);

// For cuda_graph=true, after specialize(): throws UserError naming the first node a captured graph
// cannot replay — an If whose condition is computed at run time (a graph replays one branch), or
// an operator whose output size depends on the data (NonZero, NonMaxSuppression) — and saying to
// set backend_options.torch.cuda_graph=false. `model_path` names the file in the message.
void check_cuda_graph_capturable(const TorchModel& model, const std::string& model_path);

}  // namespace inferbench
