// Statistics of a timing vector, as pure functions (one function turns timings into a summary).
//
// Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, the default of
// NumPy and R): for sorted values x[0..n-1] and p in [0, 100], h = (n - 1) * p / 100 and the result
// is x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). The standard deviation is the
// sample one (divides by n - 1); the coefficient of variation is stdev / mean, in percent.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/statistics/order_statistics.hpp"

namespace inferbench {

struct TimingSummary {
    std::int64_t count = 0;
    double min = 0, max = 0, mean = 0, stdev = 0, cv_pct = 0;
    double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

// Percentile of already sorted values; p in [0, 100]. Empty input gives 0.
double percentile_sorted(std::span<const double> sorted, double p);

TimingSummary summarize(std::span<const std::int64_t> values);
// The same of values summarized in passes (core/statistics/order_statistics): their moments, and the sorted values at
// the ranks the percentiles read (ask them by calling this on a SortedValues::recorder first).
TimingSummary summarize(const SortedValues& sorted, const Moments& moments);
double percentile(const SortedValues& sorted, double p);
// The same of values already sorted (for callers that need them sorted for more).
TimingSummary summarize_sorted(std::span<const double> sorted);

// The values in ascending order, as doubles, for percentile_sorted: a radix sort of the integers (a few
// passes over a million nanosecond timings where a comparison sort needs twenty).
std::vector<double> sorted_values(std::span<const std::int64_t> values);

// Inferences per second: batch x iterations over the measured wall time.
double throughput_per_s(std::int64_t batch_size, std::int64_t iterations, std::int64_t wall_ns);

struct WarningThresholds {
    double max_cv_pct = 10.0;          // trtexec warns on unstable latencies
    std::int64_t min_iterations = 10;  // fewer gives meaningless percentiles
};

// Warnings, in the style of trtexec, about numbers that should not be trusted.
std::vector<std::string> timing_warnings(const TimingSummary& e2e, const WarningThresholds& thresholds = {});

}  // namespace inferbench
