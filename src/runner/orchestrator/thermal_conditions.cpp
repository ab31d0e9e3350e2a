#include "runner/orchestrator/thermal_conditions.hpp"

#include <algorithm>

#include "runner/orchestrator/interrupt.hpp"

namespace inferbench::runner {
namespace {

// A reader of no GPU: what a cooldown until idle gets without GPU telemetry (it then waits cooldown_max).
class NoGpuReader final : public GpuWindowReader {
public:
    std::vector<GpuMeans> read(std::int64_t) override { return {}; }
};

}  // namespace

ThermalConditions::ThermalConditions(const RunSettings& settings, TelemetryRecorder& telemetry)
    : settings_(settings), telemetry_(telemetry) {}

std::optional<IdleBaseline> ThermalConditions::measure_baseline(const std::vector<BenchmarkSpec>& cells) {
    const bool any_cuda = std::any_of(cells.begin(), cells.end(),
                                      [](const BenchmarkSpec& c) { return c.device.kind == DeviceKind::cuda; });
    if (!any_cuda || settings_.idle_baseline_ns <= 0) return std::nullopt;
    const telemetry::GpuAccess* gpu = telemetry_.gpu_access();
    if (!gpu || (!gpu->nvml && gpu->smi_fields.empty())) {
        IdleBaseline none;
        none.unavailable = gpu ? "no GPU telemetry (see the benchmarks' telemetry sources)" : "telemetry is off";
        baseline_ = none;
        return baseline_;
    }
    SamplerWindowReader reader(*gpu, static_cast<double>(settings_.telemetry_rate_hz), interrupt_requested);
    baseline_ = measure_idle_baseline(reader, settings_.idle_baseline_ns);
    if (interrupt_requested()) baseline_->unavailable = "interrupted while measuring";
    return baseline_;
}

std::vector<store::Metric> ThermalConditions::before_cell(const BenchmarkSpec& spec) {
    const bool first = !cell_ran_;
    cell_ran_ = true;
    const bool until_idle = settings_.cooldown_ns == kCooldownUntilIdle;
    // Until idle concerns the cell's GPU: a CPU cell does not wait for it.
    if (first || settings_.cooldown_ns == 0 || (until_idle && spec.device.kind != DeviceKind::cuda)) return {};
    const CooldownRequest request{settings_.cooldown_ns, settings_.cooldown_max_ns, spec.device.index,
                                  baseline_ ? &*baseline_ : nullptr};
    SteadyCooldownClock clock;
    const telemetry::GpuAccess* gpu = until_idle ? telemetry_.gpu_access() : nullptr;
    NoGpuReader none;
    std::optional<SamplerWindowReader> sampler;
    if (gpu && (gpu->nvml || !gpu->smi_fields.empty()))
        sampler.emplace(*gpu, static_cast<double>(settings_.telemetry_rate_hz), interrupt_requested, telemetry_.gpus());
    GpuWindowReader& reader = sampler ? static_cast<GpuWindowReader&>(*sampler) : none;
    return cooldown_metrics(cool_down(request, reader, clock, interrupt_requested));
}

}  // namespace inferbench::runner
