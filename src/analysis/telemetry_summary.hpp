// What the telemetry of one benchmark says: power, energy per inference, clocks, throttling, heat,
// memory, CPU. Derived from the stored samples of the measure phase (recomputable at any time).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/samples.hpp"

namespace inferbench::analysis {

struct ThrottleShare {
    std::string reason;  // clock_event::Reason::name, e.g. "sw_power_cap"
    double share = 0;    // of the measure phase's sampled time, 0..1
};

struct TelemetrySummary {
    std::int64_t gpu_samples = 0;  // in the measure phase
    std::int64_t cpu_samples = 0;
    std::optional<double> mean_power_w;
    std::optional<double> max_power_w;
    std::optional<double> energy_j;       // measure phase, all sampled GPUs
    std::string energy_source;            // "energy counter" or "integrated power" (empty without energy)
    std::optional<double> joules_per_inference;
    std::optional<double> inferences_per_joule;  // the seed's "energy efficiency"
    // Net of idle power: (energy - idle power x the time it covers) / the same inferences, where the run
    // measured an idle baseline of every GPU counted; unset where it did not, or where the net is not above 0.
    std::optional<double> idle_power_w;
    std::optional<double> joules_per_inference_net;
    std::optional<double> mean_sm_clock_mhz;
    std::optional<double> min_sm_clock_mhz;
    std::optional<double> mean_gpu_util_pct;
    std::optional<double> max_temperature_c;
    std::optional<double> peak_fb_used_mib;
    std::optional<double> peak_process_fb_mib;
    std::vector<ThrottleShare> throttled;  // reasons that throttle (clock_event::Reason::throttles) seen at all
    std::optional<double> mean_process_cpu_pct;
    std::optional<double> peak_rss_mib;
    std::vector<TelemetrySource> sources;  // as recorded, incl. why a source was unavailable
};

// `inferences`: samples inferred in the measure phase (iterations x batch size), over
// `measure_wall_ns` where known: the samples span a little less than the phase (up to one period at
// each end), so energy per inference counts the inferences of the sampled span, inferences x span /
// measure_wall_ns (0: all of them). Power and energy are of the GPUs given, together; energy from
// each GPU's energy counter (last minus first measure sample) where every GPU has one, else from
// power integrated by the trapezoid rule. Throttle shares: the time (each sample standing for the
// time to the next one of its GPU) with the reason's bit set, of the GPU that had it most. `idle_power_w`:
// the idle baseline's power of the GPUs given, together, for energy net of idle.
TelemetrySummary summarize_telemetry(std::span<const GpuSample> gpu, std::span<const CpuSample> cpu,
                                     std::span<const TelemetrySource> sources, std::int64_t inferences,
                                     std::int64_t measure_wall_ns = 0,
                                     std::optional<double> idle_power_w = std::nullopt);

// The GPU samples that are a benchmark's: GPU N's for a cuda:N device where GPU N was sampled (the
// NVML index is taken for the CUDA one: they agree unless CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER
// reorder them), else every sampled GPU's.
std::vector<GpuSample> benchmark_gpu_samples(std::span<const GpuSample> gpu, std::string_view device);

// Whether a telemetry source bears on a benchmark on `device`: NVML and nvidia-smi read GPUs, so only
// a GPU benchmark misses them; RAPL (the host's CPU energy) and procfs (the worker process) bear on any.
bool source_concerns_device(std::string_view source, std::string_view device);

// For a GPU benchmark: throttled for more than 10% of the measure phase (saying by what), SM clock
// more than 10% below the highest seen in the benchmark (`gpu`: its samples of every phase) while the
// GPU was measured and not idle (gpu_idle).
std::vector<std::string> telemetry_warnings(const TelemetrySummary& telemetry, std::span<const GpuSample> gpu);

}  // namespace inferbench::analysis
