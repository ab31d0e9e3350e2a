// The model file an onnxruntime cell runs, by its precision: fp32 as it is; fp16 converted (models/onnx_fp16);
// int8 calibrated here on ONNX Runtime's CPU execution provider (the float32 model's activations read as
// extra graph outputs, on the calibration batches) and quantized to QDQ (models/onnx_qdq), its weights' range
// chosen by the CPU that runs it (ort_precision_options: int8_weight_range_for), with that choice and the int8
// model's agreement with float32 on those batches as metrics. Converted files are cached
// (models/converted_model_cache) by the source model's hash and every setting that changes them.
#pragma once

#include <optional>
#include <string>

#include "backends/backend.hpp"
#include "backends/onnxruntime/onnxruntime_options.hpp"
#include "core/metrics/quantization_metrics.hpp"

namespace inferbench {

// The int8 model's agreement with float32 (core/metrics/quantization_metrics.hpp names them).
inline constexpr std::string_view kInt8CosineMetric = quantization_metrics::kOutputCosine;
inline constexpr std::string_view kInt8Top1Metric = quantization_metrics::kTop1Agreement;

// Called by OnnxRuntimeBackend::convert_model (which has initialised ONNX Runtime's API).
// fp16 on the CPU: a converted model ONNX Runtime's CPU execution provider has no kernels for is returned
// with skip_reason set. Throws UserError for calibration data that does not fit the model.
ConvertedModel convert_for_onnxruntime(const std::string& model_path, const BenchmarkSpec& spec,
                                       const OnnxRuntimeOptions& options);

// fp16 on the CPU, judged before anything is converted or run (so that `run --dry-run` and the run skip the
// same cells, for the same reason): the float16 model of `model_path` is made in a temporary folder and
// ONNX Runtime's CPU execution provider asked which of its ops it would run in float32. The reason to skip,
// as convert_for_onnxruntime gives it, or nothing where the CPU provider has every kernel (the float16 model
// of a Flatten, say, runs).
std::optional<std::string> fp16_cpu_skip_reason(const std::string& model_path, const OnnxRuntimeOptions& options);

}  // namespace inferbench
