#include "backends/onnxruntime/ort_model_conversion.hpp"

#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/onnxruntime/ort_calibration_inputs.hpp"
#include "backends/onnxruntime/ort_cpu_int8.hpp"
#include "backends/onnxruntime/ort_runtime.hpp"
#include "backends/output_agreement.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/temp_dir.hpp"
#include "models/converted_model_cache.hpp"
#include "models/onnx_fp16.hpp"
#include "models/onnx_qdq.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
namespace quant = models::quant;
using ParamsMap = std::map<std::string, quant::QuantParams, std::less<>>;

Ort::SessionOptions session_options(const OnnxRuntimeOptions& options) {
    Ort::SessionOptions s;
    s.SetIntraOpNumThreads(options.intra_op_threads);
    s.SetInterOpNumThreads(options.inter_op_threads);
    s.SetGraphOptimizationLevel(options.graph_optimization);
    return s;
}

ONNXTensorElementDataType element_type(DType dtype) {
    switch (dtype) {
        case DType::f32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
        case DType::f16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
        case DType::bf16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
        case DType::f64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
        case DType::i8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
        case DType::u8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
        case DType::i32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
        case DType::i64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
        case DType::boolean: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    }
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

std::span<const float> floats(const Ort::Value& value) {
    const auto info = value.GetTensorTypeAndShapeInfo();
    if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return {};
    return {value.GetTensorData<float>(), info.GetElementCount()};
}

std::span<const float> floats(const HostTensor& t) {
    if (t.info.dtype != DType::f32) return {};
    return {reinterpret_cast<const float*>(t.data.data()), t.data.size() / sizeof(float)};
}

// Runs one session on calibration batches, returning the named outputs.
class Runner {
public:
    Runner(Ort::Session session) : session_(std::move(session)) {}

    std::vector<Ort::Value> run(std::vector<HostTensor>& batch, const std::vector<std::string>& outputs) {
        const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
        std::vector<Ort::Value> feeds;
        std::vector<const char*> input_names;
        for (HostTensor& t : batch) {
            feeds.push_back(Ort::Value::CreateTensor(cpu, t.data.data(), t.data.size(), t.info.shape.data(),
                                                     t.info.shape.size(), element_type(t.info.dtype)));
            input_names.push_back(t.info.name.c_str());
        }
        std::vector<const char*> output_names;
        for (const auto& name : outputs) output_names.push_back(name.c_str());
        return session_.Run(Ort::RunOptions{nullptr}, input_names.data(), feeds.data(), feeds.size(),
                            output_names.data(), output_names.size());
    }

private:
    Ort::Session session_;
};

// The activation parameters of `model` on `batches` (models/quant_calibration: one pass for min/max, a second
// for the histograms of the percentile and entropy methods).
ParamsMap calibrate(Ort::Env& env, const fs::path& model, CalibrationBatches& batches, const OnnxRuntimeOptions& options) {
    const models::onnx::OnnxModel plain = models::onnx::read_onnx_file(model);
    const std::vector<std::string> names = models::onnx::qdq_activations(plain);
    std::vector<std::string> outputs;
    for (const auto& name : names)
        if (std::none_of(batches.front().begin(), batches.front().end(),
                         [&](const HostTensor& t) { return t.info.name == name; }))
            outputs.push_back(name);
    const std::string augmented = models::onnx::with_extra_outputs(model, outputs);
    Runner runner(Ort::Session(env, augmented.data(), augmented.size(), session_options(options)));

    const auto each_tensor = [&](const quant::TensorVisit& visit) {
        for (auto& batch : batches) {
            for (const HostTensor& t : batch) visit(t.info.name, floats(t));
            if (outputs.empty()) continue;  // only graph inputs to calibrate
            const std::vector<Ort::Value> values = runner.run(batch, outputs);
            for (std::size_t i = 0; i < outputs.size(); ++i) visit(outputs[i], floats(values[i]));
        }
    };
    const OrtPrecisionOptions& precision = options.precision;
    return quant::calibrate_activations(
        names, {precision.calibration_method, precision.calibration_percentile, precision.activation_type}, each_tensor);
}

// The int8 model's outputs against the float32 model's on the calibration batches.
std::vector<BackendMetric> agreement(Ort::Env& env, const fs::path& model, const std::string& quantized,
                                     CalibrationBatches& batches, const OnnxRuntimeOptions& options) {
    const auto signature = models::onnx::read_onnx_signature(model);
    std::vector<std::string> outputs;
    for (const auto& o : signature.outputs)
        if (o.elem_type == models::onnx::DataType::float32) outputs.push_back(o.name);
    if (outputs.empty()) return {};
    Runner reference(Ort::Session(env, model.c_str(), session_options(options)));
    Runner checked(Ort::Session(env, quantized.data(), quantized.size(), session_options(options)));
    std::vector<CosineSimilarity> cosine(outputs.size());
    std::int64_t rows = 0;
    std::int64_t matches = 0;
    for (auto& batch : batches) {
        const std::vector<Ort::Value> a = checked.run(batch, outputs);
        const std::vector<Ort::Value> b = reference.run(batch, outputs);
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            cosine[i].add(floats(a[i]), floats(b[i]));
            const std::vector<std::int64_t> shape = b[i].GetTensorTypeAndShapeInfo().GetShape();
            if (shape.size() == 2 && shape[1] > 1) {
                rows += shape[0];
                matches += top1_matches(floats(a[i]), floats(b[i]), shape[1]);
            }
        }
    }
    double least = 1.0;
    for (const auto& c : cosine) least = std::min(least, c.value());
    std::vector<BackendMetric> metrics{{std::string(kInt8CosineMetric), least, "ratio"}};
    if (rows > 0)
        metrics.push_back({std::string(kInt8Top1Metric), static_cast<double>(matches) / static_cast<double>(rows), "ratio"});
    return metrics;
}

