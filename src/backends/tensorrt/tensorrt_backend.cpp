#include "backends/tensorrt/tensorrt_backend.hpp"

#include <NvInfer.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/tensorrt/tensorrt_calibration_data.hpp"
#include "backends/tensorrt/tensorrt_cuda.hpp"
#include "backends/tensorrt/tensorrt_engine_builder.hpp"
#include "backends/tensorrt/tensorrt_engine_cache.hpp"
#include "backends/tensorrt/tensorrt_execution.hpp"
#include "backends/tensorrt/tensorrt_fp32_reference.hpp"
#include "backends/tensorrt/tensorrt_logger.hpp"
#include "backends/tensorrt/tensorrt_options.hpp"
#include "backends/tensorrt/tensorrt_platform.hpp"
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"
#include "backends/tensorrt/tensorrt_version.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/time_units.hpp"

namespace inferbench {
namespace {

TensorRtVersion library_version() { return decode_tensorrt_version(getInferLibVersion()); }

// The module is compiled against one major version's headers: the APIs it calls (precision flags, the
// calibrator) exist in that major only, so a libnvinfer of another major cannot run it.
std::optional<std::string> header_mismatch() {
    const TensorRtVersion library = library_version();
    if (library.major == NV_TENSORRT_MAJOR) return std::nullopt;
    return fmt::format("the tensorrt backend was built against TensorRT {} headers but libnvinfer is TensorRT {}: "
                       "rebuild inferbench against TensorRT {}, or put libnvinfer {}.x first on the library path",
                       NV_TENSORRT_MAJOR, to_string(library), library.major, NV_TENSORRT_MAJOR);
}

PrecisionPlan precision_plan(Precision precision, const GpuInfo& gpu, bool random_calibration) {
    return plan_precision({precision, gpu.name, gpu.compute_capability, library_version(), random_calibration});
}

EngineKey engine_key(const std::string& model, const BenchmarkSpec& spec, const TensorRtOptions& options,
                     const GpuInfo& gpu, const PrecisionPlan& plan) {
    EngineKey key;
    key.model_hash = hash_file(model);
    key.model_size_bytes = std::filesystem::file_size(model);
    key.precision = spec.precision;
    key.batch_size = spec.batch_size;
    key.gpu_name = gpu.name;
    key.compute_capability = gpu.compute_capability;
    key.tensorrt_version = to_string(library_version());
    const std::string calibration =
        plan.needs_calibrator ? calibration_identity(options.calibration_dir, spec.seed) : std::string();
    key.build_settings = build_settings_text(options, plan.flags, calibration);
    return key;
}

class TensorRtBackend final : public Backend {
public:
    std::string name() const override { return "tensorrt"; }
    std::string version() const override { return to_string(library_version()); }
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override { return tensorrt_option_list(); }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;
    ConvertedModel convert_model(const std::string& model_path, const BenchmarkSpec& spec) override;

    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override;
    void prepare(std::span<const HostTensor> inputs) override;
    void infer(DeviceTimes& times) override;

private:
    // Probed once per device, on the first question: the orchestrator asks before any worker runs,
    // and the probe creates no CUDA context.
    const GpuProbe& gpu(int index) const;
    std::optional<std::string> typed_file_problem(const BenchmarkSpec& spec) const;
    // The cell's GPU selected and the runtime made; throws EnvironmentError when either cannot be.
    const GpuInfo& ready(const BenchmarkSpec& spec);
    std::unique_ptr<nvinfer1::ICudaEngine> engine_for(const std::string& model, const BenchmarkSpec& spec,
                                                      const TensorRtOptions& options, const GpuInfo& gpu,
                                                      const PrecisionPlan& plan);
    std::unique_ptr<nvinfer1::ICudaEngine> deserialize(const std::vector<char>& bytes);

