#include "backends/onnxruntime/ort_precision_options.hpp"

#include <charconv>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "backends/options.hpp"

namespace inferbench {
namespace {

using models::quant::ActivationType;
using models::quant::CalibrationMethod;

constexpr std::pair<std::string_view, CalibrationMethod> kMethods[] = {
    {"minmax", CalibrationMethod::minmax},
    {"percentile", CalibrationMethod::percentile},
    {"entropy", CalibrationMethod::entropy},
};

constexpr std::pair<std::string_view, ActivationType> kActivationTypes[] = {
    {"int8", ActivationType::int8},
    {"uint8", ActivationType::uint8},
};

double read_percentile(const OptionReader& read) {
    const std::string text = read.text("calibration_percentile");
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !(value > 50.0 && value <= 100.0))
        read.reject("calibration_percentile", text, "a percentage above 50 and at most 100, e.g. 99.999");
    return value;
}

}  // namespace

std::vector<BackendOption> ort_precision_option_list() {
    return {
        {"calibration_method", "minmax",
         "int8: how activation ranges are calibrated: minmax|percentile|entropy (KL divergence, as TensorRT)",
         OptionType::choice},
        {"calibration_percentile", "99.999", "int8, calibration_method percentile: the share of |x| kept, in %",
         OptionType::number},
        {"calibration_batches", "4",
         "int8: seeded random calibration batches (the inputs a benchmark feeds), when calibration_data is not set",
         OptionType::count},
        {"calibration_data", "",
         "int8: files to calibrate on, as inputs takes them (an .npz, an .npy, a folder of NAME.npy or NAME_0.npy, ...)",
         OptionType::path},
        {"per_channel", "true", "int8: one weight scale per output channel (false: one per tensor)", OptionType::flag},
        {"activation_type", "int8", "int8: activations int8 (symmetric, as TensorRT runs them) or uint8 (asymmetric)",
         OptionType::choice},
        {"quantize_bias", "auto",
         "int8: biases as int32 behind DequantizeLinear (true) or float32 (false); auto: true on the CPU (fused into "
         "integer kernels), false on a GPU (the CUDA provider has no int32 DequantizeLinear)",
         OptionType::choice},
        {"reduce_range", "auto",
         "int8: weights in [-64, 64] (ONNX Runtime's reduce_range) (true) or [-127, 127] (false); auto: true "
         "on an x86-64 CPU without VNNI (its int8 kernels add u8 x s8 products in int16, which full-range weights "
         "saturate), false with AVX-512 VNNI or AVX-VNNI, on other CPUs and for a GPU",
         OptionType::choice},
        {"keep_io_types", "false", "fp16: keep float32 model inputs and outputs (Casts at the boundary)",
         OptionType::flag},
    };
}

OrtPrecisionOptions read_ort_precision_options(const OptionReader& read) {
    OrtPrecisionOptions parsed;
    parsed.calibration_method = read.choice("calibration_method", kMethods);
    parsed.calibration_percentile = read_percentile(read);
    parsed.calibration_batches = read.count("calibration_batches", kMaxCalibrationBatches);
    if (parsed.calibration_batches == 0) read.reject("calibration_batches", "0", "a whole number 1..1000");
    parsed.calibration_data = read.text("calibration_data");
    parsed.per_channel = read.flag("per_channel");
    parsed.activation_type = read.choice("activation_type", kActivationTypes);
    if (const std::string bias = read.text("quantize_bias"); bias != "auto")
        parsed.quantize_bias = read.flag("quantize_bias");
    if (const std::string reduce = read.text("reduce_range"); reduce != "auto")
        parsed.reduce_range = read.flag("reduce_range");
    parsed.keep_io_types = read.flag("keep_io_types");
    return parsed;
}

std::string fp16_settings_text(const OrtPrecisionOptions& options) {
    return fmt::format("keep_io_types={}", options.keep_io_types);
}

bool quantize_bias_for(const OrtPrecisionOptions& options, DeviceKind device) {
    return options.quantize_bias.value_or(device == DeviceKind::cpu);
}

Int8WeightRange int8_weight_range_for(const OrtPrecisionOptions& options, DeviceKind device, CpuInt8Dot cpu) {
    using models::quant::WeightRange;
    using Reason = quantization_metrics::WeightRangeReason;
    if (options.reduce_range) return {*options.reduce_range ? WeightRange::reduced : WeightRange::full, Reason::option};
    if (device != DeviceKind::cpu) return {WeightRange::full, Reason::gpu};
    switch (cpu) {
        case CpuInt8Dot::avx512_vnni: return {WeightRange::full, Reason::cpu_avx512_vnni};
        case CpuInt8Dot::avx_vnni: return {WeightRange::full, Reason::cpu_avx_vnni};
        case CpuInt8Dot::saturating: return {WeightRange::reduced, Reason::cpu_without_vnni};
        case CpuInt8Dot::not_x86: break;
    }
    return {WeightRange::full, Reason::cpu_not_x86};
}

std::vector<BackendMetric> int8_weight_range_metrics(const Int8WeightRange& choice) {
    return {{std::string(quantization_metrics::kWeightMaxLevel),
             static_cast<double>(models::quant::max_weight_level(choice.range)), "level"},
            {std::string(quantization_metrics::kWeightRangeReason), static_cast<double>(choice.reason), "reason"}};
}

std::string int8_settings_text(const OrtPrecisionOptions& options, DeviceKind device,
                               models::quant::WeightRange weights) {
    std::string text = fmt::format("method={} per_channel={} activation_type={}", to_string(options.calibration_method),
                                   options.per_channel, to_string(options.activation_type));
    // Only a float bias and reduced-range weights change the key, so the files made before those options existed stay
    // valid.
    if (!quantize_bias_for(options, device)) text += " bias=float32";
    if (weights == models::quant::WeightRange::reduced) text += " weights=reduce_range";
    if (options.calibration_method == models::quant::CalibrationMethod::percentile)
        text += fmt::format(" percentile={}", options.calibration_percentile);
    return text;
}

}  // namespace inferbench
