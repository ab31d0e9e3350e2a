#include "backends/torch/torch_execution.hpp"

#include <thread>

#include <fmt/format.h>
#include <torch/version.h>

#include "core/error.hpp"

namespace inferbench {

bool libtorch_cuda_available() {
#if INFERBENCH_TORCH_CUDA
    return torch::cuda::is_available();
#else
    return false;
#endif
}

std::string libtorch_version() {
    return fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
}

Capabilities libtorch_capabilities() {
    const bool cuda = libtorch_cuda_available();
    Capabilities caps;
    caps.devices = {DeviceKind::cpu};
    if (cuda) caps.devices.push_back(DeviceKind::cuda);
    caps.precisions = {Precision::fp32, Precision::fp16, Precision::bf16};
    caps.cuda_graphs = cuda;
    caps.device_timing = cuda;
    return caps;
}

void set_intra_op_threads(std::int64_t threads) {
    const auto count = threads > 0 ? threads : std::thread::hardware_concurrency();
    torch::set_num_threads(static_cast<int>(count));
}

void throw_outputs_stay_on_device(std::string_view backend) {
    throw UserError(fmt::format("{} option device_resident=true leaves the outputs on the GPU, never copied back; "
                                "check the outputs without it",
                                backend));
}

TorchExecution::TorchExecution() = default;
TorchExecution::~TorchExecution() = default;

void TorchExecution::prepare(TorchModel& model, const std::vector<torch::Tensor>& host_inputs,
                             const TorchRunConfig& config) {
    host_inputs_ = host_inputs;
    outputs_.clear();
#if INFERBENCH_TORCH_CUDA
    cuda_.reset();  // the last one's buffers and graph go first
    if (config.cuda) {
        // Kept only once prepared: one that failed (a graph that could not be captured) leaves nothing behind.
        auto cuda = std::make_unique<CudaExecution>(
            CudaExecutionConfig{config.device_index, config.cuda_graph, config.device_resident});
        cuda->prepare(model, host_inputs_);
        cuda_ = std::move(cuda);
        return;
    }
#else
    (void)config;
#endif
    outputs_ = model.forward(host_inputs_);
}

void TorchExecution::stage_inputs(const std::vector<torch::Tensor>& host_inputs) {
#if INFERBENCH_TORCH_CUDA
    if (cuda_) {
        cuda_->stage_inputs(host_inputs);
        return;
    }
#endif
    for (std::size_t i = 0; i < host_inputs_.size() && i < host_inputs.size(); ++i) host_inputs_[i].copy_(host_inputs[i]);
}

void TorchExecution::infer(TorchModel& model, DeviceTimes& times) {
#if INFERBENCH_TORCH_CUDA
    if (cuda_) {
        cuda_->run(model, times);
        return;
    }
#endif
    (void)times;
    outputs_ = model.forward(host_inputs_);
}

const std::vector<torch::Tensor>& TorchExecution::outputs() const {
#if INFERBENCH_TORCH_CUDA
    if (cuda_) return cuda_->host_outputs();
#endif
    return outputs_;
}

}  // namespace inferbench