    mutable std::mutex probe_mutex_;
    mutable std::map<int, GpuProbe> probes_;
    mutable std::map<std::string, std::optional<std::string>> typed_problems_;  // guarded by probe_mutex_
    TensorRtLogger logger_;
    // Declared in destruction order: executions (engines) go before the runtime, the runtime before the logger.
    std::unique_ptr<nvinfer1::IRuntime> runtime_;
    std::unique_ptr<TensorRtExecution> execution_;
};

const GpuProbe& TensorRtBackend::gpu(int index) const {
    const std::lock_guard lock(probe_mutex_);
    auto found = probes_.find(index);
    if (found == probes_.end()) found = probes_.emplace(index, probe_gpu(index)).first;
    return found->second;
}

Capabilities TensorRtBackend::capabilities() const {
    Capabilities caps;
    caps.devices = {DeviceKind::cuda};
    if (const GpuProbe& probe = gpu(0); probe.gpu) {
        for (Precision p : kAllPrecisions) {
            if (!precision_plan(p, *probe.gpu, true).unsupported) caps.precisions.push_back(p);
        }
    }
    caps.model_formats = {"onnx"};
    caps.dynamic_batch = true;
    caps.cuda_graphs = true;
    caps.device_timing = true;
    caps.concurrent_instances = true;  // an engine and context each, on its own stream
    return caps;
}

std::optional<std::string> TensorRtBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    if (spec.device.kind != DeviceKind::cuda) return "tensorrt runs on NVIDIA GPUs only (device cuda or cuda:N)";
    if (auto mismatch = header_mismatch()) return mismatch;
    const GpuProbe& probe = gpu(spec.device.index);
    if (!probe.gpu) return fmt::format("tensorrt cannot run on {}: {}", to_string(spec.device), probe.problem);
    if (auto unsupported = precision_plan(spec.precision, *probe.gpu, true).unsupported) return unsupported;
    return typed_file_problem(spec);
}

// TensorRT 11, a model file known before the run: what its typed file cannot be (a user-typed file that
// disagrees with the precision, fp8 below opset 19, ...), judged once per file and precision, so that `run
// --dry-run` and the run skip the same cells. A zoo model is exported later and judged in convert_model.
std::optional<std::string> TensorRtBackend::typed_file_problem(const BenchmarkSpec& spec) const {
    if (precision_route(library_version()) != PrecisionRoute::typed_onnx) return std::nullopt;
    std::error_code ec;
    const std::filesystem::path model(spec.model);
    if (model.extension() != ".onnx" || !std::filesystem::is_regular_file(model, ec)) return std::nullopt;
    const std::string key = fmt::format("{}\n{}\n{}", spec.model, to_string(spec.precision), hash_file(model));
    const std::lock_guard lock(probe_mutex_);
    auto found = typed_problems_.find(key);
    if (found == typed_problems_.end()) {
        const TypedOnnxRequest request{model, spec.precision, spec.batch_size, spec.seed, "", spec.model_cache_dir};
        found = typed_problems_.emplace(key, typed_onnx_problem(request, true)).first;
    }
    return found->second;
}

const GpuInfo& TensorRtBackend::ready(const BenchmarkSpec& spec) {
    if (auto mismatch = header_mismatch()) throw EnvironmentError(*mismatch);
    const GpuProbe& probe = gpu(spec.device.index);
    if (!probe.gpu) throw EnvironmentError(fmt::format("tensorrt cannot run on {}: {}", to_string(spec.device), probe.problem));
    check_cuda(cudaSetDevice(probe.gpu->index), fmt::format("selecting {}", to_string(spec.device)));
    if (!runtime_) {
        runtime_.reset(nvinfer1::createInferRuntime(logger_));
        if (!runtime_) throw EnvironmentError("TensorRT cannot create a runtime: " + logger_.take_last_error());
    }
    return *probe.gpu;
}

// TensorRT 10 and older: the model as it is (the builder flags carry the precision). TensorRT 11: the
// precision-typed file (tensorrt_typed_onnx), int8/fp8 calibrated on an fp32 engine of the model on this GPU.
ConvertedModel TensorRtBackend::convert_model(const std::string& model_path, const BenchmarkSpec& spec) {
    if (precision_route(library_version()) == PrecisionRoute::builder_flags) return {model_path, {}, {}, 0};
    const TensorRtOptions options = parse_tensorrt_options(spec.backend_options);
    const TypedOnnxRequest request{model_path, spec.precision, spec.batch_size, spec.seed, options.calibration_dir,
                                   spec.model_cache_dir};
    if (auto mismatch = typed_onnx_mismatch(request)) throw UserError(*mismatch);
    if (auto problem = typed_onnx_problem(request, true)) return {model_path, {}, *problem, 0};
    const GpuInfo& device = ready(spec);
    const std::filesystem::path dir = resolve_cache_dir(options.cache_dir, spec.model_cache_dir);
    const EngineBuildRequest base{model_path, spec.batch_size, PrecisionPlan{}, options,
                                  timing_cache_path(dir, device.name, device.compute_capability, version()), spec.seed};
    TensorRtFp32Reference reference(*runtime_, logger_, base,
                                    fmt::format("TensorRT {} fp32 on {}", version(), device.name));
    const TypedOnnx typed = typed_onnx_for(request, &reference);
    std::fprintf(stderr, "tensorrt: %s\n", typed.description.c_str());
    return {typed.path.string(), typed.metrics, {}, 0};
}

void TensorRtBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    const TensorRtOptions options = parse_tensorrt_options(spec.backend_options);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(model_path, ec))
        throw std::runtime_error(fmt::format("cannot load ONNX model {}: no such file", model_path));
    execution_.reset();
    const GpuInfo& device = ready(spec);
    const PrecisionPlan plan = precision_plan(spec.precision, device, options.calibration_dir.empty());
    if (plan.unsupported) throw std::runtime_error(*plan.unsupported);
    if (plan.caveat) std::fprintf(stderr, "tensorrt: note: %s\n", plan.caveat->c_str());
    auto engine = engine_for(model_path, spec, options, device, plan);
    execution_ = std::make_unique<TensorRtExecution>(std::move(engine), spec.batch_size, options, model_path, logger_);
}

