#include "backends/tensorrt/tensorrt_typed_onnx.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "backends/onnx_dtype.hpp"
#include "backends/tensorrt/tensorrt_calibration_data.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/temp_dir.hpp"
#include "models/converted_model_cache.hpp"
#include "models/onnx_fp16.hpp"
#include "models/onnx_qdq.hpp"
#include "models/onnx_reader.hpp"
#include "models/onnx_value_types.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
namespace onnx = models::onnx;
namespace quant = models::quant;
using onnx::DataType;

// Min/max ranges, as the onnxruntime backend's int8 default. TensorRT 10's implicit int8 uses entropy calibration,
// but on the few batches a cell calibrates on (4 seeded ones, or a user's folder) the entropy threshold clips far
// more than the data supports: on the tests' small CNN the entropy file's largest output error was 40% of the
// output's range, the min/max file's under 5% (tests/backends/onnxruntime/tensorrt_typed_onnx_ort_test.cpp).
constexpr quant::CalibrationMethod kCalibrationMethod = quant::CalibrationMethod::minmax;

// The precision a user's file is already typed in, and what shows it; nothing for a float32 file.
struct TypedAs {
    Precision precision;
    std::string evidence;
};

std::optional<TypedAs> typed_as(const onnx::ModelPrecisionTypes& t) {
    if (t.quantizes_to(DataType::float8e4m3fn) || t.quantizes_to(DataType::float8e5m2))
        return TypedAs{Precision::fp8, "FP8 QuantizeLinear/DequantizeLinear nodes"};
    if (t.quantizes_to(DataType::int4) || t.quantizes_to(DataType::uint4))
        return TypedAs{Precision::int4, "int4 QuantizeLinear/DequantizeLinear nodes"};
    if (t.quantizes_to(DataType::int8) || t.quantizes_to(DataType::uint8))
        return TypedAs{Precision::int8, "int8 QuantizeLinear/DequantizeLinear nodes"};
    if (t.has_float(DataType::bfloat16)) return TypedAs{Precision::bf16, "bfloat16 tensors"};
    if (t.has_float(DataType::float16)) return TypedAs{Precision::fp16, "float16 tensors"};
    return std::nullopt;
}

std::string mismatch_line(const fs::path& model, const TypedAs& typed, Precision wanted) {
    return fmt::format(
        "{} is already typed {} (it has {}), but the plan asks for precision {}: TensorRT 11 builds a "
        "file in the types it declares; set precision: {} for this model, or give its float32 model "
        "and let inferbench convert it",
        model.string(), to_string(typed.precision), typed.evidence, to_string(wanted), to_string(typed.precision));
}

bool quantized(Precision p) { return p == Precision::int8 || p == Precision::fp8; }

std::optional<std::string> conversion_problem(const TypedOnnxRequest& r, const onnx::OnnxModel& model,
                                              bool have_reference) {
    if (r.precision == Precision::int4)
        return fmt::format(
            "tensorrt int4 on TensorRT 11 needs an int4 Q/DQ file, which inferbench does not make: give "
            "{} already quantized to int4 (its weights behind int4 DequantizeLinear nodes)",
            r.model.string());
    if (quantized(r.precision) && !have_reference)
        return fmt::format(
            "{} on TensorRT 11 needs a Q/DQ file calibrated on a float32 run of the model, and this "
            "backend has no float32 run to calibrate with: give {} already quantized (Q/DQ nodes)",
            to_string(r.precision), r.model.string());
    if (r.precision == Precision::fp8 && model.opset_version() < onnx::kFloat8QdqOpset)
        return fmt::format(
            "fp8 on TensorRT 11 needs FP8 QuantizeLinear nodes, which ONNX has from opset {}; {} is "
            "opset {}: export it at opset {} or newer",
            onnx::kFloat8QdqOpset, r.model.string(), model.opset_version(), onnx::kFloat8QdqOpset);
    return std::nullopt;
}

