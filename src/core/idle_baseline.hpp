// The GPUs' idle state, measured for a few seconds before a run's first CUDA cell (runner/orchestrator/idle_baseline):
// what `cooldown: idle` waits to get back near, and the power that energy net of idle subtracts. Stored
// with the run, in its environment (environment_json "idle_baseline"), written and read here alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferbench {

// One GPU's means over a window of telemetry samples (the baseline's, or a cooldown's reading).
struct GpuMeans {
    int index = 0;                        // NVML's GPU index, as gpu_samples.gpu_index
    std::optional<double> power_w;        // mean board power
    std::optional<double> temperature_c;  // mean GPU temperature
    std::optional<double> gpu_util_pct;   // mean utilisation: above 0, something else used the GPU meanwhile
    std::int64_t samples = 0;

    friend bool operator==(const GpuMeans&, const GpuMeans&) = default;
};

struct IdleBaseline {
    std::int64_t measured_ns = 0;  // how long the GPUs were sampled
    std::vector<GpuMeans> gpus;     // those with a reading
    std::string unavailable;       // why there is none: no GPU telemetry, idle_baseline 0, interrupted

    const GpuMeans* gpu(int index) const;
    friend bool operator==(const IdleBaseline&, const IdleBaseline&) = default;
};

nlohmann::ordered_json to_json(const IdleBaseline& baseline);
// The baseline of a run's environment; nullopt where the run stored none (runs before it existed, runs
// without CUDA cells). Malformed entries are left out, never read as zeros.
std::optional<IdleBaseline> idle_baseline_of(const nlohmann::json& environment);

}  // namespace inferbench
