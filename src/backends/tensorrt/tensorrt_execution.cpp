#include "backends/tensorrt/tensorrt_execution.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/batch_shape.hpp"
#include "backends/cuda_linked_runtime.hpp"
#include "backends/tensorrt/tensorrt_types.hpp"

namespace inferbench {

TensorRtExecution::TensorRtExecution(std::unique_ptr<nvinfer1::ICudaEngine> engine, std::int64_t batch_size,
                                     const TensorRtOptions& options, std::string model, TensorRtLogger& logger)
    : engine_(std::move(engine)), options_(options), model_(std::move(model)), logger_(logger) {
    context_.reset(engine_->createExecutionContext());
    if (!context_) throw std::runtime_error("TensorRT cannot create an execution context: " + logger_.take_last_error());
    stream_ = make_stream();
    timer_.emplace(cuda::linked_runtime(), stream_.get(), !options_.device_resident);
    bind_tensors(batch_size);
}

// The context (and graph) go before the engine, the engine before the runtime that made it.
TensorRtExecution::~TensorRtExecution() {
    graph_.reset();
    context_.reset();
    engine_.reset();
}

void TensorRtExecution::bind_tensors(std::int64_t batch_size) {
    std::vector<const char*> outputs;
    for (std::int32_t i = 0; i < engine_->getNbIOTensors(); ++i) {
        const char* name = engine_->getIOTensorName(i);
        if (engine_->getTensorLocation(name) != nvinfer1::TensorLocation::kDEVICE)
            throw std::runtime_error(fmt::format("tensor {} of {} is a shape tensor in host memory; inferbench binds "
                                                 "device tensors only",
                                                 name, model_));
        if (engine_->getTensorIOMode(name) != nvinfer1::TensorIOMode::kINPUT) {
            outputs.push_back(name);  // their shapes are known once every input shape is set
            continue;
        }
        std::vector<std::int64_t> shape =
            resolve_batch_shape(to_shape(engine_->getTensorShape(name)), batch_size, model_, name);
        if (!context_->setInputShape(name, to_dims(shape)))
            throw std::runtime_error(fmt::format("TensorRT refuses shape [{}] for input {}: {}", fmt::join(shape, ","),
                                                 name, logger_.take_last_error()));
        add_binding(name, true, std::move(shape));
    }
    for (const char* name : outputs) {
        std::vector<std::int64_t> shape = to_shape(context_->getTensorShape(name));
        if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; }))
            throw std::runtime_error(fmt::format("output {} of {} has a shape that depends on the data; inferbench "
                                                 "needs outputs whose shape the input shapes fix",
                                                 name, model_));
        add_binding(name, false, std::move(shape));
    }
}

void TensorRtExecution::add_binding(const char* name, bool input, std::vector<std::int64_t> shape) {
    const nvinfer1::DataType type = engine_->getTensorDataType(name);
    const auto dtype = to_dtype(type);
    if (!dtype)
        throw std::runtime_error(fmt::format("tensor {} of {} has element type {}, which inferbench cannot hold", name,
                                             model_, data_type_name(type)));
    Binding binding{TensorInfo{name, *dtype, std::move(shape)}, input, {}, {}};
    binding.device = CudaBuffer(CudaBuffer::Kind::device, binding.info.byte_size());
    if (!options_.device_resident) binding.host = CudaBuffer(CudaBuffer::Kind::pinned_host, binding.info.byte_size());
    if (!context_->setTensorAddress(name, binding.device.data()))
        throw std::runtime_error(fmt::format("TensorRT refuses the address of tensor {}: {}", name, logger_.take_last_error()));
    if (input) input_infos_.push_back(binding.info);
    bindings_.push_back(std::move(binding));
}

void TensorRtExecution::stage_input(Binding& binding, const HostTensor& given) {
    const TensorInfo& wanted = binding.info;
    if (given.info.dtype != wanted.dtype || given.data.size() != wanted.byte_size())
        throw std::runtime_error(fmt::format("prepare(): input {} needs {} bytes of {}, got {} bytes of {}", wanted.name,
                                             wanted.byte_size(), to_string(wanted.dtype), given.data.size(),
                                             to_string(given.info.dtype)));
    if (given.data.empty()) return;
    if (options_.device_resident) {
        check_cuda(cudaMemcpy(binding.device.data(), given.data.data(), given.data.size(), cudaMemcpyHostToDevice),
                   fmt::format("copying input {} to the device", wanted.name));
    } else {
        std::memcpy(binding.host.data(), given.data.data(), given.data.size());
    }
}

