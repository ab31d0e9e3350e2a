// The shape of the latencies over a run: spread (CV), two levels (bimodal), drift from start to end,
// and outliers, laid over the telemetry of the same clock.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/statistics/statistics.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

std::vector<double> sorted_e2e(std::span<const IterationRecord> iterations) {
    std::vector<std::int64_t> v;
    v.reserve(iterations.size());
    for (const auto& it : iterations) v.push_back(it.e2e_ns);
    return sorted_values(v);
}

struct MeanStdev {
    double mean = 0, stdev = 0;
};
MeanStdev mean_stdev(std::span<const double> v) {
    MeanStdev m;
    m.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double sq = 0;
    for (const double x : v) sq += (x - m.mean) * (x - m.mean);
    m.stdev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0;
    return m;
}

// The split of the sorted latencies at their widest gap with at least kBimodalMinShare on each side,
// when Ashman's D of the two sides passes kBimodalSeparation and the gap is an empty band wider than
// either side's spread (any split of one wide level can pass Ashman's D; only two levels leave a gap).
std::optional<Finding> bimodal(const BenchmarkEvidence& e, std::span<const double> sorted) {
    const auto n = sorted.size();
    const auto min_side = static_cast<std::size_t>(std::ceil(limits::kBimodalMinShare * static_cast<double>(n)));
    std::size_t split = 0;
    double widest = 0;
    for (std::size_t i = min_side; i + min_side <= n; ++i) {
        const double gap = sorted[i] - sorted[i - 1];
        if (gap > widest) {
            widest = gap;
            split = i;
        }
    }
    if (split == 0) return std::nullopt;
    const auto lo = mean_stdev(sorted.subspan(0, split)), hi = mean_stdev(sorted.subspan(split));
    const double spread = std::sqrt(lo.stdev * lo.stdev + hi.stdev * hi.stdev);
    const double d = spread > 0 ? std::sqrt(2.0) * (hi.mean - lo.mean) / spread : INFINITY;
    if (d <= limits::kBimodalSeparation || widest <= std::max(lo.stdev, hi.stdev)) return std::nullopt;
    return Finding{"instability.bimodal", Severity::warning, {e.id()},
                   fmt::format("latencies fall into two levels: {:.0f}% of iterations near {}, {:.0f}% near {} "
                               "(Ashman's D {:.1f} > {:.0f})",
                               static_cast<double>(split) / static_cast<double>(n) * 100, format_latency(lo.mean),
                               static_cast<double>(n - split) / static_cast<double>(n) * 100, format_latency(hi.mean),
                               std::min(d, 99.0), limits::kBimodalSeparation),
                   {{"iterations.e2e"}, std::nullopt, {}},
                   "look for two code paths or placements: CPU frequency or core migration (pin the worker with "
                   "taskset), a cache that fits for some inputs, a periodic background task"};
}

double median_of(std::span<const IterationRecord> iterations) {
    auto v = sorted_e2e(iterations);
    return percentile_sorted(v, 50);
}

// A warm-up effect is over within the first tenth: the second tenth's median already matches the last's.
bool fell_at_the_start(const BenchmarkEvidence& e, double last) {
    const auto tenth = e.iterations.size() / 10;
    const double second = median_of(std::span<const IterationRecord>(e.iterations).subspan(tenth, tenth));
    return std::abs(second - last) <= limits::kDriftFraction * last;
}

// What to look at, from what the evidence says explains a drift: a busy host (host.busy) first, a fall
// confined to the start (warm-up) next; a fall that goes on through the run is no warm-up.
std::string drift_advice(const BenchmarkEvidence& e, bool slower, double last) {
    if (host_was_busy(e))
        return fmt::format("the host was busy with other processes ({:.0f}% of its CPUs, host.busy): their load, "
                           "not the benchmark, may have changed over the run; measure on an idle host",
                           e.host->others_pct);
    if (!slower && fell_at_the_start(e, last))
        return "warm-up was too short: raise --warmup until the first iterations match the last";
    if (!slower)
        return "the latency fell through the run, not only at its start (no warm-up effect): check for other load "
               "on the host that eased, and the CPU's and GPU's clocks over the run";
    return e.on_gpu() ? "check the GPU's temperature and clocks over the run (thermal drift) and the worker's memory"
                      : "check for other load on the host, the CPU's frequency and temperature over the run, and "
                        "the worker's memory";
}

// `overall`: the median of all iterations (the caller has them sorted).
std::optional<Finding> drift(const BenchmarkEvidence& e, double overall) {
    const auto n = e.iterations.size();
    const std::size_t tenth = n / 10;
    const std::span<const IterationRecord> all(e.iterations);
    const double first = median_of(all.first(tenth)), last = median_of(all.last(tenth));
    if (overall <= 0 || std::abs(last - first) <= limits::kDriftFraction * overall) return std::nullopt;
    const bool slower = last > first;
    const auto origin = e.iterations.front().start_ns;
    Finding f{slower ? "instability.drift_slower" : "instability.drift_faster", Severity::warning, {e.id()},
              fmt::format("latency {} over the run: median {} in the first tenth of the iterations, {} in the last "
                          "({:+.1f}%)",
                          slower ? "grew" : "fell", format_latency(first), format_latency(last),
                          (last / first - 1) * 100),
              {{"iterations.e2e"},
               TimeWindow{0, e.iterations.back().start_ns + e.iterations.back().e2e_ns - origin},
               {}},
              drift_advice(e, slower, last)};
    if (!e.gpu.empty()) f.evidence.series.emplace_back("gpu_samples.sm_clock_mhz");
    return f;
}

