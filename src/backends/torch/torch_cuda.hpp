// CUDA execution for the LibTorch backend: pinned host buffers, one stream, CUDA events around
// H2D, compute and D2H (the trtexec breakdown, backends/cuda_timing over the runtime LibTorch links),
// optional CUDA-graph replay and device residency.
// Compiled only against a LibTorch built with CUDA.
#pragma once

#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "backends/torch/layer_profile.hpp"
#include "backends/torch/torch_model.hpp"

namespace inferbench {

struct CudaExecutionConfig {
    int device_index = 0;
    bool cuda_graph = false;
    bool device_resident = false;
};

// CUDA events recorded before and after each node on the current stream of GPU `device_index`.
std::unique_ptr<StepClock> make_cuda_step_clock(int device_index);

class CudaExecution {
public:
    explicit CudaExecution(const CudaExecutionConfig& config);
    ~CudaExecution();
    CudaExecution(const CudaExecution&) = delete;
    CudaExecution& operator=(const CudaExecution&) = delete;

    // Pins the host inputs, allocates device buffers and host outputs, captures the graph.
    void prepare(TorchModel& model, const std::vector<torch::Tensor>& host_inputs);
    void run(TorchModel& model, DeviceTimes& times);
    // New host inputs (prepare()'s types and shapes) into the pinned buffers the next run() copies to the GPU.
    void stage_inputs(const std::vector<torch::Tensor>& host_inputs);
    const std::vector<torch::Tensor>& host_outputs() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace inferbench
