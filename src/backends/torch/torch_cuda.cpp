#include "backends/torch/torch_cuda.hpp"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <deque>
#include <optional>

#include "backends/cuda_linked_runtime.hpp"
#include "backends/cuda_timing.hpp"
#include "core/clock.hpp"
#include "core/time_units.hpp"

namespace inferbench {
namespace {

std::int64_t elapsed_ns(const at::cuda::CUDAEvent& from, const at::cuda::CUDAEvent& to) {
    return static_cast<std::int64_t>(ms_to_ns(from.elapsed_time(to)));
}

void copy_all(std::vector<torch::Tensor>& to, const std::vector<torch::Tensor>& from) {
    for (std::size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i], /*non_blocking=*/true);
}

class CudaStepClock final : public StepClock {
public:
    explicit CudaStepClock(int device_index) : device_(static_cast<c10::DeviceIndex>(device_index)) {}
    void start_run(std::size_t steps) override {
        // Timing needs events created without cudaEventDisableTiming; kept from run to run.
        while (starts_.size() < steps) {
            starts_.emplace_back(cudaEventDefault);
            stops_.emplace_back(cudaEventDefault);
        }
        steps_ = steps;
    }
    void before(std::size_t step) override { starts_[step].record(c10::cuda::getCurrentCUDAStream(device_)); }
    void after(std::size_t step) override { stops_[step].record(c10::cuda::getCurrentCUDAStream(device_)); }
    void finish_run(std::vector<std::int64_t>& total_ns) override {
        if (steps_ == 0) return;
        // One stream: every event has completed once it is drained. A stream, not an event: waiting on an event
        // made without cudaEventBlockingSync spins whatever the context's sync mode (`sync: blocking`).
        c10::cuda::getCurrentCUDAStream(device_).synchronize();
        for (std::size_t i = 0; i < steps_; ++i) total_ns[i] += elapsed_ns(starts_[i], stops_[i]);
    }

private:
    c10::DeviceIndex device_;
    std::deque<at::cuda::CUDAEvent> starts_, stops_;
    std::size_t steps_ = 0;
};

// A model that threw while being captured left the stream capturing, which would fail every later call
// on it (and, in the global capture mode, allocations anywhere): end the capture and drop what it made,
// so that the caller can run the model without a graph.
void end_failed_capture(const c10::cuda::CUDAStream& stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(stream.stream(), &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();  // the capture's error is the model's, already on its way up
}

}  // namespace

std::unique_ptr<StepClock> make_cuda_step_clock(int device_index) { return std::make_unique<CudaStepClock>(device_index); }

struct CudaExecution::Impl {
    explicit Impl(const CudaExecutionConfig& c)
        : config(c), stream(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(c.device_index))) {}

    CudaExecutionConfig config;
    c10::cuda::CUDAStream stream;
    std::optional<IterationTimer> timer;  // made in prepare(), on the stream's device
    std::vector<torch::Tensor> host_inputs, device_inputs, device_outputs, host_outputs;
    std::optional<at::cuda::CUDAGraph> graph;
};

CudaExecution::CudaExecution(const CudaExecutionConfig& config) : impl_(std::make_unique<Impl>(config)) {}
CudaExecution::~CudaExecution() = default;

const std::vector<torch::Tensor>& CudaExecution::host_outputs() const { return impl_->host_outputs; }

void CudaExecution::prepare(TorchModel& model, const std::vector<torch::Tensor>& host_inputs) {
    Impl& s = *impl_;
    c10::cuda::CUDAStreamGuard guard(s.stream);
    s.timer.emplace(cuda::linked_runtime(), s.stream.stream(), !s.config.device_resident);
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(s.config.device_index));
    for (const auto& input : host_inputs) {
        s.host_inputs.push_back(input.pin_memory());
        s.device_inputs.push_back(input.to(device));
    }
    // A few plain runs first: cuDNN autotuning and lazy allocations must not be captured.
    for (int i = 0; i < 3; ++i) s.device_outputs = model.forward(s.device_inputs);
    s.stream.synchronize();
    if (s.config.cuda_graph) {
        s.graph.emplace();
        s.graph->capture_begin();
        try {
            s.device_outputs = model.forward(s.device_inputs);
        } catch (...) {
            end_failed_capture(s.stream);
            s.graph.reset();
            throw;
        }
        s.graph->capture_end();
        s.graph->replay();
        s.stream.synchronize();
    }
    for (const auto& output : s.device_outputs)
        s.host_outputs.push_back(torch::empty_like(output, torch::kCPU).pin_memory());
}

void CudaExecution::stage_inputs(const std::vector<torch::Tensor>& host_inputs) {
    Impl& s = *impl_;
    for (std::size_t i = 0; i < s.host_inputs.size() && i < host_inputs.size(); ++i) s.host_inputs[i].copy_(host_inputs[i]);
    if (!s.config.device_resident) return;
    // run() copies nothing under device_resident: the new inputs go to the GPU now.
    c10::cuda::CUDAStreamGuard guard(s.stream);
    copy_all(s.device_inputs, s.host_inputs);
    s.stream.synchronize();
}

void CudaExecution::run(TorchModel& model, DeviceTimes& times) {
    Impl& s = *impl_;
    c10::cuda::CUDAStreamGuard guard(s.stream);
    const auto compute = [&] {
        if (s.graph) {
            s.graph->replay();
        } else {
            s.device_outputs = model.forward(s.device_inputs);
        }
    };
    times = s.timer->time([&] { copy_all(s.device_inputs, s.host_inputs); }, compute,
                          [&] { copy_all(s.host_outputs, s.device_outputs); });
}

}  // namespace inferbench
