// Names of the model-cost figures stored with each benchmark (benchmark_metrics rows), computed
// from the ONNX model at the benchmark's batch size by the static cost model (models/cost_model.hpp:
// 1 MAC = 2 FLOPs). "Per inference" means per sample (batch item): the batch's total / batch size,
// so weights read once per batch are shared by its samples. Bytes are at the benchmark's precision:
// the fp32 file's bytes x 1/2 for fp16 and bf16, x 1/4 for int8 and fp8, x 1/8 for int4 (all tensors scaled alike,
// which slightly undercounts integer inputs such as BERT's token ids).
#pragma once

#include <string_view>

#include "core/spec.hpp"

namespace inferbench::model_metrics {

// What the fp32 file's bytes are multiplied by for a benchmark of `precision` (see above).
constexpr double bytes_scale(Precision precision) {
    switch (precision) {
        case Precision::fp16:
        case Precision::bf16: return 0.5;
        case Precision::int8:
        case Precision::fp8: return 0.25;
        case Precision::int4: return 0.125;
        case Precision::fp32: break;
    }
    return 1.0;
}

inline constexpr std::string_view kParameters = "model_parameters";                // unit "count"
inline constexpr std::string_view kMacsPerInference = "model_macs_per_inference";  // unit "MAC"
inline constexpr std::string_view kFlopsPerInference = "model_flops_per_inference";  // unit "FLOP"
inline constexpr std::string_view kBytesPerInference = "model_bytes_per_inference";  // unit "B"
// How complete the figures above are (unit "count"): nodes the cost model could not cost (the figures
// are then lower bounds), and nodes costed at the largest sizes the data allows (after NonZero,
// NonMaxSuppression, ...: upper bounds). Benchmarks stored before these were kept have neither.
inline constexpr std::string_view kCostUnknownNodes = "model_cost_unknown_nodes";
inline constexpr std::string_view kCostDataDependentNodes = "model_cost_data_dependent_nodes";
inline constexpr std::string_view kPrefix = "model_";

}  // namespace inferbench::model_metrics