bool throttled_near(std::span<const GpuSample> gpu, std::int64_t t, std::int64_t within_ns) {
    return std::any_of(gpu.begin(), gpu.end(), [&](const GpuSample& s) {
        return std::llabs(s.t_ns - t) <= within_ns && s.clock_event_reasons &&
               (*s.clock_event_reasons & clock_event::throttling_bits()) != 0;
    });
}

std::optional<Finding> outliers(const BenchmarkEvidence& e, double median) {
    std::vector<const IterationRecord*> slow;
    for (const auto& it : e.iterations)
        if (static_cast<double>(it.e2e_ns) >= limits::kOutlierFactor * median) slow.push_back(&it);
    if (slow.empty()) return std::nullopt;
    const auto worst = std::max_element(slow.begin(), slow.end(), [](auto a, auto b) { return a->e2e_ns < b->e2e_ns; });
    std::string telemetry = "no GPU telemetry to lay them over (not measured)";
    if (!e.gpu.empty()) {
        // A sample stands for up to its period around it; half a second covers NVML's and nvidia-smi's.
        constexpr std::int64_t kNearNs = 500'000'000;
        const auto aligned = std::count_if(slow.begin(), slow.end(), [&](const IterationRecord* it) {
            return throttled_near(e.gpu, it->start_ns, kNearNs);
        });
        telemetry = fmt::format("{} of them within 0.5 s of a GPU throttle event", aligned);
    }
    const auto origin = e.iterations.front().start_ns;
    return Finding{"instability.outliers", Severity::info, {e.id()},
                   fmt::format("{} of {} iterations took >= {:.0f}x the median {} (worst {} at {:.2f} s); {}",
                               slow.size(), e.iterations.size(), limits::kOutlierFactor, format_latency(median),
                               format_latency(static_cast<double>((*worst)->e2e_ns)),
                               ns_to_s((*worst)->start_ns - origin), telemetry),
                   {{"iterations.e2e", "gpu_samples.clock_event_reasons"},
                    TimeWindow{slow.front()->start_ns - origin, slow.back()->start_ns + slow.back()->e2e_ns - origin},
                    {}},
                   "report a high percentile (p99) beside the mean; look at what else runs on the host at those "
                   "times"};
}

}  // namespace

std::vector<Finding> instability(const BenchmarkEvidence& e) {
    std::vector<Finding> out;
    // Where queries queue by design (server, offline, concurrency), the spread is the load's: the scenario's
    // verdict judges it, and none of these findings' advice applies.
    if (const auto& scenario = e.summary.scenario.settings; scenario && queues_by_design(scenario->scenario)) return out;
    const auto& s = e.summary.e2e;
    const WarningThresholds thresholds;
    if (std::isfinite(s.cv_pct) && s.count >= thresholds.min_iterations && s.cv_pct > thresholds.max_cv_pct)
        out.push_back({"instability.high_cv", Severity::warning, {e.id()},
                       fmt::format("end-to-end latency varies with a CV of {:.1f}% (> {:.0f}%, the summary's stability "
                                   "limit): p50 {}, p99 {}",
                                   s.cv_pct, thresholds.max_cv_pct, format_latency(s.p50), format_latency(s.p99)),
                       {{"iterations.e2e"}, std::nullopt, {}},
                       "measure longer (--duration), pin the worker to cores, close other load; compare medians"});
    if (e.iterations.size() < limits::kMinIterationsForShape) return out;
    const auto sorted = sorted_e2e(e.iterations);
    if (auto f = bimodal(e, sorted)) out.push_back(std::move(*f));
    const double median = percentile_sorted(sorted, 50);
    if (auto f = drift(e, median)) out.push_back(std::move(*f));
    if (auto f = outliers(e, median)) out.push_back(std::move(*f));
    return out;
}

// A stopping criterion (stdrel, entropy) that gave up: the benchmark measured, but not as precisely as
// its plan asked, and the interval of its mean says how precisely it did.
std::vector<Finding> not_converged(const BenchmarkEvidence& e) {
    const auto& b = e.summary.benchmark;
    if (b.convergence != Convergence::not_converged || b.status != BenchmarkStatus::ok) return {};
    std::string precision = "its mean has no interval";
    if (const auto& ci = e.summary.ci.mean; ci && e.summary.e2e.mean > 0)
        precision = fmt::format("the 95% interval of its mean is +-{} (+-{:.2f}%)", format_latency(ci->half_width()),
                                100 * ci->half_width() / e.summary.e2e.mean);
    return {{"timing.not_converged", Severity::warning, {e.id()},
             fmt::format("the stopping criterion did not converge ({}); {}", b.stop_reason, precision),
             {{"iterations.e2e"}, std::nullopt, {}},
             "raise stop_timeout (or max_iterations), or remove the noise the other findings name; a max_noise "
             "below what this system reaches ends only by giving up"}};
}

}  // namespace inferbench::findings