models::ConvertedModelKey key_for(const fs::path& model, std::string conversion, std::string settings) {
    std::error_code ec;
    return {models::source_model_hash(model), static_cast<std::uint64_t>(fs::file_size(model, ec)),
            std::move(conversion), std::move(settings)};
}

// The cached file of `key`, made by `make` when it is not there yet.
template <typename Make>
fs::path cached(const TypedOnnxRequest& r, const models::ConvertedModelKey& key, Make&& make) {
    const auto paths = models::converted_model_paths(models::converted_model_dir(r.model_cache_dir), r.model, key);
    if (!models::cached_model_figures(paths, key)) models::write_cached_model(paths, key, make(), "");
    return paths.model;
}

TypedOnnx float_file(const TypedOnnxRequest& r) {
    const bool bf16 = r.precision == Precision::bf16;
    onnx::Fp16Options options;
    options.low_type = bf16 ? DataType::bfloat16 : DataType::float16;
    options.keep_io_types = true;  // the harness feeds and reads float32, as a TensorRT 10 fp16 engine takes
    // The settings text of ONNX Runtime's fp16 file with the same options: the two backends share the file.
    const auto key = key_for(r.model, bf16 ? "bf16" : "fp16", "keep_io_types=true");
    const fs::path file = cached(r, key, [&] { return onnx::convert_to_fp16(r.model, options); });
    return {file,
            TypedOnnxOrigin::converted,
            fmt::format("{} file made by inferbench ({} compute, float32 inputs and outputs): {}",
                        to_string(r.precision), bf16 ? "bfloat16" : "float16", file.string()),
            {}};
}

std::vector<TensorInfo> calibration_infos(const TypedOnnxRequest& r) {
    std::vector<TensorInfo> infos;
    for (const auto& in : onnx::read_onnx_signature(r.model).inputs) {
        const auto dtype = dtype_of(in.elem_type);
        if (!dtype)
            throw UserError(fmt::format("input {} of model {} is of {}, which inferbench cannot calibrate with",
                                        in.name, r.model.string(), to_string(in.elem_type)));
        infos.push_back(
            {in.name, *dtype, resolve_batch_shape(declared_shape(in), r.batch_size, r.model.string(), in.name)});
    }
    return infos;
}

std::vector<float> float_values(const HostTensor& t) {
    if (t.info.dtype != DType::f32) return {};
    std::vector<float> values(t.data.size() / sizeof(float));
    std::memcpy(values.data(), t.data.data(), values.size() * sizeof(float));
    return values;
}

// The activation parameters of the Q/DQ file: every batch through the float32 reference, the graph inputs and
// the activations read as extra outputs of the model.
std::map<std::string, quant::QuantParams, std::less<>> calibrate(const TypedOnnxRequest& r, const CalibrationData& data,
                                                                 Fp32Reference& reference, quant::ActivationType type) {
    const std::vector<std::string> names = onnx::qdq_activations(onnx::read_onnx_file(r.model));
    std::vector<std::string> outputs;
    for (const auto& name : names)
        if (std::none_of(data.inputs().begin(), data.inputs().end(),
                         [&](const TensorInfo& in) { return in.name == name; }))
            outputs.push_back(name);
    const TempDir folder("tensorrt-calibration");
    const fs::path augmented = folder.path() / "float32_with_activations.onnx";
    write_file_atomically(augmented, onnx::with_extra_outputs(r.model, outputs));
    const quant::CalibrationPass pass = [&](const quant::TensorVisit& visit) {
        for (std::size_t b = 0; b < data.batch_count(); ++b) {
            const std::vector<HostTensor> batch = data.batch(b);
            for (const HostTensor& t : batch) visit(t.info.name, float_values(t));
            if (outputs.empty()) continue;
            const std::vector<std::vector<float>> values = reference.run(augmented, batch, outputs);
            if (values.size() != outputs.size())
                throw std::runtime_error(
                    fmt::format("the float32 reference returned {} of the {} activations asked for", values.size(),
                                outputs.size()));
            for (std::size_t i = 0; i < outputs.size(); ++i) visit(outputs[i], values[i]);
        }
    };
    return quant::calibrate_activations(names, {kCalibrationMethod, 99.99, type}, pass);
}

