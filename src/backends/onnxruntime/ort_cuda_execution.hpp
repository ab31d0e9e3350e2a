// GPU execution for the onnxruntime backend, with the torch backend's timing rules: inputs in pinned host
// buffers and device buffers, outputs in device buffers bound through IO binding (fixed addresses, so a
// CUDA graph replays them), one stream the backend creates and gives ONNX Runtime (user_compute_stream),
// and CUDA events around H2D, compute and D2H recorded on it (backends/cuda_timing). Runs only where
// cuda_runtime loads.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda_timing.hpp"
#include "backends/onnxruntime/cuda_runtime.hpp"

namespace inferbench {

class OrtCudaExecution {
public:
    // Creates the stream on GPU `device`; `device_resident`: no host copies per iteration.
    OrtCudaExecution(int device, bool device_resident);

    // The stream ONNX Runtime is to compute on, as its provider option user_compute_stream takes it.
    std::string stream_option() const;
    const cuda::StreamHandle& stream() const { return stream_; }

    // Copies the inputs into pinned and device buffers, runs once with ONNX Runtime allocating the outputs on
    // the GPU (their shapes), binds device buffers of those shapes, and runs a few more times (cuDNN's
    // algorithm search, the CUDA graph's capture) before anything is timed. `device_memory` is the provider's.
    void prepare(Ort::Session& session, const OrtMemoryInfo* device_memory, std::span<const TensorInfo> inputs,
                 std::span<const std::vector<std::byte>> host_inputs, std::span<const std::string> output_names);

    // A pipeline batch's new bytes for input `index` (as many as prepare() had): into its pinned buffer, which the
    // next run() copies to the GPU; under device_resident, where run() copies nothing, on to the GPU now.
    void stage_input(std::size_t index, std::span<const std::byte> bytes);

    // A pipeline batch already in GPU memory (of device()) for input `index`: copied device to device into the
    // bound buffer on the stream and waited for; the next run() copies nothing from the host for that input.
    void stage_device_input(std::size_t index, const void* device_bytes, std::size_t bytes);

    // The bound output buffers on the GPU (name, element type, shape, address), valid until the next run().
    struct DeviceOutput {
        const std::string& name;
        ONNXTensorElementDataType type;
        const std::vector<std::int64_t>& shape;
        void* data;
    };
    std::vector<DeviceOutput> device_outputs() const;
    int device() const { return device_; }

    // One timed iteration: H2D, Run, D2H on the stream, each between two events.
    void run(Ort::Session& session, DeviceTimes& times);

    // From now on each Run synchronises the stream before it returns (ONNX Runtime's default), so that a
    // profiler's time of the call spans its GPU work; run() times stay as they are. For profiled runs only.
    void synchronize_runs() { run_options_ = Ort::RunOptions(); }

    // Releases the binding and the tensors bound, before the session goes (the stream and buffers stay until
    // this object goes, after the session).
    void unbind();

    // The last run's outputs in host memory (copied back first where the outputs stay on the GPU).
    std::vector<Ort::Value> host_outputs() const;

private:
    struct Output {
        std::string name;
        ONNXTensorElementDataType type;
        std::vector<std::int64_t> shape;
        cuda::Buffer device;
        cuda::Buffer host;
    };
    void copy_outputs_back() const;

    int device_;
    bool device_resident_;
    cuda::StreamHandle stream_;
    IterationTimer timer_;
    std::vector<cuda::Buffer> host_inputs_, device_inputs_;
    std::vector<char> staged_on_device_;  // per input: its device buffer holds newer bytes than its pinned one
    std::vector<Output> outputs_;
    std::vector<Ort::Value> bound_;  // the tensors over the device buffers, kept while bound
    Ort::IoBinding binding_{nullptr};
    Ort::RunOptions run_options_{nullptr};
};

}  // namespace inferbench
