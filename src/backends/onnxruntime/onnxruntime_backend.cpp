#include "backends/onnxruntime/onnxruntime_backend.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/batch_shape.hpp"
#include "backends/onnxruntime/onnxruntime_options.hpp"
#include "backends/onnxruntime/ort_gpu_provider.hpp"
#include "backends/onnxruntime/ort_model_conversion.hpp"
#include "backends/onnxruntime/ort_profile.hpp"
#include "core/error.hpp"
#include "core/plan/model_spec.hpp"
#include "core/temp_dir.hpp"
#include "models/zoo.hpp"

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

// Why GPU `device` cannot run cells with the default runtime and provider, or nothing.
std::optional<std::string> default_gpu_problem(int device) {
    try {
        return GpuProviderSetup::problem(OrtRuntime::open(""), GpuProvider::cuda, device);
    } catch (const EnvironmentError& e) {
        return e.what();
    }
}

// Why a generative cell cannot run, or nothing: decoders run as written (fp32, or fp16 on a GPU).
std::optional<std::string> generation_reason(const BenchmarkSpec& spec, const OnnxRuntimeOptions& options) {
    if (spec.precision != Precision::fp32 && spec.precision != Precision::fp16)
        return fmt::format("onnxruntime runs ONNX decoders at fp32 or fp16, not {} (llamacpp runs int8 and int4 "
                           "decoders)",
                           to_string(spec.precision));
    if (spec.precision == Precision::fp16 && spec.device.kind == DeviceKind::cpu)
        return std::string("fp16 on the CPU: ONNX Runtime's CPU execution provider has no float16 kernel for Gemm, "
                           "a decoder's matrix products (it would run them in float32 between Casts it inserts); fp16 "
                           "decoders need a GPU execution provider");
    if (options.gpu.enable_cuda_graph)
        return std::string("onnxruntime: enable_cuda_graph cannot capture a generation, whose shapes change every step");
    if (spec.device.kind == DeviceKind::cuda && options.gpu.provider == GpuProvider::tensorrt)
        return std::string("onnxruntime's TensorRT provider builds an engine per input shape, and a generation's "
                           "shapes change every step; generative cells run on provider cuda");
    return std::nullopt;
}

std::string precision_reason(Precision precision) {
    return fmt::format(
        "onnxruntime converts models to fp16 and int8 (QDQ) only; {} needs a {} model file, which the CPU and CUDA "
        "execution providers do not make",
        to_string(precision), to_string(precision));
}

// The session's options; on a GPU the execution provider is appended, computing on `stream` (its
// user_compute_stream), and `device_memory` says where its device tensors live.
Ort::SessionOptions make_session_options(const OnnxRuntimeOptions& options, const Device& device,
                                         const OrtRuntime& runtime, const std::string& stream,
                                         const OrtMemoryInfo** device_memory) {
    Ort::SessionOptions session_options;
    session_options.SetIntraOpNumThreads(options.intra_op_threads);
    session_options.SetInterOpNumThreads(options.inter_op_threads);
    session_options.SetGraphOptimizationLevel(options.graph_optimization);
    session_options.SetExecutionMode(options.execution_mode);
    if (device.kind == DeviceKind::cuda) {
        ProviderOptions provider = gpu_provider_options(options.gpu);
        provider["has_user_compute_stream"] = "1";
        provider["user_compute_stream"] = stream;
        *device_memory = GpuProviderSetup::append(session_options, runtime, options.gpu.provider, device.index, provider);
    }
    return session_options;
}

constexpr std::string_view kCpuProvider = "CPUExecutionProvider";

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

std::size_t given_bytes(const HostTensor& tensor) { return tensor.data.size(); }
std::size_t given_bytes(const DeviceTensor& tensor) { return tensor.info.byte_size(); }

