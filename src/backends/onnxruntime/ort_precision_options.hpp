// The options of the onnxruntime backend that decide how a float16 or int8 model is made from the cell's
// float32 model (backend_options.onnxruntime: calibration_method, ...). Part of the backend's one option list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/ort_cpu_int8.hpp"
#include "backends/options.hpp"
#include "core/metrics/quantization_metrics.hpp"
#include "models/quant_calibration.hpp"

namespace inferbench {

struct OrtPrecisionOptions {
    models::quant::CalibrationMethod calibration_method = models::quant::CalibrationMethod::minmax;
    double calibration_percentile = 99.999;  // percentile method: the share of |x| kept, in %
    std::int64_t calibration_batches = 4;    // seeded random batches, when there is no calibration_data
    std::string calibration_data;            // files as `inputs` takes them (backends/input_files)
    bool per_channel = true;
    models::quant::ActivationType activation_type = models::quant::ActivationType::int8;
    // int32 biases behind DequantizeLinear; nothing: the device decides (quantize_bias_for).
    std::optional<bool> quantize_bias;
    // Weights in [-64, 64] (ONNX Runtime's reduce_range); nothing: the CPU decides (int8_weight_range_for).
    std::optional<bool> reduce_range;
    bool keep_io_types = false;  // float16 models: float32 inputs and outputs
};

inline constexpr std::int64_t kMaxCalibrationBatches = 1000;

std::vector<BackendOption> ort_precision_option_list();

// Throws UserError naming the option for a bad value; `reader` holds the backend's whole option list.
OrtPrecisionOptions read_ort_precision_options(const OptionReader& reader);

// Whether an int8 model for `device` gets int32 biases: the option where given, else on a CPU yes (its provider
// fuses them into integer kernels) and on a GPU no (the CUDA provider has no int32 DequantizeLinear: the bias
// would run on the CPU, with copies, and rule out CUDA graphs).
bool quantize_bias_for(const OrtPrecisionOptions& options, DeviceKind device);

// The int8 weights' range and why: the option where given; for a GPU full; for a CPU by how it forms int8
// dot products (ort_cpu_int8.hpp): reduced on x86-64 without VNNI, where full-range weights saturate, else full.
struct Int8WeightRange {
    models::quant::WeightRange range = models::quant::WeightRange::full;
    quantization_metrics::WeightRangeReason reason = quantization_metrics::WeightRangeReason::option;
};
Int8WeightRange int8_weight_range_for(const OrtPrecisionOptions& options, DeviceKind device, CpuInt8Dot cpu);

// The metrics that say which range an int8 model's weights have and why (core/metrics/quantization_metrics.hpp).
std::vector<BackendMetric> int8_weight_range_metrics(const Int8WeightRange& choice);

// Every setting that changes the converted file, for the converted-model cache key.
std::string fp16_settings_text(const OrtPrecisionOptions& options);
std::string int8_settings_text(const OrtPrecisionOptions& options, DeviceKind device,
                               models::quant::WeightRange weights);

}  // namespace inferbench