void TensorRtExecution::prepare(std::span<const HostTensor> inputs) {
    for (Binding& binding : bindings_) {
        if (!binding.input) continue;
        const auto found = std::find_if(inputs.begin(), inputs.end(),
                                        [&](const HostTensor& t) { return t.info.name == binding.info.name; });
        if (found == inputs.end()) throw std::runtime_error(fmt::format("prepare(): no data for input {}", binding.info.name));
        stage_input(binding, *found);
    }
    if (!context_->allInputDimensionsSpecified())
        throw std::runtime_error("TensorRT says not every input shape is set: " + logger_.take_last_error());
    graph_.reset();
    // One plain run first: TensorRT finishes its lazy set-up there, which a graph must not record.
    if (!options_.device_resident) copy_all(true);
    launch();
    check_cuda(cudaStreamSynchronize(stream_.get()), "the first inference");
    if (options_.cuda_graph) capture_graph();
    prepared_ = true;
}

void TensorRtExecution::capture_graph() {
    check_cuda(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    const bool enqueued = context_->enqueueV3(stream_.get());
    cudaGraph_t raw = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_.get(), &raw);
    const CudaGraph graph(raw);
    if (!enqueued || ended != cudaSuccess)
        throw std::runtime_error(fmt::format("the engine for {} cannot be captured in a CUDA graph ({}); run it without "
                                             "the cuda_graph option",
                                             model_, enqueued ? cudaGetErrorString(ended) : logger_.take_last_error()));
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaGraphInstantiateWithFlags(&exec, graph.get(), 0), "cudaGraphInstantiateWithFlags");
    graph_.reset(exec);
    check_cuda(cudaGraphLaunch(graph_.get(), stream_.get()), "the first graph launch");
    check_cuda(cudaStreamSynchronize(stream_.get()), "the first graph launch");
}

void TensorRtExecution::launch() {
    if (graph_) {
        check_cuda(cudaGraphLaunch(graph_.get(), stream_.get()), "cudaGraphLaunch");
    } else if (!context_->enqueueV3(stream_.get())) {
        throw std::runtime_error(fmt::format("TensorRT enqueueV3 failed for {}: {}", model_, logger_.take_last_error()));
    }
}

void TensorRtExecution::copy_all(bool inputs) {
    for (const Binding& b : bindings_) {
        if (b.input != inputs || b.info.byte_size() == 0) continue;
        const cudaError_t status =
            inputs ? cudaMemcpyAsync(b.device.data(), b.host.data(), b.device.size(), cudaMemcpyHostToDevice, stream_.get())
                   : cudaMemcpyAsync(b.host.data(), b.device.data(), b.device.size(), cudaMemcpyDeviceToHost, stream_.get());
        check_cuda(status, inputs ? "cudaMemcpyAsync to the device" : "cudaMemcpyAsync to the host");
    }
}

// The whole iteration is submitted before waiting (enqueueV3 or the graph launch between the copies).
void TensorRtExecution::infer(DeviceTimes& times) {
    if (!prepared_) throw std::logic_error("TensorRtExecution::infer() before prepare()");
    times = timer_->time([&] { copy_all(true); }, [&] { launch(); }, [&] { copy_all(false); });
}

std::vector<HostTensor> TensorRtExecution::outputs() const {
    std::vector<HostTensor> result;
    for (const Binding& b : bindings_) {
        if (b.input) continue;
        HostTensor tensor{b.info, std::vector<std::byte>(b.info.byte_size())};
        if (!tensor.data.empty() && b.host.data() != nullptr) {
            std::memcpy(tensor.data.data(), b.host.data(), tensor.data.size());
        } else if (!tensor.data.empty()) {
            check_cuda(cudaMemcpy(tensor.data.data(), b.device.data(), tensor.data.size(), cudaMemcpyDeviceToHost),
                       fmt::format("copying output {} to the host", b.info.name));
        }
        result.push_back(std::move(tensor));
    }
    return result;
}

}  // namespace inferbench