// The given tensor (in host or GPU memory) for input `wanted`, checked for its type and size.
template <typename Tensor>
const Tensor& find_input(std::span<const Tensor> given, const TensorInfo& wanted) {
    const auto found = std::find_if(given.begin(), given.end(),
                                    [&](const Tensor& t) { return t.info.name == wanted.name; });
    if (found == given.end())
        throw std::runtime_error(fmt::format("prepare(): no data for input {}", wanted.name));
    if (found->info.dtype != wanted.dtype || given_bytes(*found) != wanted.byte_size())
        throw std::runtime_error(fmt::format(
            "prepare(): input {} needs {} bytes of {}, got {} bytes of {}", wanted.name, wanted.byte_size(),
            to_string(wanted.dtype), given_bytes(*found), to_string(found->info.dtype)));
    return *found;
}

// The ONNX file a cell runs, where it is known before the run: the file named, or a zoo model's export (the
// cached one the run uses); nothing for a PyTorch model spec, which the run exports.
std::optional<std::filesystem::path> onnx_file_before_run(const BenchmarkSpec& spec) {
    if (is_model_spec(spec.model)) return std::nullopt;
    if (models::find_zoo_model(spec.model)) return models::export_onnx(spec.model, spec.model_cache_dir, spec.seed);
    std::error_code ec;
    if (std::filesystem::is_regular_file(spec.model, ec)) return std::filesystem::path(spec.model);
    return std::nullopt;
}

}  // namespace

OnnxRuntimeBackend::OnnxRuntimeBackend() : runtime_(&OrtRuntime::open("")) { runtime_->use(); }

OnnxRuntimeBackend::~OnnxRuntimeBackend() { reset(); }

std::string OnnxRuntimeBackend::version() const { return runtime_->description(); }

Capabilities OnnxRuntimeBackend::capabilities() const {
    Capabilities caps;
    caps.devices = {DeviceKind::cpu};
    const bool gpu = !default_gpu_problem(0);
    if (gpu) caps.devices.push_back(DeviceKind::cuda);
    caps.precisions = {Precision::fp32, Precision::fp16, Precision::int8};  // fp16, int8: converted models
    caps.model_formats = {"onnx"};
    caps.dynamic_batch = true;
    caps.cuda_graphs = gpu;
    caps.device_timing = gpu;
    caps.concurrent_instances = true;  // each instance loads the model anew, on its own CUDA stream on a GPU
    caps.generates = true;             // ONNX decoders with past_key_values inputs (ort_generation)
    caps.stages_inputs = true;         // a copy into the bound buffers (pinned ones on a GPU)
    return caps;
}

std::vector<BackendOption> OnnxRuntimeBackend::options() const { return onnxruntime_option_list(); }

std::optional<std::string> OnnxRuntimeBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    const OnnxRuntimeOptions options = parse_onnxruntime_options(spec.backend_options);
    const std::string where = fmt::format("onnxruntime on {}", to_string(spec.device));
    const OrtRuntime* runtime = nullptr;
    try {
        runtime = &OrtRuntime::open(options.runtime);
    } catch (const EnvironmentError& e) {
        return fmt::format("{}: {}", where, e.what());
    }
    if (spec.device.kind == DeviceKind::cuda) {
        if (auto problem = GpuProviderSetup::problem(*runtime, options.gpu.provider, spec.device.index))
            return fmt::format("{}: {}", where, *problem);
    } else if (const auto given = gpu_options_given(options); !given.empty()) {
        return fmt::format("{}: the option(s) {} apply to cuda devices only", where, fmt::join(given, ", "));
    }
    if (spec.generation.active()) {
        if (auto reason = generation_reason(spec, options)) return reason;
        if (spec.device.kind == DeviceKind::cuda) return std::nullopt;  // answered above
        return Backend::unsupported_reason(spec);
    }
    if (spec.precision == Precision::bf16 || spec.precision == Precision::fp8) return precision_reason(spec.precision);
    if (spec.device.kind == DeviceKind::cuda) return std::nullopt;  // answered above, whatever capabilities() say
    if (auto reason = Backend::unsupported_reason(spec)) return reason;
    if (spec.precision != Precision::fp16) return std::nullopt;
    try {
        const auto model = onnx_file_before_run(spec);
        if (!model) return std::nullopt;  // a PyTorch model spec: judged once the run has exported it
        return fp16_cpu_skip_reason(model->string(), options);
    } catch (const std::exception&) {
        return std::nullopt;  // a model that cannot be made or converted fails in the run, with that error
    }
}

