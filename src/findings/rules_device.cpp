// The GPU side: throttling (clock-event reasons, SM clock drops) and where an inference's time goes
// between host, copies and compute (trtexec's enqueue- and transfer-bound rules).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "analysis/gpu_timeline.hpp"
#include "core/statistics/statistics.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

// The categories a throttled sample falls into, with the finding id each one gets.
struct ThrottleKind {
    std::string_view id;
    std::string_view what;
    std::uint64_t bits;
};
constexpr ThrottleKind kKinds[] = {
    {"throttling.power_cap", "the SW power cap", clock_event::kSwPowerCap},
    {"throttling.thermal", "thermal slowdown", clock_event::kSwThermalSlowdown | clock_event::kHwThermalSlowdown},
    {"throttling.slowdown", "HW slowdown or the power brake",
     clock_event::kHwSlowdown | clock_event::kHwPowerBrakeSlowdown},
};

using analysis::Interval;
using analysis::inside;
using analysis::total_ns;

// One GPU's measure-phase samples, each standing for the time to the next one.
struct Timeline {
    analysis::GpuSeries samples;
    std::int64_t span_ns() const { return samples.size() < 2 ? 0 : samples.back()->t_ns - samples.front()->t_ns; }
};

std::map<int, Timeline> measure_timelines(std::span<const GpuSample> gpu) {
    std::map<int, Timeline> out;
    for (auto& [index, series] : analysis::gpu_series(gpu, SamplePhase::measure)) out[index].samples = std::move(series);
    return out;
}

std::vector<Interval> intervals_where(const Timeline& line, const std::function<bool(const GpuSample&)>& throttled) {
    return analysis::windows_where(line.samples, throttled);
}

// "latency 1.23 ms inside these windows vs 1.10 ms outside (+12%)", or why it cannot be said.
struct LatencyContrast {
    std::string text;
    double change = 0;  // inside / outside - 1
};
LatencyContrast latency_contrast(std::span<const IterationRecord> iterations, std::span<const Interval> windows) {
    if (iterations.empty()) return {"latency inside vs outside: not measured (no iterations stored with these samples)"};
    double in_sum = 0, out_sum = 0;
    std::int64_t in_n = 0, out_n = 0;
    for (const auto& it : iterations) {
        if (inside(windows, it.start_ns)) {
            in_sum += static_cast<double>(it.e2e_ns);
            ++in_n;
        } else {
            out_sum += static_cast<double>(it.e2e_ns);
            ++out_n;
        }
    }
    if (in_n == 0) return {"no measured iteration started inside these windows"};
    if (out_n == 0)
        return {fmt::format("every iteration ran inside them (mean {}): no unthrottled iterations to compare with",
                            format_latency(in_sum / static_cast<double>(in_n)))};
    const double in_mean = in_sum / static_cast<double>(in_n), out_mean = out_sum / static_cast<double>(out_n);
    const double change = in_mean / out_mean - 1;
    return {fmt::format("mean latency {} inside vs {} outside ({:+.1f}%)", format_latency(in_mean),
                        format_latency(out_mean), change * 100),
            change};
}

std::optional<double> max_sm_clock(std::span<const GpuSample> gpu) {
    std::optional<double> best;
    for (const auto& s : gpu)
        if (s.sm_clock_mhz) best = std::max(best.value_or(0), *s.sm_clock_mhz);
    return best;
}

Finding throttle_finding(const BenchmarkEvidence& e, std::string_view id, std::string what, int gpu_index,
                         const Timeline& line, std::span<const Interval> windows) {
    const double share = static_cast<double>(total_ns(windows)) / static_cast<double>(line.span_ns());
    const auto contrast = latency_contrast(e.iterations, windows);
    std::optional<double> lo, hi;
    for (const auto* s : line.samples) {
        if (!s->sm_clock_mhz || !inside(windows, s->t_ns)) continue;
        lo = std::min(lo.value_or(*s->sm_clock_mhz), *s->sm_clock_mhz);
        hi = std::max(hi.value_or(*s->sm_clock_mhz), *s->sm_clock_mhz);
    }
    const auto peak = max_sm_clock(e.gpu);
    const std::string clocks = lo ? fmt::format(", SM clock {:.0f}-{:.0f} MHz there (highest seen {:.0f} MHz)", *lo,
                                                *hi, peak.value_or(*hi))
                                  : "";
    Finding f;
    f.id = id;
    f.severity = contrast.change >= limits::kLatencyChangeFraction ? Severity::problem : Severity::warning;
    f.benchmarks = {e.id()};
    const auto origin = line.samples.front()->t_ns;
    f.statement = fmt::format("GPU {} was held by {} for {:.0f}% of the measured {:.1f} s{}; {}", gpu_index, what,
                              share * 100, ns_to_s(line.span_ns()), clocks, contrast.text);
    f.evidence.series = {"gpu_samples.clock_event_reasons", "gpu_samples.sm_clock_mhz", "iterations.e2e"};
    f.evidence.window = TimeWindow{windows.front().start_ns - origin, windows.back().end_ns - origin};
    f.try_next = id == "throttling.thermal"
                     ? "improve cooling or airflow, or lock lower clocks (nvidia-smi -lgc) for steady numbers"
                     : "compare at a locked clock (nvidia-smi -lgc) or a raised power limit (nvidia-smi -pl) where "
                       "allowed; report the clocks with the result";
    return f;
}

