// Names of the figures a benchmark of a model inferbench quantized itself stores (benchmark_metrics rows,
// unit "ratio"), measured when the model was made: how far its outputs are from the float32 model's on the
// calibration inputs, so that a broken quantization shows next to its speed.
#pragma once

#include <string_view>

namespace inferbench::quantization_metrics {

// The smallest cosine similarity of a float output with the float32 model's, over the calibration batches.
inline constexpr std::string_view kOutputCosine = "int8_output_cosine";
// The share of rows of classifier-like outputs ([batch, classes]) whose top-1 class is float32's.
inline constexpr std::string_view kTop1Agreement = "int8_top1_agreement";
inline constexpr std::string_view kPrefix = "int8_";

}  // namespace inferbench::quantization_metrics
