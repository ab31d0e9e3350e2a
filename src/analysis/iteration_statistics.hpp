// Everything the summary reads of a benchmark's iterations, gathered in passes over an IterationSource
// (analysis/iteration_source.hpp) in memory that does not grow with their count: per timing column its moments
// and its sorted values at the ranks its readers ask (core/statistics/order_statistics.hpp), and the in-order figures of
// the confidence intervals (batch means of the latencies and of the cycle times). Two passes, a third or more
// only where many values share the bucket of an asked rank.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "analysis/iteration_source.hpp"
#include "core/statistics/confidence.hpp"
#include "core/statistics/order_statistics.hpp"
#include "core/spec.hpp"

namespace inferbench::analysis {

struct ColumnFigures {
    Moments moments;
    SortedValues sorted;  // at the ranks its readers asked
    std::int64_t count() const { return moments.count; }
};

struct IterationStatistics {
    std::int64_t count = 0;
    IterationRecord first{}, last{};
    double e2e_sum_ns = 0;  // the latencies summed as doubles in measured order
    ColumnFigures e2e, compute, h2d, d2h;  // device times where measured (kNotMeasured left out)
    ColumnFigures queue, service;          // where the queries recorded their wait: it, and e2e less it
    std::optional<Interval> e2e_batch_means;    // with 2 or more iterations
    std::optional<Interval> cycle_batch_means;  // of start to the next start (the last one's latency)
    double fastest_cycle_ns = 0;
};

// Reads of the sorted values of one column, run once on a recorder (to learn the ranks) and again on the
// selected values.
using SortedReader = std::function<void(const SortedValues&)>;

// `read_e2e`: every read of the end-to-end latencies' sorted values beyond the timing summary's own
// (intervals, the scenario's verdict).
IterationStatistics iteration_statistics(const IterationSource& source, const SortedReader& read_e2e);

}  // namespace inferbench::analysis