// How one benchmark's GPU compute moves with its enqueue time, iteration by iteration.
struct HostCoupling {
    std::size_t iterations = 0;
    double r = 0;                                // Pearson's correlation of compute with enqueue
    double quick_host_ns = 0, slow_host_ns = 0;  // median compute in the quarters with the shortest, longest enqueue
};

std::optional<HostCoupling> host_coupling(std::span<const IterationRecord> iterations) {
    std::vector<std::pair<double, double>> points;  // (enqueue, compute)
    for (const auto& it : iterations)
        if (it.enqueue_ns >= 0 && it.compute_ns > 0)
            points.emplace_back(static_cast<double>(it.enqueue_ns), static_cast<double>(it.compute_ns));
    if (points.size() < limits::kMinIterationsForShape) return std::nullopt;
    const double n = static_cast<double>(points.size());
    double mx = 0, my = 0;
    for (const auto& [x, y] : points) {
        mx += x / n;
        my += y / n;
    }
    double sxx = 0, syy = 0, sxy = 0;
    for (const auto& [x, y] : points) {
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
        sxy += (x - mx) * (y - my);
    }
    if (sxx <= 0 || syy <= 0) return std::nullopt;
    std::sort(points.begin(), points.end());
    const auto quarter = static_cast<std::ptrdiff_t>(points.size() / 4);
    const auto median_compute = [](auto first, auto last) {
        std::vector<double> v;
        for (auto it = first; it != last; ++it) v.push_back(it->second);
        std::sort(v.begin(), v.end());
        return percentile_sorted(v, 50);
    };
    return HostCoupling{points.size(), sxy / std::sqrt(sxx * syy),
                        median_compute(points.begin(), points.begin() + quarter),
                        median_compute(points.end() - quarter, points.end())};
}

// GPU compute that rises and falls with the host's enqueue time although the host takes well under the GPU's time:
// CUDA events time the stream, and a stream that waits for the host's next launch inside the timed region (a
// framework's own work before it launches a CUDA graph, say) counts that wait as compute.
std::optional<Finding> host_in_compute(const BenchmarkEvidence& e) {
    const auto coupling = host_coupling(e.iterations);
    if (!coupling || coupling->r < limits::kHostCouplingR ||
        coupling->slow_host_ns < (1 + limits::kHostCouplingChange) * coupling->quick_host_ns)
        return std::nullopt;
    return Finding{
        "launch.host_in_compute", Severity::warning, {e.id()},
        fmt::format("GPU compute follows the host's enqueue time iteration by iteration (r = {:.2f} over {} "
                    "iterations): median {} in the quarter with the shortest enqueue, {} in the quarter with the "
                    "longest ({:+.0f}%), enqueue at {:.0f}% of compute: the GPU waited for the host inside the timed "
                    "region, so this compute includes host time and moves with the host's speed",
                    coupling->r, coupling->iterations, format_latency(coupling->quick_host_ns),
                    format_latency(coupling->slow_host_ns),
                    (coupling->slow_host_ns / coupling->quick_host_ns - 1) * 100,
                    *e.stages.enqueue_ns / *e.stages.compute_ns * 100),
        {{"iterations.compute", "iterations.enqueue"}, std::nullopt, {}},
        "compare this path with another on the quarter with the shortest enqueue, or end to end, not on this "
        "median; keep other load off the host and pin the worker (taskset); less host work between the call and its "
        "launch (a CUDA graph launched directly) takes the host out of the GPU's time"};
}

}  // namespace

std::vector<Finding> throttling(const BenchmarkEvidence& e) {
    if (!e.on_gpu()) return {};
    const auto lines = measure_timelines(e.gpu);
    if (lines.empty())
        return {{"throttling.not_measured", Severity::info, {e.id()},
                 "throttling not measured: no GPU telemetry was stored for this benchmark",
                 {{"telemetry_sources"}, std::nullopt, {}},
                 "run where NVML or nvidia-smi works (see the telemetry sources of the run), or import an "
                 "nvidia-smi log taken alongside"}};
    std::vector<Finding> out;
    const auto peak = max_sm_clock(e.gpu);
    for (const auto& [index, line] : lines) {
        if (line.span_ns() <= 0) continue;
        bool by_reason = false;
        for (const auto& kind : kKinds) {
            const auto windows = intervals_where(line, [&](const GpuSample& s) {
                return (s.clock_event_reasons.value_or(0) & kind.bits) != 0;
            });
            if (static_cast<double>(total_ns(windows)) < limits::kThrottleShare * static_cast<double>(line.span_ns()))
                continue;
            by_reason = true;
            out.push_back(throttle_finding(e, kind.id, std::string(kind.what), index, line, windows));
        }
        if (by_reason || !peak) continue;
        const double floor_mhz = *peak * (1 - limits::kClockDropFraction);
        const auto dropped = intervals_where(
            line, [&](const GpuSample& s) { return s.sm_clock_mhz && *s.sm_clock_mhz < floor_mhz && !gpu_idle(s); });
        if (static_cast<double>(total_ns(dropped)) >= limits::kThrottleShare * static_cast<double>(line.span_ns()))
            out.push_back(throttle_finding(e, "throttling.clock_drop",
                                           fmt::format("an SM clock under {:.0f} MHz (no throttle reason recorded)",
                                                       floor_mhz),
                                           index, line, dropped));
    }
    return out;
}