std::string figures_text(const std::vector<BackendMetric>& metrics) {
    std::string text;
    for (const auto& m : metrics) text += fmt::format("{} {:.17g} {}\n", m.name, m.value, m.unit);
    return text;
}

std::vector<BackendMetric> parse_figures(const std::string& text) {
    std::vector<BackendMetric> metrics;
    std::istringstream in(text);
    BackendMetric m;
    while (in >> m.name >> m.value >> m.unit) metrics.push_back(m);
    return metrics;
}

models::ConvertedModelKey key_for(const fs::path& model, std::string conversion, std::string settings) {
    std::error_code ec;
    return {models::source_model_hash(model), static_cast<std::uint64_t>(fs::file_size(model, ec)),
            std::move(conversion), std::move(settings)};
}

// The metrics measured when the file was made (kept beside it), then the weight range's, decided per run: the
// same file may have been chosen by the option one time and by the CPU another.
std::vector<BackendMetric> int8_metrics(std::vector<BackendMetric> measured, const Int8WeightRange& weights) {
    for (auto& m : int8_weight_range_metrics(weights)) measured.push_back(std::move(m));
    return measured;
}

ConvertedModel convert_int8(const fs::path& model, const BenchmarkSpec& spec, const OnnxRuntimeOptions& options) {
    CalibrationInputs inputs = calibration_inputs(model, spec.seed, options.precision);
    const Int8WeightRange weights = int8_weight_range_for(options.precision, spec.device.kind, host_cpu_int8_dot());
    const auto key = key_for(model, "int8",
                             fmt::format("{} calibration=[{}] onnxruntime={}",
                                         int8_settings_text(options.precision, spec.device.kind, weights.range),
                                         inputs.identity, OrtRuntime::open(options.runtime).version()));
    const auto paths = models::converted_model_paths(models::converted_model_dir(spec.model_cache_dir), model, key);
    if (const auto figures = models::cached_model_figures(paths, key))
        return {paths.model.string(), int8_metrics(parse_figures(*figures), weights), {}};
    Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "inferbench-calibration");
    const ParamsMap activations = calibrate(env, model, inputs.batches, options);
    const std::string quantized =
        models::onnx::quantize_to_qdq(model, activations,
                                      {options.precision.per_channel, options.precision.activation_type,
                                       quantize_bias_for(options.precision, spec.device.kind), weights.range});
    const std::vector<BackendMetric> metrics = agreement(env, model, quantized, inputs.batches, options);
    models::write_cached_model(paths, key, quantized, figures_text(metrics));
    return {paths.model.string(), int8_metrics(metrics, weights), {}};
}

