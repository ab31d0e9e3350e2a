// Reading the GPUs' state over a window of telemetry samples: the idle baseline before a run's first
// CUDA cell, and the readings a cooldown waits on (runner/orchestrator/cooldown). The orchestrator reads through a
// telemetry sampler (the run's GPU access: NVML, else nvidia-smi); tests hand in scripted readers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/idle_baseline.hpp"
#include "core/samples.hpp"
#include "telemetry/sampler.hpp"

namespace inferbench::runner {

// Reads every GPU for about `window_ns` and gives each one's means; empty where no GPU can be read.
class GpuWindowReader {
public:
    virtual ~GpuWindowReader() = default;
    virtual std::vector<GpuMeans> read(std::int64_t window_ns) = 0;
};

// Each GPU's means over `samples` (power: instant, else the driver's 1 s average), in GPU order; a GPU
// without a power or temperature reading in any sample is left out.
std::vector<GpuMeans> window_means(std::span<const GpuSample> samples);

// The baseline: one window of `duration_ns`. `unavailable` says why where no GPU gave a reading.
IdleBaseline measure_idle_baseline(GpuWindowReader& reader, std::int64_t duration_ns);

// A telemetry sampler of the run's GPU access for each window, on this process (whose CPU samples are
// dropped). The window ends early when `interrupted` says so (checked every 50 ms).
class SamplerWindowReader final : public GpuWindowReader {
public:
    // `gpus`: the GPUs read (unset: every GPU), as telemetry::SamplerOptions::gpus.
    SamplerWindowReader(const telemetry::GpuAccess& gpu, double rate_hz, std::function<bool()> interrupted,
                        std::optional<std::vector<int>> gpus = std::nullopt);
    std::vector<GpuMeans> read(std::int64_t window_ns) override;

private:
    const telemetry::GpuAccess& gpu_;
    double rate_hz_;
    std::function<bool()> interrupted_;
    std::optional<std::vector<int>> gpus_;
};

}  // namespace inferbench::runner