std::vector<Finding> launch_bound(const BenchmarkEvidence& e) {
    std::vector<Finding> out;
    const auto& t = e.stages;
    const auto graphs = e.summary.settings.backend_option_values.find("cuda_graph");
    const bool graphs_on = graphs != e.summary.settings.backend_option_values.end() && graphs->second == "true";
    const std::string graph_advice =
        graphs_on ? "CUDA graphs are already on: batch more work per launch"
                  : "capture the model in a CUDA graph (backend option cuda_graph=true where the backend has it) "
                    "or raise the batch size";
    if (t.enqueue_ns && t.compute_ns && *t.compute_ns > 0 && *t.enqueue_ns >= limits::kEnqueueBoundRatio * *t.compute_ns)
        out.push_back({"launch.enqueue_bound", Severity::warning, {e.id()},
                       fmt::format("enqueue takes {} per inference, {:.0f}% of the {} of GPU compute (>= {:.0f}%, "
                                   "trtexec's rule): throughput is bound by launching work, not by the GPU",
                                   format_latency(*t.enqueue_ns), *t.enqueue_ns / *t.compute_ns * 100,
                                   format_latency(*t.compute_ns), limits::kEnqueueBoundRatio * 100),
                       {{"enqueue", "gpu_compute"}, std::nullopt, {}},
                       graph_advice});
    else if (t.enqueue_ns && t.compute_ns && *t.compute_ns > 0)
        if (auto coupled = host_in_compute(e)) out.push_back(std::move(*coupled));
    if (!t.compute_ns || *t.compute_ns <= 0 || !has_latency(e.summary)) return out;
    const double device_ns = *t.compute_ns + t.h2d_ns.value_or(0) + t.d2h_ns.value_or(0);
    const double e2e = e.summary.e2e.mean;
    if (e2e < limits::kHostBoundRatio * device_ns) return out;
    const auto util = e.summary.telemetry.mean_gpu_util_pct;
    const std::string util_text =
        util ? fmt::format("; mean GPU utilisation {:.0f}%{}", *util,
                           *util < limits::kLowGpuUtilPct ? fmt::format(" at batch {}", e.summary.benchmark.batch_size)
                                                          : std::string())
             : "; GPU utilisation not measured";
    out.push_back({"launch.host_bound", Severity::warning, {e.id()},
                   fmt::format("end-to-end {} is {:.1f}x the {} the GPU spends on copies and compute: {:.0f}% of each "
                               "inference is host time{}",
                               format_latency(e2e), e2e / device_ns, format_latency(device_ns),
                               (1 - device_ns / e2e) * 100, util_text),
                   {{"iterations.e2e", "iterations.compute", "iterations.h2d", "iterations.d2h"}, std::nullopt, {}},
                   graph_advice + "; keep inputs on the device between inferences"});
    return out;
}

std::vector<Finding> transfer_bound(const BenchmarkEvidence& e) {
    const auto& t = e.stages;
    if (!t.compute_ns || *t.compute_ns <= 0) return {};
    std::vector<Finding> out;
    for (const auto& [name, copy] : {std::pair{"H2D", t.h2d_ns}, std::pair{"D2H", t.d2h_ns}}) {
        if (!copy || *copy < limits::kTransferBoundRatio * *t.compute_ns) continue;
        const std::string key = name == std::string_view("H2D") ? "h2d" : "d2h";
        out.push_back({"transfer." + key + "_bound", Severity::warning, {e.id()},
                       fmt::format("{} copies take {} per inference, {:.1f}x the {} of GPU compute (trtexec's rule: "
                                   "a copy >= compute): throughput is bound by PCIe transfers",
                                   name, format_latency(*copy), *copy / *t.compute_ns, format_latency(*t.compute_ns)),
                       {{key, "gpu_compute"}, std::nullopt, {}},
                       "use pinned host memory, keep inputs (or outputs) resident on the device, overlap copies with "
                       "compute on separate streams"});
    }
    return out;
}

}  // namespace inferbench::findings
