// The 95% confidence intervals of a benchmark's headline figures: mean latency, p50/p90/p99,
// throughput and energy per inference. One benchmark's come from its iterations and samples
// (core/statistics/confidence.hpp: batch means for means, order statistics for percentiles); a cell measured
// several times (`repeats`) gets Student-t intervals over its repeats (analysis/repeats.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "analysis/iteration_statistics.hpp"
#include "core/statistics/confidence.hpp"
#include "core/samples.hpp"
#include "core/spec.hpp"

namespace inferbench::analysis {

struct FigureIntervals {
    std::optional<Interval> mean, p50, p90, p99;  // end-to-end latency, ns
    std::optional<Interval> throughput;           // inferences per second
    std::optional<Interval> joules_per_inference;
    std::string method;  // how they were computed, for people: "batch means, order statistics"
};

// Latency and throughput intervals of one benchmark from its iterations' statistics (analysis/iteration_statistics):
// batch means of the latencies in measured order, order statistics of the sorted ones. The throughput's comes
// from the batch-means interval [L, U] of the iterations' cycle times (start to the next start; the last one's
// latency), the time per iteration the throughput inverts: [batch / U, batch / L]. A mean's interval that
// reaches below the least value averaged (a few far outliers in a skewed distribution) is cut at that value.
FigureIntervals iteration_intervals(const IterationStatistics& stats, std::int64_t batch_size);
// The same of iterations in memory, in measured order.
FigureIntervals iteration_intervals(std::span<const IterationRecord> iterations, std::int64_t batch_size);
// The p50, p90 and p99 intervals (order statistics) of sorted latencies: what iteration_intervals reads of them.
void add_percentile_intervals(const SortedValues& sorted_e2e, FigureIntervals& ci);

// A mean lies above the least value of what it averages; an interval from a few far outliers (t over
// 30 batches, or over a few repeats, of a skewed distribution) can reach below that, even below zero,
// and is cut there.
std::optional<Interval> at_least(std::optional<Interval> interval, double least);

// Energy per inference (J) is mean power over throughput: its interval's relative half-width is that of
// the mean power (batch means over the measure phase's power samples of one GPU, in time order) and
// that of the throughput, added in quadrature (first order, the two taken as independent). Nothing
// where fewer than 2 power samples or no throughput interval exist.
std::optional<Interval> energy_interval(double joules_per_inference, std::span<const GpuSample> one_gpu,
                                        const std::optional<Interval>& throughput, double throughput_per_s);

}  // namespace inferbench::analysis