TypedOnnx qdq_file(const TypedOnnxRequest& r, Fp32Reference& reference) {
    const bool fp8 = r.precision == Precision::fp8;
    const quant::ActivationType type = fp8 ? quant::ActivationType::float8e4m3 : quant::ActivationType::int8;
    const std::string settings =
        fmt::format("calibration={} per_channel=true bias=float activations={} batch={} data=[{}] reference=[{}]",
                    quant::to_string(kCalibrationMethod), quant::to_string(type), r.batch_size,
                    calibration_identity(r.calibration_dir, r.seed), reference.identity());
    const auto key = key_for(r.model, fp8 ? "fp8-qdq" : "int8-qdq", settings);
    const fs::path file = cached(r, key, [&] {
        std::vector<TensorInfo> infos = calibration_infos(r);
        const CalibrationData data = r.random_calibration()
                                         ? CalibrationData::random(std::move(infos), r.seed)
                                         : CalibrationData::from_dir(std::move(infos), r.calibration_dir);
        // TensorRT quantizes biases itself: they stay float.
        return onnx::quantize_to_qdq(r.model, calibrate(r, data, reference, type),
                                     {.per_channel = true, .activation = type, .quantize_bias = false});
    });
    return {file,
            TypedOnnxOrigin::converted,
            fmt::format("{} Q/DQ file made by inferbench ({} calibration on {}, against {}): {}",
                        to_string(r.precision), quant::to_string(kCalibrationMethod),
                        r.random_calibration() ? "seeded random batches" : r.calibration_dir, reference.identity(),
                        file.string()),
            {}};
}

}  // namespace

std::optional<std::string> typed_onnx_problem(const TypedOnnxRequest& request, bool have_reference) {
    const onnx::OnnxModel model = onnx::read_onnx_file(request.model);
    if (const auto typed = typed_as(onnx::model_precision_types(model))) {
        if (typed->precision != request.precision) return mismatch_line(request.model, *typed, request.precision);
        return std::nullopt;
    }
    if (request.precision == Precision::fp32) return std::nullopt;
    return conversion_problem(request, model, have_reference);
}

std::optional<std::string> typed_onnx_mismatch(const TypedOnnxRequest& request) {
    const auto typed = typed_as(onnx::model_precision_types(onnx::read_onnx_file(request.model)));
    if (!typed || typed->precision == request.precision) return std::nullopt;
    return mismatch_line(request.model, *typed, request.precision);
}

TypedOnnx typed_onnx_for(const TypedOnnxRequest& request, Fp32Reference* reference) {
    if (const auto problem = typed_onnx_problem(request, reference != nullptr)) throw UserError(*problem);
    const auto typed = typed_as(onnx::model_precision_types(onnx::read_onnx_file(request.model)));
    if (typed)
        return {request.model,
                TypedOnnxOrigin::user_typed,
                fmt::format("{} file as given (it has {}): {}", to_string(typed->precision), typed->evidence,
                            request.model.string()),
                {}};
    switch (request.precision) {
        case Precision::fp32:
            return {request.model, TypedOnnxOrigin::as_given, "fp32 file as given: " + request.model.string(), {}};
        case Precision::fp16:
        case Precision::bf16:
            return float_file(request);
        case Precision::int8:
        case Precision::fp8:
            return qdq_file(request, *reference);
        case Precision::int4:
            break;  // typed_onnx_problem refused it
    }
    throw std::logic_error("typed_onnx_for: a precision typed_onnx_problem lets through is not handled");
}

}  // namespace inferbench
