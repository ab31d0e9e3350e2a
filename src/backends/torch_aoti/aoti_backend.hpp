// The torch-aoti backend: PyTorch models compiled ahead of time by AOTInductor into .pt2 packages, run from
// C++ with LibTorch's AOTIModelPackageLoader (LibTorch >= 2.6), no Python in the measured process. The
// package is made before the timed load by runners/torch_export.py (from a zoo name, a model spec or a
// user's .pt2), cached, its compile time counted as load time; it runs on the CPU and, with a CUDA LibTorch,
// on NVIDIA GPUs with the torch backend's CUDA execution (events, pinned buffers, optional CUDA graph).
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_torch_aoti_backend();

}  // namespace inferbench
