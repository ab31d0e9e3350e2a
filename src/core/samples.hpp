// Telemetry samples: what the GPU and the CPU did while a benchmark ran, on the iterations' clock
// (CLOCK_MONOTONIC ns, core/clock.hpp), so a clock drop can be laid over a latency rise.
// A metric that was not read (unsupported, no permission, not in an imported log) is empty, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// Where in a benchmark's life a sample was taken.
enum class SamplePhase { load, warmup, measure, teardown };
std::string_view to_string(SamplePhase phase);
std::optional<SamplePhase> sample_phase_from_string(std::string_view text);

// Clock-event ("throttle") reasons, with NVML's bit values (nvmlClocksEventReason*), the encoding
// stored in GpuSample::clock_event_reasons whatever the source (NVML, nvidia-smi text or XML).
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;

struct Reason {
    std::uint64_t bit;
    std::string_view name;   // snake_case, for columns and JSON: "sw_power_cap"
    std::string_view label;  // for people: "SW power cap"
    bool throttles;          // lowers clocks under load (idle and the settings reasons do not)
};
// Every reason above, in bit order.
const std::vector<Reason>& reasons();
// The bits of the reasons that throttle (Reason::throttles): power cap, HW slowdown, sync boost, thermal
// and power-brake slowdowns; not GPU idle nor the applications or display clock settings.
std::uint64_t throttling_bits();
// "SW power cap, HW slowdown"; "none" for 0.
std::string describe(std::uint64_t bits);
}  // namespace clock_event

struct GpuSample {
    std::int64_t t_ns = 0;  // CLOCK_MONOTONIC; for imported logs: ns since the log's first sample
    SamplePhase phase = SamplePhase::measure;
    int gpu_index = 0;
    std::optional<double> power_w;             // instant (NVML "current") board power
    std::optional<double> power_avg_w;         // the driver's 1 s average
    std::optional<double> energy_mj;           // total energy counter since driver load, millijoules
    std::optional<double> power_limit_w;       // enforced limit
    std::optional<double> temperature_c;       // GPU core
    std::optional<double> memory_temperature_c;
    std::optional<double> sm_clock_mhz;
    std::optional<double> memory_clock_mhz;
    std::optional<double> graphics_clock_mhz;
    std::optional<double> gpu_util_pct;
    std::optional<double> memory_util_pct;
    std::optional<double> fb_used_mib;
    std::optional<double> fb_total_mib;
    std::optional<double> pcie_tx_kib_s;
    std::optional<double> pcie_rx_kib_s;
    std::optional<int> pstate;                    // 0..15 (P0 = highest performance)
    std::optional<std::uint64_t> clock_event_reasons;  // clock_event bits
    std::optional<double> process_fb_mib;         // the benchmark process's own GPU memory
};

// Whether the GPU was idle when sampled: the driver's GPU-idle clock-event reason is set, or its
// utilization reads at most kIdleUtilPct (nvidia-smi and NVML print whole percents: 0 or 1 is no work).
// An idle GPU lowers its clocks by design: a low clock then is not throttling.
inline constexpr double kIdleUtilPct = 1.0;
bool gpu_idle(const GpuSample& sample);

struct CpuSample {
    std::int64_t t_ns = 0;  // CLOCK_MONOTONIC
    SamplePhase phase = SamplePhase::measure;
    std::optional<double> process_cpu_pct;  // worker process tree; 100 = one core busy
    std::vector<double> process_cpu_pct_per_core;  // the tree's share of each core (index = cpu)
    std::optional<double> process_rss_mib;
    std::optional<double> process_peak_rss_mib;
    std::optional<double> host_cpu_pct;  // whole host, 100 = all cores busy
    std::optional<double> host_memory_used_mib;
    std::optional<double> host_memory_total_mib;
    std::optional<double> cpu_package_energy_j;  // RAPL counter (summed over packages), joules
};

// Whether a telemetry source worked for one benchmark, and why not: "nvml", "nvidia-smi", "procfs",
// "rapl". status "ok" or "unavailable"; detail e.g. "libnvidia-ml.so.1: cannot open shared object file".
struct TelemetrySource {
    std::string source;
    std::string status;
    std::string detail;
};

}  // namespace inferbench