std::unique_ptr<nvinfer1::ICudaEngine> TensorRtBackend::engine_for(const std::string& model, const BenchmarkSpec& spec,
                                                                    const TensorRtOptions& options, const GpuInfo& gpu,
                                                                    const PrecisionPlan& plan) {
    const std::filesystem::path dir = resolve_cache_dir(options.cache_dir, spec.model_cache_dir);
    const EngineKey key = engine_key(model, spec, options, gpu, plan);
    const EngineCachePaths paths = engine_cache_paths(dir, model, key);
    if (const auto cached = read_cached_engine(paths, key)) {
        if (auto engine = deserialize(*cached)) {
            std::fprintf(stderr, "tensorrt: engine from the cache: %s\n", paths.engine.c_str());
            return engine;
        }
        std::fprintf(stderr, "tensorrt: warning: the cached engine %s does not load (%s); rebuilding it\n",
                     paths.engine.c_str(), logger_.take_last_error().c_str());
        remove_cached_engine(paths);
    }
    const auto timing_cache = timing_cache_path(dir, gpu.name, gpu.compute_capability, to_string(library_version()));
    const EngineBuildRequest request{model, spec.batch_size, plan, options, timing_cache, spec.seed};
    const std::int64_t begin = monotonic_ns();
    const std::vector<char> bytes = build_engine(request, logger_);
    const std::string how = plan.route == PrecisionRoute::typed_onnx ? "strongly typed" : to_string(plan.flags);
    std::fprintf(stderr, "tensorrt: built the %s engine (%s) in %.1f s\n", std::string(to_string(spec.precision)).c_str(),
                 how.c_str(), ns_to_s(monotonic_ns() - begin));
    try {
        write_cached_engine(paths, key, bytes);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensorrt: warning: the engine is not cached: %s\n", e.what());
    }
    auto engine = deserialize(bytes);
    if (!engine) throw std::runtime_error("TensorRT cannot load the engine it just built: " + logger_.take_last_error());
    return engine;
}

std::unique_ptr<nvinfer1::ICudaEngine> TensorRtBackend::deserialize(const std::vector<char>& bytes) {
    return std::unique_ptr<nvinfer1::ICudaEngine>(runtime_->deserializeCudaEngine(bytes.data(), bytes.size()));
}

std::vector<TensorInfo> TensorRtBackend::inputs() const {
    if (!execution_) throw std::logic_error("TensorRtBackend::inputs() before load()");
    return execution_->inputs();
}

void TensorRtBackend::prepare(std::span<const HostTensor> inputs) {
    if (!execution_) throw std::logic_error("TensorRtBackend::prepare() before load()");
    execution_->prepare(inputs);
}

void TensorRtBackend::infer(DeviceTimes& times) {
    if (!execution_) throw std::logic_error("TensorRtBackend::infer() before load()");
    execution_->infer(times);
}

}  // namespace

std::unique_ptr<Backend> make_tensorrt_backend() { return std::make_unique<TensorRtBackend>(); }

}  // namespace inferbench
