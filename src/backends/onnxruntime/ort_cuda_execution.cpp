#include "backends/onnxruntime/ort_cuda_execution.hpp"

#include <onnxruntime_run_options_config_keys.h>

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench {
namespace {

// Plain runs before anything is timed: the first allocates and learns the output shapes, the next
// search cuDNN's algorithms and (enable_cuda_graph) capture the graph, which ONNX Runtime does after its
// own warm-up run.
constexpr int kPrepareRuns = 3;

std::size_t element_size(ONNXTensorElementDataType type) {
    switch (type) {
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64: return 8;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return 2;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128: return 16;
        default: throw std::runtime_error(fmt::format("an output of element type {} cannot live in a GPU buffer",
                                                      static_cast<int>(type)));
    }
}

std::size_t byte_size(ONNXTensorElementDataType type, const std::vector<std::int64_t>& shape) {
    std::size_t count = 1;
    for (const auto d : shape) count *= static_cast<std::size_t>(d);
    return count * element_size(type);
}

}  // namespace

OrtCudaExecution::OrtCudaExecution(int device, bool device_resident)
    : device_(device),
      device_resident_(device_resident),
      stream_(device),
      timer_(cuda::require_runtime(), stream_.get(), !device_resident) {}

std::string OrtCudaExecution::stream_option() const {
    return std::to_string(reinterpret_cast<std::uintptr_t>(stream_.get()));
}

void OrtCudaExecution::prepare(Ort::Session& session, const OrtMemoryInfo* device_memory,
                               std::span<const TensorInfo> inputs, std::span<const std::vector<std::byte>> host_inputs,
                               std::span<const std::string> output_names) {
    unbind();  // a second prepare() starts afresh
    host_inputs_.clear();
    device_inputs_.clear();
    staged_on_device_.assign(inputs.size(), 0);
    outputs_.clear();
    Ort::IoBinding binding(session);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const TensorInfo& info = inputs[i];
        const auto& bytes = host_inputs[i];
        auto& host = host_inputs_.emplace_back(cuda::Buffer::Kind::pinned_host, bytes.size());
        if (!bytes.empty()) std::memcpy(host.data(), bytes.data(), bytes.size());
        auto& device = device_inputs_.emplace_back(cuda::Buffer::Kind::device, bytes.size());
        cuda::copy_async(device.data(), host.data(), bytes.size(), cuda::CopyKind::host_to_device, stream_.get());
        const auto onnx_type = session.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType();
        bound_.push_back(Ort::Value::CreateTensor(device_memory, device.data(), bytes.size(), info.shape.data(),
                                                  info.shape.size(), onnx_type));
        binding.BindInput(info.name.c_str(), bound_.back());
    }
    stream_.synchronize();
    // The first run: ONNX Runtime allocates the outputs on the GPU, which gives their shapes.
    for (const std::string& name : output_names) binding.BindOutput(name.c_str(), device_memory);
    run_options_ = Ort::RunOptions();
    session.Run(run_options_, binding);
    const std::vector<Ort::Value> allocated = binding.GetOutputValues();
    binding.ClearBoundOutputs();
    for (std::size_t i = 0; i < output_names.size(); ++i) {
        const auto info = allocated[i].GetTensorTypeAndShapeInfo();
        const ONNXTensorElementDataType type = info.GetElementType();
        const std::vector<std::int64_t> shape = info.GetShape();
        const std::size_t bytes = byte_size(type, shape);
        outputs_.push_back({output_names[i], type, shape, cuda::Buffer(cuda::Buffer::Kind::device, bytes),
                            cuda::Buffer(cuda::Buffer::Kind::pinned_host, bytes)});
        Output& out = outputs_.back();
        bound_.push_back(Ort::Value::CreateTensor(device_memory, out.device.data(), bytes, out.shape.data(),
                                                  out.shape.size(), type));
        binding.BindOutput(out.name.c_str(), bound_.back());
    }
    // From here on Run returns once its work is queued on the stream; the events and the last one's
    // synchronisation say when it is done, as for the torch backend.
    run_options_.AddConfigEntry(kOrtRunOptionsConfigDisableSynchronizeExecutionProviders, "1");
    for (int i = 0; i < kPrepareRuns; ++i) session.Run(run_options_, binding);
    binding_ = std::move(binding);
    copy_outputs_back();
}

void OrtCudaExecution::stage_input(std::size_t index, std::span<const std::byte> bytes) {
    cuda::Buffer& host = host_inputs_.at(index);
    if (bytes.size() != host.size()) throw std::logic_error("OrtCudaExecution::stage_input(): not prepare()'s size");
    if (!bytes.empty()) std::memcpy(host.data(), bytes.data(), bytes.size());
    staged_on_device_.at(index) = 0;
    if (!device_resident_) return;
    cuda::copy_async(device_inputs_.at(index).data(), host.data(), bytes.size(), cuda::CopyKind::host_to_device,
                     stream_.get());
    stream_.synchronize();
}

void OrtCudaExecution::stage_device_input(std::size_t index, const void* device_bytes, std::size_t bytes) {
    cuda::Buffer& device = device_inputs_.at(index);
    if (bytes != device.size())
        throw std::logic_error("OrtCudaExecution::stage_device_input(): not prepare()'s size");
    cuda::copy_async(device.data(), device_bytes, bytes, cuda::CopyKind::device_to_device, stream_.get());
    stream_.synchronize();
    staged_on_device_.at(index) = 1;
}

std::vector<OrtCudaExecution::DeviceOutput> OrtCudaExecution::device_outputs() const {
    std::vector<DeviceOutput> out;
    for (const Output& o : outputs_) out.push_back({o.name, o.type, o.shape, o.device.data()});
    return out;
}

void OrtCudaExecution::run(Ort::Session& session, DeviceTimes& times) {
    const cuda::Stream stream = stream_.get();
    // Inputs staged from GPU memory are already in place: their (older) pinned bytes must not overwrite them.
    const auto h2d = [&] {
        for (std::size_t i = 0; i < device_inputs_.size(); ++i)
            if (!staged_on_device_[i])
                cuda::copy_async(device_inputs_[i].data(), host_inputs_[i].data(), host_inputs_[i].size(),
                                 cuda::CopyKind::host_to_device, stream);
    };
    const auto d2h = [&] {
        for (const Output& out : outputs_)
            cuda::copy_async(out.host.data(), out.device.data(), out.device.size(), cuda::CopyKind::device_to_host,
                             stream);
    };
    times = timer_.time(h2d, [&] { session.Run(run_options_, binding_); }, d2h);
}

void OrtCudaExecution::unbind() {
    binding_ = Ort::IoBinding(nullptr);
    bound_.clear();
}

void OrtCudaExecution::copy_outputs_back() const {
    for (const Output& out : outputs_)
        cuda::copy_async(out.host.data(), out.device.data(), out.device.size(), cuda::CopyKind::device_to_host,
                         stream_.get());
    stream_.synchronize();
}

std::vector<Ort::Value> OrtCudaExecution::host_outputs() const {
    if (device_resident_) copy_outputs_back();
    const auto cpu = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
    std::vector<Ort::Value> values;
    for (const Output& out : outputs_)
        values.push_back(Ort::Value::CreateTensor(cpu, out.host.data(), out.host.size(), out.shape.data(),
                                                  out.shape.size(), out.type));
    return values;
}

}  // namespace inferbench
