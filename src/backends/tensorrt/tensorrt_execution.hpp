// One deserialized engine ready to run: an execution context with every I/O tensor bound to device
// memory, pinned host copies, a stream and its timing events (backends/cuda_timing: H2D, compute, D2H),
// and optionally a CUDA graph of enqueueV3.
#pragma once

#include <NvInfer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda_timing.hpp"
#include "backends/tensorrt/tensorrt_cuda.hpp"
#include "backends/tensorrt/tensorrt_logger.hpp"
#include "backends/tensorrt/tensorrt_options.hpp"

namespace inferbench {

class TensorRtExecution {
public:
    // Binds every I/O tensor at `batch_size`; the logger must outlive the execution.
    TensorRtExecution(std::unique_ptr<nvinfer1::ICudaEngine> engine, std::int64_t batch_size,
                      const TensorRtOptions& options, std::string model, TensorRtLogger& logger);
    ~TensorRtExecution();
    TensorRtExecution(const TensorRtExecution&) = delete;
    TensorRtExecution& operator=(const TensorRtExecution&) = delete;

    const std::vector<TensorInfo>& inputs() const { return input_infos_; }
    // Stages the inputs (pinned host memory, or the device when device_resident), runs once, captures the graph.
    void prepare(std::span<const HostTensor> inputs);
    void infer(DeviceTimes& times);
    // The outputs of the last inference, copied to host memory.
    std::vector<HostTensor> outputs() const;

private:
    struct Binding {
        TensorInfo info;
        bool input = false;
        CudaBuffer device;
        CudaBuffer host;  // pinned; empty when device_resident
    };

    void bind_tensors(std::int64_t batch_size);
    void add_binding(const char* name, bool input, std::vector<std::int64_t> shape);
    void stage_input(Binding& binding, const HostTensor& given);
    void capture_graph();
    void launch();
    void copy_all(bool inputs);

    std::unique_ptr<nvinfer1::ICudaEngine> engine_;
    std::unique_ptr<nvinfer1::IExecutionContext> context_;
    TensorRtOptions options_;
    std::string model_;
    TensorRtLogger& logger_;
    std::vector<Binding> bindings_;
    std::vector<TensorInfo> input_infos_;
    CudaStream stream_;
    std::optional<IterationTimer> timer_;
    CudaGraphExec graph_;
    bool prepared_ = false;
};

}  // namespace inferbench
