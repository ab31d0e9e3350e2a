// The telemetry sampler of one benchmark: a thread of the orchestrator (not of the worker, so that the
// measured loop is untouched) that reads the GPUs (NVML, else a streaming nvidia-smi) and the worker's
// process tree and the host (/proc, RAPL) at a fixed rate on absolute deadlines, on the iterations'
// clock, tagging each sample with the benchmark phase the orchestrator last set. Each round reads what
// changes that fast (instant power, SM clock, clock events); the rest every 100 ms, every second or on
// phase changes, as sampler.cpp lists, so that 100 Hz costs under 1% of one core.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/samples.hpp"
#include "telemetry/nvml.hpp"

namespace inferbench::telemetry {

// telemetry_gpu: auto (NVML, else nvidia-smi), nvml, nvidia-smi, off.
enum class GpuMode { automatic, nvml, nvidia_smi, off };
std::optional<GpuMode> parse_gpu_mode(std::string_view text);
std::string_view to_string(GpuMode mode);

// How GPUs are read, decided once per run and shared by its benchmarks' samplers (nvmlInit can take a
// second on a large host): NVML, or nvidia-smi with the query fields its driver knows, or neither.
struct GpuAccess {
    std::shared_ptr<Nvml> nvml;
    std::vector<std::string> smi_fields;    // non-empty: the nvidia-smi fallback is used
    std::vector<TelemetrySource> sources;   // "nvml" / "nvidia-smi": ok or unavailable, with the reason
};
GpuAccess open_gpu_access(GpuMode mode, const std::string& nvml_library = nvml_library_path());

struct SamplerOptions {
    double rate_hz = 10;                                     // 1..100
    std::int64_t expected_ns = 60'000'000'000;               // how long it will likely run: memory is reserved
    // The GPUs read (NVML indices); unset: every GPU. A worker of `parallel: per_device` samples its own GPU
    // only (none for a cpu worker), another worker's GPU being that worker's.
    std::optional<std::vector<int>> gpus = {};
    std::filesystem::path proc_root = "/proc";
    std::filesystem::path powercap_root = "/sys/class/powercap";
};

struct SamplerResult {
    std::vector<GpuSample> gpu;            // by time, GPUs of one round in index order
    std::vector<CpuSample> cpu;            // at most 10 Hz: CPU time comes in 10 ms clock ticks
    std::vector<TelemetrySource> sources;  // every source tried: nvml or nvidia-smi, procfs, rapl
    std::int64_t rounds = 0;               // sampling deadlines served
    std::int64_t missed_rounds = 0;        // deadlines skipped because a round overran its period
    std::int64_t thread_cpu_ns = 0;        // CPU time of the sampler's threads: the cost of sampling
    std::int64_t first_round_cpu_ns = 0;   // of which the first round (every metric, the energy counter too)
    std::int64_t wall_ns = 0;              // from start to stop
};

class Sampler {
public:
    // `gpu` must outlive the sampler.
    Sampler(const GpuAccess& gpu, SamplerOptions options);
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;
    ~Sampler();  // stops a running sampler, dropping its samples

    // Starts sampling `pid` and its descendants, in phase load. Throws EnvironmentError when no thread
    // can be started.
    void start(int pid);
    void set_phase(SamplePhase phase);
    // Stops and hands over everything sampled; once.
    SamplerResult stop();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The phases as the events told them are late by the time an event takes to arrive; the iterations
// say exactly when measuring ran. Samples between the first iteration's start and the last one's end
// become measure, measure samples before it warmup and after it teardown; load samples stay load.
void align_phases(std::span<GpuSample> gpu, std::span<CpuSample> cpu, std::int64_t first_start_ns,
                  std::int64_t last_end_ns);

}  // namespace inferbench::telemetry