ConvertedModel OnnxRuntimeBackend::convert_model(const std::string& model_path, const BenchmarkSpec& spec) {
    const OnnxRuntimeOptions options = parse_onnxruntime_options(spec.backend_options);
    if (spec.generation.active()) return {model_path, {}, {}};  // a decoder is written at the cell's precision
    // Calibration runs the float32 model on the runtime the cell names: its API table first.
    OrtRuntime::open(options.runtime).use();
    return convert_for_onnxruntime(model_path, spec, options);
}

void OnnxRuntimeBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    const OnnxRuntimeOptions options = parse_onnxruntime_options(spec.backend_options);
    std::error_code ec;
    if (!std::filesystem::exists(model_path, ec))
        throw std::runtime_error(fmt::format("cannot load ONNX model {}: no such file", model_path));
    reset();
    runtime_ = &OrtRuntime::open(options.runtime);
    runtime_->use();
    if (spec.device.kind == DeviceKind::cuda) {
        if (auto problem = GpuProviderSetup::problem(*runtime_, options.gpu.provider, spec.device.index))
            throw EnvironmentError(fmt::format("onnxruntime on {}: {}", to_string(spec.device), *problem));
        cuda_ = std::make_unique<OrtCudaExecution>(spec.device.index, options.gpu.device_resident);
    }
    try {
        const Ort::SessionOptions session_options =
            make_session_options(options, spec.device, *runtime_, cuda_ ? cuda_->stream_option() : "", &device_memory_);
        session_ = Ort::Session(runtime_->env(), model_path.c_str(), session_options);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(load_error(model_path, e));
    }
    model_path_ = model_path;
    options_ = options;
    device_ = spec.device;
    if (spec.generation.active()) {
        load_decoder(spec);
        return;
    }
    read_model_io(spec.batch_size);
}

void OnnxRuntimeBackend::load_decoder(const BenchmarkSpec& spec) {
    try {
        generation_ = std::make_unique<OrtGeneration>(session_, model_path_, device_memory_,
                                                      cuda_ ? &cuda_->stream() : nullptr);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("cannot read the inputs of ONNX decoder {}: {}", model_path_, e.what()));
    }
    const DType wanted = spec.precision == Precision::fp16 ? DType::f16 : DType::f32;
    if (generation_->info().kv_dtype != wanted)
        throw UserError(fmt::format("{}: the decoder's KV cache is {}, a {} cell needs a {} decoder file", model_path_,
                                    to_string(generation_->info().kv_dtype), to_string(spec.precision),
                                    to_string(wanted)));
}

DecoderInfo OnnxRuntimeBackend::decoder_info() const {
    if (!generation_) throw std::logic_error("OnnxRuntimeBackend::decoder_info() without a decoder loaded");
    return generation_->info();
}

void OnnxRuntimeBackend::prepare_generation(const GenerationRequest& request) {
    if (!generation_) throw std::logic_error("OnnxRuntimeBackend::prepare_generation() without a decoder loaded");
    runtime_->use();
    generation_->prepare(request);
}

void OnnxRuntimeBackend::generate(TokenSink& sink) {
    if (!generation_) throw std::logic_error("OnnxRuntimeBackend::generate() without a decoder loaded");
    runtime_->use();
    generation_->generate(sink);
}

void OnnxRuntimeBackend::read_model_io(std::int64_t batch_size) {
    runtime_->use();
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
    runtime_->use();
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
        if (cuda_) cuda_->prepare(session_, device_memory_, inputs_, input_buffers_, output_names_);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("cannot bind the inputs of ONNX model {}: {}", model_path_, e.what()));
    }
}

