// What the telemetry of one benchmark says: power, energy per inference, clocks, throttling, heat,
// memory, CPU. Derived from the stored samples of the measure phase (recomputable at any time).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
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

// `inferences`: samples inferred in the measure phase (iterations x batch size).
TelemetrySummary summarize_telemetry(std::span<const GpuSample> gpu, std::span<const CpuSample> cpu,
                                     std::span<const TelemetrySource> sources, std::int64_t inferences);

}  // namespace inferbench::analysis
