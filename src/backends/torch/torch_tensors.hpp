// Tensors between the harness and LibTorch, for every backend that runs on LibTorch (torch, torch-aoti):
// element types both ways, the harness's host inputs as torch tensors, and outputs back as host tensors.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "backends/backend.hpp"

namespace inferbench {

torch::ScalarType to_torch(DType type);
// The DType of a tensor forward() gave; throws UserError for a type inferbench has none for.
DType from_torch(torch::ScalarType type);

// A CPU tensor with its own copy of `tensor`'s bytes, of its element type and shape.
torch::Tensor to_torch_tensor(const HostTensor& tensor);

// Outputs in host memory, in order, each named by `names` where it has a name for it, else "outputN".
std::vector<HostTensor> to_host_tensors(const std::vector<torch::Tensor>& outputs, const std::vector<std::string>& names);

}  // namespace inferbench