// The buffers prepare() bound stay bound: the new bytes are copied over them (on a GPU into the pinned buffers the
// next infer() copies to the device, timed there as H2D).
void OnnxRuntimeBackend::stage_inputs(std::span<const HostTensor> inputs) {
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::stage_inputs() before prepare()");
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const HostTensor& given = find_input(inputs, inputs_[i]);
        if (cuda_) cuda_->stage_input(i, given.data);
        else std::memcpy(input_buffers_[i].data(), given.data.data(), given.data.size());
    }
}

bool OnnxRuntimeBackend::stage_device_inputs(std::span<const DeviceTensor> inputs) {
    if (!cuda_) return false;
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::stage_device_inputs() before prepare()");
    std::vector<const DeviceTensor*> ordered;
    for (const TensorInfo& info : inputs_) {
        const DeviceTensor& given = find_input(inputs, info);
        if (given.device != cuda_->device()) return false;  // another GPU's memory: the caller goes through the host
        ordered.push_back(&given);
    }
    runtime_->use();
    for (std::size_t i = 0; i < ordered.size(); ++i)
        cuda_->stage_device_input(i, ordered[i]->data, ordered[i]->info.byte_size());
    return true;
}

std::vector<DeviceTensor> OnnxRuntimeBackend::last_device_outputs() const {
    if (!cuda_) return {};
    std::vector<DeviceTensor> out;
    for (const auto& o : cuda_->device_outputs()) {
        const auto dtype = from_onnx(o.type);
        if (!dtype) return {};  // a type inferbench has no DType for: the caller reads last_outputs()
        out.push_back({TensorInfo{o.name, *dtype, o.shape}, o.data, cuda_->device()});
    }
    return out;
}

void OnnxRuntimeBackend::infer(DeviceTimes& times) {
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::infer() before prepare()");
    runtime_->use();
    try {
        if (cuda_)
            cuda_->run(session_, times);
        else
            session_.Run(run_options_, binding_);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("ONNX Runtime failed to run model {}: {}", model_path_, e.what()));
    }
}

std::vector<LayerTime> OnnxRuntimeBackend::profile_layers(const std::atomic<std::int32_t>& stop) {
    profile_metrics_.clear();
    // On a GPU one profiled run at least: its events say which provider ran each node (the placement).
    const std::int64_t runs = cuda_ ? std::max<std::int64_t>(options_.layer_profile, 1) : options_.layer_profile;
    if (runs == 0) return {};
    if (!binding_) throw std::logic_error("OnnxRuntimeBackend::profile_layers() before prepare()");
    runtime_->use();
    // ONNX Runtime names the file itself (prefix + date) and writes it at the latest when the session
    // goes: a private folder, declared first so that it is removed last, takes it whatever happens.
    const TempDir folder("onnxruntime-profile");
    ProfiledRuns profiled;
    try {
        profiled = cuda_ ? profile_on_gpu(folder.path(), runs, stop) : profile_on_cpu(folder.path(), runs, stop);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(
            fmt::format("ONNX Runtime failed to profile model {} (layer_profile): {}", model_path_, e.what()));
    }
    if (profiled.stopped) return {};
    const std::string text = ort_profile::read_profile(profiled.file);
    const std::vector<std::int64_t> run_ns = ort_profile::run_times(text, profiled.file);
    // The runs before the profiled ones (the preparing runs, a warm-up) are left out.
    const std::size_t kept = std::min(run_ns.size(), static_cast<std::size_t>(runs));
    std::vector<LayerTime> layers =
        ort_profile::node_times(text, profiled.file, static_cast<int>(run_ns.size() - kept));
    if (cuda_) {
        for (LayerTime& layer : layers) layer.host_dispatch = layer.provider != kCpuProvider;
        profile_metrics_ = ort_profile::compare_with_events(std::span(run_ns).last(kept), profiled.event_ns);
    }
    return layers;
}

