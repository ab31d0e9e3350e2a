// What the LibTorch backends (torch, torch-aoti) share beyond tensors: LibTorch's version and CUDA, the
// capabilities both answer, the threads option, and how a loaded TorchModel runs: a plain forward on the
// CPU, or the CUDA execution (torch_cuda) where this LibTorch has CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <torch/torch.h>

#include "backends/backend.hpp"
#include "backends/torch/torch_model.hpp"

#if INFERBENCH_TORCH_CUDA
#include "backends/torch/torch_cuda.hpp"
#endif

namespace inferbench {

// Whether this LibTorch has CUDA and sees a GPU.
bool libtorch_cuda_available();
// LibTorch's version, "MAJOR.MINOR.PATCH".
std::string libtorch_version();
// cpu (and cuda where available), fp32, fp16 and bf16, CUDA graphs and device timing where CUDA is; the
// backend adds its model formats and the rest.
Capabilities libtorch_capabilities();
// The threads option: LibTorch's intra-op threads, 0 for one per logical core.
void set_intra_op_threads(std::int64_t threads);
// What last_outputs() says under device_resident: the outputs never came back to the host.
[[noreturn]] void throw_outputs_stay_on_device(std::string_view backend);

struct TorchRunConfig {
    bool cuda = false;
    int device_index = 0;
    bool cuda_graph = false;
    bool device_resident = false;
};

class TorchExecution {
public:
    TorchExecution();
    ~TorchExecution();
    TorchExecution(const TorchExecution&) = delete;
    TorchExecution& operator=(const TorchExecution&) = delete;

    // Starts afresh: on a GPU the CUDA execution (buffers, warm-up runs, the graph), on the CPU one run.
    void prepare(TorchModel& model, const std::vector<torch::Tensor>& host_inputs, const TorchRunConfig& config);
    // A pipeline batch's new inputs (prepare()'s types and shapes), copied into the tensors the next infer() runs.
    void stage_inputs(const std::vector<torch::Tensor>& host_inputs);
    // One inference; device times on a GPU.
    void infer(TorchModel& model, DeviceTimes& times);
    // The last inference's outputs in host memory.
    const std::vector<torch::Tensor>& outputs() const;

private:
    std::vector<torch::Tensor> host_inputs_, outputs_;
#if INFERBENCH_TORCH_CUDA
    std::unique_ptr<CudaExecution> cuda_;
#endif
};

}  // namespace inferbench
