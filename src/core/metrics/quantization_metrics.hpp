// Names of the figures a benchmark of a model inferbench quantized itself stores (benchmark_metrics rows),
// decided or measured when the model was made: the weights' range and why it was chosen, and how far its
// outputs are from the float32 model's on the calibration inputs, so that a broken quantization shows next
// to its speed and an int8 figure says which format it is of.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace inferbench::quantization_metrics {

// The smallest cosine similarity of a float output with the float32 model's, over the calibration batches.
inline constexpr std::string_view kOutputCosine = "int8_output_cosine";
// The share of rows of classifier-like outputs ([batch, classes]) whose top-1 class is float32's.
inline constexpr std::string_view kTop1Agreement = "int8_top1_agreement";
// The weights' largest level (unit "level"): 127, or 64 for reduced-range weights.
inline constexpr std::string_view kWeightMaxLevel = "int8_weight_max_level";
// Why that range (unit "reason"): a WeightRangeReason's value.
inline constexpr std::string_view kWeightRangeReason = "int8_weight_range_reason";
inline constexpr std::string_view kPrefix = "int8_";

// Why an int8 model's weights have the range they have. Stored as numbers: keep the values.
enum class WeightRangeReason : std::int32_t {
    option = 1,            // the backend option reduce_range said so
    cpu_avx512_vnni = 2,   // the CPU sums u8 x s8 products in int32 (VPDPBUSD): full range
    cpu_avx_vnni = 3,      // likewise, VEX-encoded
    cpu_without_vnni = 4,  // x86-64 without VNNI: two u8 x s8 products add up in a saturating int16: reduced
    cpu_not_x86 = 5,       // not x86 (ARM's dot products do not saturate): full range
    gpu = 6,               // a GPU runs the model: full range
};

inline std::optional<WeightRangeReason> weight_range_reason(double stored) {
    for (int code = 1; code <= 6; ++code)  // every WeightRangeReason
        if (stored == code) return static_cast<WeightRangeReason>(code);
    return std::nullopt;
}

inline std::string_view describe(WeightRangeReason reason) {
    switch (reason) {
        case WeightRangeReason::option: return "set by the backend option reduce_range";
        case WeightRangeReason::cpu_avx512_vnni: return "the CPU has AVX-512 VNNI";
        case WeightRangeReason::cpu_avx_vnni: return "the CPU has AVX-VNNI";
        case WeightRangeReason::cpu_without_vnni:
            return "an x86-64 CPU without VNNI, whose int8 kernels add u8 x s8 products in int16 and would saturate "
                   "at 8 bits";
        case WeightRangeReason::cpu_not_x86: return "not an x86 CPU";
        case WeightRangeReason::gpu: return "a GPU runs it";
    }
    return "";
}

// "int8 weights in [-64, 64] (reduced range): <why>"; "" when the level is not stored (older benchmarks).
inline std::string weight_range_note(std::optional<double> max_level, std::optional<double> reason) {
    if (!max_level) return "";
    std::string text = fmt::format("int8 weights in [-{0:g}, {0:g}]", *max_level);
    if (*max_level < 127) text += " (reduced range)";
    if (const auto why = reason ? weight_range_reason(*reason) : std::nullopt) {
        text += ": ";
        text += describe(*why);
    }
    return text;
}

}  // namespace inferbench::quantization_metrics
