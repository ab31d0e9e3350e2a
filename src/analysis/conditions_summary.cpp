#include "analysis/conditions_summary.hpp"

#include <fmt/format.h>

#include "analysis/throttle_flags.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/units.hpp"

namespace inferbench::analysis {
namespace {

// "SW power cap, SM clock under 1485 MHz (0.75 x 1980 MHz)"
std::string what_flagged(const ThrottleSummary& t) {
    std::vector<std::string> parts;
    if (t.reasons != 0) parts.push_back(clock_event::describe(t.reasons));
    if (t.clock_below_floor && t.floor_mhz())
        parts.push_back(fmt::format("SM clock under {:.0f} MHz ({:g} x {:.0f} MHz)", *t.floor_mhz(), t.threshold,
                                    *t.default_clock_mhz));
    return join(parts, ", ");
}

std::optional<double> idle_value(const std::map<int, GpuFacts>& gpus, int index, std::optional<double> GpuMeans::*field) {
    const auto it = gpus.find(index);
    if (it == gpus.end() || !it->second.idle) return std::nullopt;
    return (*it->second.idle).*field;
}

}  // namespace

std::optional<double> ThrottleSummary::floor_mhz() const {
    if (!default_clock_mhz) return std::nullopt;
    return threshold * *default_clock_mhz;
}

std::optional<double> ThrottleSummary::flagged_share() const {
    if (iterations == 0 || unknown == iterations) return std::nullopt;
    return static_cast<double>(flagged) / static_cast<double>(iterations);
}

bool judges_throttling(const store::BenchmarkRecord& benchmark, const MeasureConditions& conditions) {
    const auto device = parse_device(benchmark.device);
    return conditions.throttle_policy != ThrottlePolicy::keep && device && device->kind == DeviceKind::cuda;
}

ThrottleJudgement judge_throttling(const store::MeasuredBenchmark& measured, std::span<const IterationRecord> iterations,
                                   const MeasureConditions& conditions, const std::map<int, GpuFacts>& gpus) {
    ThrottleJudgement judgement;
    const auto device = parse_device(measured.record.device);
    if (!judges_throttling(measured.record, conditions) || iterations.empty()) return judgement;
    ThrottleSummary t;
    t.policy = conditions.throttle_policy;
    t.threshold = conditions.throttle_threshold;
    if (const auto it = gpus.find(device->index); it != gpus.end()) t.default_clock_mhz = it->second.default_clock_mhz;
    std::vector<GpuSample> own;
    for (const auto& s : measured.gpu_samples)
        if (s.gpu_index == device->index) own.push_back(s);
    const IterationFlags flags = flag_iterations(iterations, own, {t.floor_mhz()});
    t.iterations = static_cast<std::int64_t>(iterations.size());
    t.flagged = flags.flagged;
    t.unknown = flags.unknown;
    t.reasons = flags.reasons;
    t.clock_below_floor = flags.clock_below_floor;
    if (t.policy == ThrottlePolicy::discard && flags.flagged > 0) {
        for (std::size_t i = 0; i < iterations.size(); ++i)
            if (flags.states[i] != IterationState::flagged) judgement.kept.push_back(iterations[i]);
        t.discarded = flags.flagged;
    }
    judgement.summary = t;
    return judgement;
}

std::vector<std::string> throttle_notes(const ThrottleSummary& t) {
    std::vector<std::string> notes;
    if (t.unknown == t.iterations) {
        notes.push_back("throttling of the iterations not known: no GPU telemetry of this GPU covers them");
        return notes;
    }
    if (t.flagged > 0) {
        const double share = static_cast<double>(t.flagged) / static_cast<double>(t.iterations) * 100;
        notes.push_back(t.policy == ThrottlePolicy::discard
                            ? fmt::format("{} of {} iterations ran throttled ({}) and are left out of the statistics "
                                          "(throttle_policy discard)",
                                          t.flagged, t.iterations, what_flagged(t))
                            : fmt::format("{:.1f}% of iterations ran throttled ({}); the statistics include them "
                                          "(throttle_policy flag)",
                                          share, what_flagged(t)));
    }
    if (t.unknown > 0)
        notes.push_back(fmt::format("{} of {} iterations not known to be throttled or not: no GPU sample covers them{}",
                                    t.unknown, t.iterations,
                                    t.policy == ThrottlePolicy::discard ? " (kept in the statistics)" : ""));
    if ((t.flagged > 0 || t.unknown > 0) && !t.default_clock_mhz)
        notes.push_back("SM clocks not judged for throttling: the run did not record the GPU's default applications "
                        "clock (flags from clock-event reasons only)");
    return notes;
}

std::vector<std::string> condition_notes(const store::MeasuredBenchmark& measured, const MeasureConditions& conditions,
                                         const std::map<int, GpuFacts>& gpus) {
    std::vector<std::string> notes;
    if (conditions.l2_flush)
        notes.push_back("l2_flush: throughput over the iterations' own time (the L2 flushes between them left out); "
                        "power and energy per inference include the flushes");
    if (store::find_metric(measured.metrics, harness_metrics::kCudaContextWasActive).value_or(0) > 0)
        notes.push_back(fmt::format("sync {}: the CUDA context existed before the flags were set (the driver applies "
                                    "them to it)",
                                    to_string(conditions.sync)));
    if (store::find_metric(measured.metrics, harness_metrics::kCooldownReachedIdle).value_or(1) == 0) {
        const auto device = parse_device(measured.record.device);
        const int index = device ? device->index : 0;
        const auto reading = [&](std::string_view name, std::optional<double> GpuMeans::*field, const char* unit) {
            const auto now = store::find_metric(measured.metrics, name);
            const auto idle = idle_value(gpus, index, field);
            return fmt::format("{} (idle {})", now ? fmt::format("{:.0f}{}", *now, unit) : "not read",
                               idle ? fmt::format("{:.0f}{}", *idle, unit) : "not measured");
        };
        notes.push_back(fmt::format("cooldown: GPU {} not back near its idle baseline after {:.0f} s ({}, {}); the cell "
                                    "ran anyway",
                                    index, store::find_metric(measured.metrics, harness_metrics::kCooldownS).value_or(0),
                                    reading(harness_metrics::kCooldownEndTemperatureC, &GpuMeans::temperature_c, " °C"),
                                    reading(harness_metrics::kCooldownEndPowerW, &GpuMeans::power_w, " W")));
    }
    return notes;
}

}  // namespace inferbench::analysis
