// The telemetry of each benchmark of a run, as the orchestrator drives it: a sampler started when the
// worker starts, its phase following the worker's events, stopped when the worker has ended, and its
// samples' phases then set exactly from the iterations. Telemetry never fails a benchmark: whatever
// goes wrong is recorded as a source unavailable, with the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/samples.hpp"
#include "core/plan/settings.hpp"
#include "core/spec.hpp"
#include "runner/wire/worker_protocol.hpp"
#include "telemetry/sampler.hpp"

namespace inferbench::runner {

struct BenchmarkTelemetry {
    std::vector<GpuSample> gpu;
    std::vector<CpuSample> cpu;
    std::vector<TelemetrySource> sources;
};

// The phase a benchmark's samples are in once its worker sent `event`; nullopt: the phase stays.
std::optional<SamplePhase> phase_after(const worker_protocol::Event& event);

class TelemetryRecorder {
public:
    explicit TelemetryRecorder(const RunSettings& settings);
    // A lane's recorder (`parallel: per_device`): the run's GPU access (opened by `run` before the lanes start),
    // its samplers reading only `gpus` (none for the cpu lane); `beside_others`: other lanes run at the same time,
    // which the sources of the host-wide figures then say.
    TelemetryRecorder(const RunSettings& settings, TelemetryRecorder& run, std::vector<int> gpus, bool beside_others);
    ~TelemetryRecorder();

    // The worker of a benchmark expected to last about `expected_ns` was started as `pid`.
    void worker_started(int pid, std::int64_t expected_ns);
    // One of the worker's events, as it arrives: the sampler's phase follows it.
    void worker_event(const worker_protocol::Event& event);
    // Stops the benchmark's sampler (if one was started) and hands over its samples.
    BenchmarkTelemetry finish(std::span<const IterationRecord> iterations);
    // The run's GPU access (opened at the first call), for readings between benchmarks (the idle
    // baseline, cooldowns); nullptr where telemetry is off.
    const telemetry::GpuAccess* gpu_access();
    // The GPUs this recorder's samplers read; unset: every GPU.
    const std::optional<std::vector<int>>& gpus() const { return gpus_; }

private:
    const RunSettings& settings_;
    TelemetryRecorder* run_ = nullptr;         // a lane's: the run's recorder, whose GPU access it shares
    std::optional<std::vector<int>> gpus_;
    bool beside_others_ = false;
    std::optional<telemetry::GpuAccess> gpu_;  // opened at the first benchmark, kept for the run
    std::unique_ptr<telemetry::Sampler> sampler_;
    std::optional<std::string> failure_;       // why this benchmark's sampler could not start
};

}  // namespace inferbench::runner
