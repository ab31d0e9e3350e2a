#include "backends/onnxruntime/onnxruntime_backend.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "backends/onnxruntime/onnxruntime_options.hpp"
#include "backends/onnxruntime/ort_model_conversion.hpp"
#include "backends/onnxruntime/ort_profile.hpp"
#include "core/error.hpp"
#include "core/temp_dir.hpp"

namespace inferbench {
namespace {

struct ElementType {
    ONNXTensorElementDataType onnx;
    std::string_view name;       // as ONNX spells it, for messages
    std::optional<DType> dtype;  // nothing: inferbench cannot feed it
};

constexpr ElementType kElementTypes[] = {
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "float", DType::f32},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, "float16", DType::f16},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, "bfloat16", DType::bf16},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, "double", DType::f64},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, "int8", DType::i8},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, "uint8", DType::u8},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, "int32", DType::i32},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "int64", DType::i64},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, "bool", DType::boolean},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, "uint16", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, "int16", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, "uint32", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, "uint64", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, "string", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64, "complex64", std::nullopt},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128, "complex128", std::nullopt},
};

std::string element_type_name(ONNXTensorElementDataType type) {
    for (const auto& t : kElementTypes) {
        if (t.onnx == type) return std::string(t.name);
    }
    return fmt::format("element type {}", static_cast<int>(type));
}

ONNXTensorElementDataType to_onnx(DType dtype) {
    for (const auto& t : kElementTypes) {
        if (t.dtype == dtype) return t.onnx;
    }
    throw std::logic_error("every DType has an ONNX element type");
}

std::optional<DType> from_onnx(ONNXTensorElementDataType type) {
    for (const auto& t : kElementTypes) {
        if (t.onnx == type) return t.dtype;
    }
    return std::nullopt;
}

// Why the CUDA execution provider cannot be used, or nothing when it can; found once per process.
// ORT lists CUDA among its providers even when its provider library is missing, so only appending
// the provider tells.
const std::optional<std::string>& cuda_provider_problem() {
    static const std::optional<std::string> problem = []() -> std::optional<std::string> {
        try {
            Ort::Env env(ORT_LOGGING_LEVEL_FATAL, "inferbench-probe");
            Ort::SessionOptions options;
            options.AppendExecutionProvider_CUDA(OrtCUDAProviderOptions{});
            return std::nullopt;
        } catch (const Ort::Exception& e) {
            return e.what();
        }
    }();
    return problem;
}

std::string precision_reason(Precision precision) {
    return fmt::format(
        "onnxruntime converts models to fp16 and int8 (QDQ) only; {} needs a {} model file, which the CPU and CUDA "
        "execution providers do not make",
        to_string(precision), to_string(precision));
}

Ort::SessionOptions make_session_options(const OnnxRuntimeOptions& options, const Device& device) {
    Ort::SessionOptions session_options;
    session_options.SetIntraOpNumThreads(options.intra_op_threads);
    session_options.SetInterOpNumThreads(options.inter_op_threads);
    session_options.SetGraphOptimizationLevel(options.graph_optimization);
    session_options.SetExecutionMode(options.execution_mode);
    if (device.kind == DeviceKind::cuda) {
        OrtCUDAProviderOptions cuda{};
        cuda.device_id = device.index;
        session_options.AppendExecutionProvider_CUDA(cuda);
    }
    return session_options;
}

std::string load_error(const std::string& path, const Ort::Exception& e) {
    if (e.GetOrtErrorCode() == ORT_INVALID_PROTOBUF || e.GetOrtErrorCode() == ORT_INVALID_GRAPH)
        return fmt::format("cannot load ONNX model {}: not a valid ONNX file (ONNX Runtime: {})", path, e.what());
    return fmt::format("cannot load ONNX model {}: {}", path, e.what());
}

// The declared shape with the exporter's names of its dynamic dimensions, for the batch rule.
DeclaredShape declared_shape(const Ort::ConstTensorTypeAndShapeInfo& info) {
    DeclaredShape declared{info.GetShape(), {}};
    std::vector<const char*> symbols(declared.dims.size(), nullptr);
    info.GetSymbolicDimensions(symbols.data(), symbols.size());
    for (const char* symbol : symbols) declared.symbols.emplace_back(symbol != nullptr ? symbol : "");
    return declared;
}