// The op types ONNX Runtime's CPU provider runs in float32 for want of float16 kernels: it puts Casts (named
// InsertedPrecisionFreeCast_...) around them, seen in the graph it optimises the model into.
std::set<std::string> cpu_float32_fallback(const fs::path& model, const OnnxRuntimeOptions& options) {
    const TempDir folder("onnxruntime-fp16-check");
    const fs::path optimized = folder.path() / "optimized.onnx";
    {
        Ort::Env env(ORT_LOGGING_LEVEL_FATAL, "inferbench-fp16-check");
        Ort::SessionOptions s = session_options(options);
        s.SetGraphOptimizationLevel(ORT_ENABLE_BASIC);
        s.SetOptimizedModelFilePath(optimized.c_str());
        const Ort::Session session(env, model.c_str(), s);
    }
    const auto graph = models::onnx::read_onnx_file(optimized).graph;
    std::set<std::string> inserted;
    for (const auto& node : graph.nodes)
        if (node.op_type == "Cast" && node.name.starts_with("InsertedPrecisionFreeCast_"))
            inserted.insert(node.outputs.begin(), node.outputs.end());
    std::set<std::string> ops;
    for (const auto& node : graph.nodes)
        if (node.op_type != "Cast" &&
            std::any_of(node.inputs.begin(), node.inputs.end(), [&](const std::string& in) { return inserted.contains(in); }))
            ops.insert(node.op_type);
    return ops;
}

std::string float16_model(const fs::path& model, const OnnxRuntimeOptions& options) {
    models::onnx::Fp16Options fp16;
    fp16.keep_io_types = options.precision.keep_io_types;
    return models::onnx::convert_to_fp16(model, fp16);
}

// Why the CPU provider cannot run `fp16_model`, the float16 model of `model`; "" where it has every kernel.
std::string cpu_fp16_skip_reason(const fs::path& fp16_model, const fs::path& model, const OnnxRuntimeOptions& options) {
    const std::set<std::string> fallback = cpu_float32_fallback(fp16_model, options);
    if (fallback.empty()) return "";
    return fmt::format(
        "fp16 on the CPU: ONNX Runtime {}'s CPU execution provider has no float16 kernel for {} of the float16 "
        "model of {} (it would run them in float32 between Casts it inserts); fp16 needs a GPU execution provider",
        OrtRuntime::open(options.runtime).version(), fmt::join(fallback, ", "), model.filename().string());
}

ConvertedModel convert_fp16(const fs::path& model, const BenchmarkSpec& spec, const OnnxRuntimeOptions& options) {
    const auto key = key_for(model, "fp16", fp16_settings_text(options.precision));
    const auto paths = models::converted_model_paths(models::converted_model_dir(spec.model_cache_dir), model, key);
    if (!models::cached_model_figures(paths, key))
        models::write_cached_model(paths, key, float16_model(model, options), "");
    ConvertedModel converted{paths.model.string(), {}, {}};
    // A model file known before the run is judged before it starts (fp16_cpu_skip_reason); a PyTorch model
    // spec's export only here.
    if (spec.device.kind == DeviceKind::cpu) converted.skip_reason = cpu_fp16_skip_reason(paths.model, model, options);
    return converted;
}

}  // namespace

std::optional<std::string> fp16_cpu_skip_reason(const std::string& model_path, const OnnxRuntimeOptions& options) {
    // The parent process asks once per cell and repeat: the answer is kept for the model file and settings.
    static std::mutex mutex;
    static std::map<std::string, std::string> answers;
    const std::string key = fmt::format("{}\n{}\n{}\n{}", model_path, options.runtime,
                                        fp16_settings_text(options.precision), static_cast<int>(options.graph_optimization));
    const std::lock_guard lock(mutex);
    auto found = answers.find(key);
    if (found == answers.end()) {
        OrtRuntime::open(options.runtime).use();
        const TempDir folder("onnxruntime-fp16-model");
        const fs::path fp16_model = folder.path() / "fp16.onnx";
        write_file_atomically(fp16_model, float16_model(model_path, options));
        found = answers.emplace(key, cpu_fp16_skip_reason(fp16_model, model_path, options)).first;
    }
    if (found->second.empty()) return std::nullopt;
    return found->second;
}

ConvertedModel convert_for_onnxruntime(const std::string& model_path, const BenchmarkSpec& spec,
                                       const OnnxRuntimeOptions& options) {
    try {
        if (spec.precision == Precision::fp16) return convert_fp16(model_path, spec, options);
        if (spec.precision == Precision::int8) return convert_int8(model_path, spec, options);
    } catch (const Ort::Exception& e) {
        throw std::runtime_error(fmt::format("cannot make the {} model of {}: ONNX Runtime: {}", to_string(spec.precision),
                                             model_path, e.what()));
    }
    return {model_path, {}, {}};
}

}  // namespace inferbench