OnnxRuntimeBackend::ProfiledRuns OnnxRuntimeBackend::profile_on_cpu(const std::filesystem::path& folder,
                                                                    std::int64_t runs,
                                                                    const std::atomic<std::int32_t>& stop) {
    const OrtMemoryInfo* device_memory = nullptr;
    Ort::SessionOptions session_options = make_session_options(options_, device_, *runtime_, "", &device_memory);
    session_options.EnableProfiling((folder / "profile").c_str());
    Ort::Session session(runtime_->env(), model_path_.c_str(), session_options);
    Ort::IoBinding binding(session);
    for (std::size_t i = 0; i < inputs_.size(); ++i) binding.BindInput(inputs_[i].name.c_str(), input_values_[i]);
    const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    for (const std::string& name : output_names_) binding.BindOutput(name.c_str(), cpu);
    const Ort::RunOptions run_options;
    // One warm-up run (allocations, thread start-up), left out of the times.
    for (std::int64_t i = 0; i <= runs; ++i) {
        if (stop.load(std::memory_order_relaxed) != 0) return {{}, {}, true};
        session.Run(run_options, binding);
    }
    Ort::AllocatorWithDefaultOptions allocator;
    return {session.EndProfilingAllocated(allocator).get(), {}, false};
}

// The profiled session computes on a stream of its own with the inputs on the GPU, CUDA events around each
// Run, and each Run synchronising before it returns (ONNX Runtime's default), so that the profiler's time of
// a run spans its GPU work and can be set beside the events. No CUDA graph: it would hide the nodes.
OnnxRuntimeBackend::ProfiledRuns OnnxRuntimeBackend::profile_on_gpu(const std::filesystem::path& folder,
                                                                    std::int64_t runs,
                                                                    const std::atomic<std::int32_t>& stop) {
    OnnxRuntimeOptions profiled = options_;
    profiled.gpu.enable_cuda_graph = false;
    OrtCudaExecution gpu(device_.index, /*device_resident=*/true);  // outlives the session, as its stream must
    const OrtMemoryInfo* device_memory = nullptr;
    Ort::SessionOptions session_options =
        make_session_options(profiled, device_, *runtime_, gpu.stream_option(), &device_memory);
    session_options.EnableProfiling((folder / "profile").c_str());
    Ort::Session session(runtime_->env(), model_path_.c_str(), session_options);
    ProfiledRuns result;
    try {
        gpu.prepare(session, device_memory, inputs_, input_buffers_, output_names_);
        gpu.synchronize_runs();
        for (std::int64_t i = 0; i < runs && !result.stopped; ++i) {
            result.stopped = stop.load(std::memory_order_relaxed) != 0;
            if (result.stopped) break;
            DeviceTimes times;
            gpu.run(session, times);
            result.event_ns.push_back(times.compute_ns);
        }
    } catch (...) {
        gpu.unbind();  // the binding refers to the session, which goes first
        throw;
    }
    gpu.unbind();
    Ort::AllocatorWithDefaultOptions allocator;
    result.file = session.EndProfilingAllocated(allocator).get();
    return result;
}

std::vector<Ort::Value> OnnxRuntimeBackend::outputs() const {
    if (!binding_) return {};
    runtime_->use();
    if (cuda_) return cuda_->host_outputs();
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
    runtime_->use();
    if (cuda_) cuda_->unbind();  // the binding refers to the session
    binding_ = Ort::IoBinding(nullptr);
    generation_.reset();  // it refers to the session
    input_values_.clear();
    input_buffers_.clear();
    output_names_.clear();
    inputs_.clear();
    session_ = Ort::Session(nullptr);
    cuda_.reset();  // ONNX Runtime computed on its stream until the session went
    device_memory_ = nullptr;
    model_path_.clear();
}

std::unique_ptr<Backend> make_onnxruntime_backend() { return std::make_unique<OnnxRuntimeBackend>(); }

}  // namespace inferbench