TensorInfo read_input(const Ort::Session& session, std::size_t index, const std::string& model,
                      std::int64_t batch) {
    Ort::AllocatorWithDefaultOptions allocator;
    TensorInfo info;
    info.name = session.GetInputNameAllocated(index, allocator).get();
    const Ort::TypeInfo type = session.GetInputTypeInfo(index);
    if (type.GetONNXType() != ONNX_TYPE_TENSOR)
        throw std::runtime_error(fmt::format("input {} of model {} is not a tensor (a sequence, map or "
                                             "optional); inferbench feeds tensors only",
                                             info.name, model));
    const auto tensor = type.GetTensorTypeAndShapeInfo();
    const ONNXTensorElementDataType onnx_type = tensor.GetElementType();
    const auto* known = std::find_if(std::begin(kElementTypes), std::end(kElementTypes),
                                     [&](const ElementType& t) { return t.onnx == onnx_type; });
    if (known == std::end(kElementTypes) || !known->dtype)
        throw std::runtime_error(fmt::format("input {} of model {} has element type {}, which inferbench "
                                             "cannot feed",
                                             info.name, model, element_type_name(onnx_type)));
    info.dtype = *known->dtype;
    info.shape = resolve_batch_shape(declared_shape(tensor), batch, model, info.name);
    return info;
}

const HostTensor& find_input(std::span<const HostTensor> given, const TensorInfo& wanted) {
    const auto found = std::find_if(given.begin(), given.end(),
                                    [&](const HostTensor& t) { return t.info.name == wanted.name; });
    if (found == given.end())
        throw std::runtime_error(fmt::format("prepare(): no data for input {}", wanted.name));
    if (found->info.dtype != wanted.dtype || found->data.size() != wanted.byte_size())
        throw std::runtime_error(fmt::format(
            "prepare(): input {} needs {} bytes of {}, got {} bytes of {}", wanted.name, wanted.byte_size(),
            to_string(wanted.dtype), found->data.size(), to_string(found->info.dtype)));
    return *found;
}

}  // namespace

OnnxRuntimeBackend::OnnxRuntimeBackend() {
    // The C++ API is initialised by hand (ORT_API_MANUAL_INIT) so that an ONNX Runtime older than
    // the headers gives this message instead of a null pointer dereference.
    static const OrtApi* const api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (api == nullptr)
        throw EnvironmentError(fmt::format(
            "ONNX Runtime {} is older than the headers inferbench was built with (API version {}); "
            "use ONNX Runtime 1.{} or newer",
            OrtGetApiBase()->GetVersionString(), ORT_API_VERSION, ORT_API_VERSION));
    Ort::InitApi(api);
}

std::string OnnxRuntimeBackend::version() const { return OrtGetApiBase()->GetVersionString(); }

Capabilities OnnxRuntimeBackend::capabilities() const {
    Capabilities caps;
    caps.devices = {DeviceKind::cpu};
    if (!cuda_provider_problem()) caps.devices.push_back(DeviceKind::cuda);
    caps.precisions = {Precision::fp32, Precision::fp16, Precision::int8};  // fp16, int8: converted models
    caps.model_formats = {"onnx"};
    caps.dynamic_batch = true;
    caps.device_timing = false;
    return caps;
}

std::vector<BackendOption> OnnxRuntimeBackend::options() const { return onnxruntime_option_list(); }

std::optional<std::string> OnnxRuntimeBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    if (spec.device.kind == DeviceKind::cuda && cuda_provider_problem())
        return fmt::format("onnxruntime has no working CUDA execution provider here ({}; it needs "
                           "libonnxruntime_providers_cuda.so next to libonnxruntime.so.1, and CUDA and cuDNN)",
                           *cuda_provider_problem());
    if (spec.precision == Precision::bf16 || spec.precision == Precision::fp8) return precision_reason(spec.precision);
    return Backend::unsupported_reason(spec);
}

ConvertedModel OnnxRuntimeBackend::convert_model(const std::string& model_path, const BenchmarkSpec& spec) {
    return convert_for_onnxruntime(model_path, spec, parse_onnxruntime_options(spec.backend_options));
}

void OnnxRuntimeBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    const OnnxRuntimeOptions options = parse_onnxruntime_options(spec.backend_options);
    std::error_code ec;
    if (!std::filesystem::exists(model_path, ec))
        throw std::runtime_error(fmt::format("cannot load ONNX model {}: no such file", model_path));
    reset();
    try {
        env_ = Ort::Env(ORT_LOGGING_LEVEL_WARNING, "inferbench");
        const Ort::SessionOptions session_options = make_session_options(options, spec.device);
        session_ = Ort::Session(env_, model_path.c_str(), session_options);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(load_error(model_path, e));
    }
    model_path_ = model_path;
    options_ = options;
    device_ = spec.device;
    read_model_io(spec.batch_size);
}

void OnnxRuntimeBackend::read_model_io(std::int64_t batch_size) {
    try {
        for (std::size_t i = 0; i < session_.GetInputCount(); ++i)
            inputs_.push_back(read_input(session_, i, model_path_, batch_size));
        Ort::AllocatorWithDefaultOptions allocator;
        for (std::size_t i = 0; i < session_.GetOutputCount(); ++i)
            output_names_.emplace_back(session_.GetOutputNameAllocated(i, allocator).get());
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("cannot read the inputs of ONNX model {}: {}", model_path_, e.what()));
    }
}

