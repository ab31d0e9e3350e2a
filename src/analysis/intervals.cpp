#include "analysis/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace inferbench::analysis {

std::optional<Interval> at_least(std::optional<Interval> interval, double least) {
    if (interval) interval->low = std::max(interval->low, least);
    return interval;
}

void add_percentile_intervals(const SortedValues& sorted_e2e, FigureIntervals& ci) {
    ci.p50 = quantile_interval(sorted_e2e, 0.50);
    ci.p90 = quantile_interval(sorted_e2e, 0.90);
    ci.p99 = quantile_interval(sorted_e2e, 0.99);
}

FigureIntervals iteration_intervals(const IterationStatistics& stats, std::int64_t batch_size) {
    FigureIntervals ci;
    if (stats.count < 2) return ci;
    ci.method = fmt::format("batch means of the iterations ({} batches), order statistics for percentiles",
                            std::min<std::int64_t>(kBatches, stats.count));
    ci.mean = at_least(stats.e2e_batch_means, static_cast<double>(stats.e2e.moments.min));
    add_percentile_intervals(stats.e2e.sorted, ci);
    if (const auto cycle = at_least(stats.cycle_batch_means, stats.fastest_cycle_ns); cycle && cycle->low > 0) {
        const double per_s = static_cast<double>(batch_size) * 1e9;
        ci.throughput = Interval{per_s / cycle->high, per_s / cycle->low};
    }
    return ci;
}

FigureIntervals iteration_intervals(std::span<const IterationRecord> iterations, std::int64_t batch_size) {
    const auto read = [](const SortedValues& sorted) {
        FigureIntervals ci;
        add_percentile_intervals(sorted, ci);
    };
    return iteration_intervals(iteration_statistics(IterationsInMemory(iterations), read), batch_size);
}

std::optional<Interval> energy_interval(double joules_per_inference, std::span<const GpuSample> one_gpu,
                                        const std::optional<Interval>& throughput, double throughput_per_s) {
    if (!throughput || throughput_per_s <= 0 || joules_per_inference <= 0) return std::nullopt;
    std::vector<const GpuSample*> samples;
    for (const auto& s : one_gpu) {
        if (s.gpu_index != one_gpu.front().gpu_index) return std::nullopt;  // several GPUs: their sum is not sampled
        if (s.phase == SamplePhase::measure && s.power_w) samples.push_back(&s);
    }
    std::stable_sort(samples.begin(), samples.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    std::vector<double> power;
    for (const auto* s : samples) power.push_back(*s->power_w);
    const auto mean_power = batch_means_interval(power);
    if (!mean_power) return std::nullopt;
    double mean = 0;
    for (const double p : power) mean += p;
    mean /= static_cast<double>(power.size());
    if (mean <= 0) return std::nullopt;
    const double power_part = relative_half_width(*mean_power, mean);
    const double throughput_part = relative_half_width(*throughput, throughput_per_s);
    const double half = joules_per_inference * std::hypot(power_part, throughput_part);
    return Interval{joules_per_inference - half, joules_per_inference + half};
}

}  // namespace inferbench::analysis
