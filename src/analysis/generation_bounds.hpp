// The physical limits of a generative benchmark and how close it came to them.
//
// Decode: every decode step reads the weights it uses and the KV cache. Bytes per step = the weight bytes as
// the engine holds them x parameters_read_per_step / parameters (the embedding table is read only at its
// tokens' rows) + the step's KV cache (its stored kv_cache_bytes). The ceiling on decode steps per second is
// memory bandwidth / bytes per step, over the mean bytes of the generation's decode steps (the time of all
// steps is at least the sum of their bytes over the bandwidth). Fraction of the ceiling: achieved decode
// steps/s / ceiling.
// Prefill: TTFT is at least batch x forward_flops(shape, input_tokens, 0) / the peak FLOP/s at the cell's
// precision. Fraction: floor / achieved mean TTFT.
// Each comes from the device database's datasheet figure (a CPU has no datasheet bandwidth) and from the
// measured roofs `inferbench probe` stored (dram copy/triad/memcpy, gemm_*), each where known: a bound that is
// not known is said to be unknown, never guessed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/generation_metrics.hpp"
#include "devices/roofline.hpp"

namespace inferbench::analysis {

struct DecodeCeiling {
    devices::RoofOrigin origin = devices::RoofOrigin::datasheet;
    std::string what;              // the roof's: "datasheet", "probe dram_copy"
    double bandwidth_bytes_per_s = 0;
    double steps_per_s = 0;        // the ceiling
    std::optional<double> fraction;  // achieved decode steps/s / ceiling; nothing without decode steps
};

struct PrefillFloor {
    devices::RoofOrigin origin = devices::RoofOrigin::datasheet;
    std::string what;            // "tensor cores, dense", "probe gemm_bf16", ...
    double peak_per_s = 0;
    double ttft_ns = 0;          // the floor
    double fraction = 0;         // floor / achieved mean TTFT
};

struct GenerationBounds {
    double weight_bytes_per_step = 0;  // weights one decode step reads
    double kv_bytes_per_step = 0;      // mean KV cache of the decode steps (0 with one output token)
    double bytes_per_step = 0;         // the two together
    double kv_share = 0;               // kv_bytes_per_step / bytes_per_step
    std::optional<double> prefill_flops;       // batch x forward_flops(shape, input_tokens, 0); needs the shape
    std::optional<double> decode_flops_per_step;  // mean over the decode steps, the whole batch
    std::vector<DecodeCeiling> decode;  // datasheet first, then measured, each where the device has it
    std::vector<PrefillFloor> prefill;
    std::vector<std::string> notes;     // which bound is unknown and how to know it
    // The bytes of a step fit the CPU's last-level cache: DRAM's bandwidth is no bound there, so `decode` is empty
    // and a note says why.
    bool fits_last_level_cache = false;

    const DecodeCeiling* decode_ceiling(bool measured) const;
    const PrefillFloor* prefill_floor(bool measured) const;
    // The measured ceiling where the probe stored one, else the datasheet's: what a summary shows.
    const DecodeCeiling* best_decode() const;
    const PrefillFloor* best_prefill() const;
};

// Nothing where the metrics carry no decoder facts (a worker that stored none): the bytes are unknown.
// `precision`: the benchmark's, as stored ("fp16", "int4"); its compute roof is devices::roof_precision's.
std::optional<GenerationBounds> generation_bounds(const GenerationMetrics& metrics, const devices::DeviceRoofs& roofs,
                                                  std::string_view precision);

}  // namespace inferbench::analysis