void OnnxRuntimeBackend::prepare(std::span<const HostTensor> inputs) {
    if (!session_) throw std::logic_error("OnnxRuntimeBackend::prepare() before load()");
    binding_ = Ort::IoBinding(nullptr);  // it refers to the buffers freed next
    input_values_.clear();
    input_buffers_.clear();
    input_buffers_.reserve(inputs_.size());
    input_values_.reserve(inputs_.size());
    try {
        Ort::IoBinding binding(session_);
        const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
        for (const TensorInfo& info : inputs_) {
            const HostTensor& given = find_input(inputs, info);
            auto& buffer = input_buffers_.emplace_back(given.data);
            input_values_.push_back(Ort::Value::CreateTensor(cpu, buffer.data(), buffer.size(), info.shape.data(),
                                                             info.shape.size(), to_onnx(info.dtype)));
            binding.BindInput(info.name.c_str(), input_values_.back());
        }
        // Bound to host memory, ORT allocates each output where the harness expects it (and copies it
        // back from a GPU), and shapes that depend on the data still work.
        for (const std::string& name : output_names_) binding.BindOutput(name.c_str(), cpu);
        run_options_ = Ort::RunOptions();
        binding_ = std::move(binding);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("cannot bind the inputs of ONNX model {}: {}", model_path_, e.what()));
    }
}

void OnnxRuntimeBackend::infer(DeviceTimes& /*times*/) {
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::infer() before prepare()");
    try {
        session_.Run(run_options_, binding_);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("ONNX Runtime failed to run model {}: {}", model_path_, e.what()));
    }
}

std::vector<LayerTime> OnnxRuntimeBackend::profile_layers(const std::atomic<std::int32_t>& stop) {
    if (options_.layer_profile == 0) return {};
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::profile_layers() before prepare()");
    // ONNX Runtime names the file itself (prefix + date) and writes it at the latest when the session
    // goes: a private folder, declared first so that it is removed last, takes it whatever happens.
    const TempDir folder("onnxruntime-profile");
    std::string profile;
    try {
        Ort::SessionOptions session_options = make_session_options(options_, device_);
        session_options.EnableProfiling((folder.path() / "profile").c_str());
        Ort::Session session(env_, model_path_.c_str(), session_options);
        Ort::IoBinding binding(session);
        for (std::size_t i = 0; i < inputs_.size(); ++i) binding.BindInput(inputs_[i].name.c_str(), input_values_[i]);
        const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
        for (const std::string& name : output_names_) binding.BindOutput(name.c_str(), cpu);
        const Ort::RunOptions run_options;
        // One warm-up run (allocations, thread start-up), left out of the times by the parser.
        for (std::int64_t i = 0; i <= options_.layer_profile; ++i) {
            if (stop.load(std::memory_order_relaxed) != 0) return {};
            session.Run(run_options, binding);
        }
        Ort::AllocatorWithDefaultOptions allocator;
        profile = session.EndProfilingAllocated(allocator).get();
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(
            fmt::format("ONNX Runtime failed to profile model {} (layer_profile): {}", model_path_, e.what()));
    }
    return ort_profile::read_node_times(profile, 1);
}

std::vector<Ort::Value> OnnxRuntimeBackend::outputs() const {
    if (!binding_) return {};
    return binding_.GetOutputValues();
}

std::vector<HostTensor> OnnxRuntimeBackend::last_outputs() const {
    std::vector<HostTensor> out;
    const std::vector<Ort::Value> values = outputs();
    for (std::size_t i = 0; i < values.size() && i < output_names_.size(); ++i) {
        const auto info = values[i].GetTensorTypeAndShapeInfo();
        const auto dtype = from_onnx(info.GetElementType());
        if (!dtype)
            throw UserError(fmt::format("output {} of {} is of {}, which inferbench cannot compare", output_names_[i],
                                        model_path_, element_type_name(info.GetElementType())));
        HostTensor& t = out.emplace_back();
        t.info = {output_names_[i], *dtype, info.GetShape()};
        const auto* bytes = static_cast<const std::byte*>(values[i].GetTensorRawData());
        t.data.assign(bytes, bytes + t.info.byte_size());
    }
    return out;
}

void OnnxRuntimeBackend::reset() {
    binding_ = Ort::IoBinding(nullptr);
    input_values_.clear();
    input_buffers_.clear();
    output_names_.clear();
    inputs_.clear();
    session_ = Ort::Session(nullptr);
    model_path_.clear();
}

std::unique_ptr<Backend> make_onnxruntime_backend() { return std::make_unique<OnnxRuntimeBackend>(); }

}  // namespace inferbench
