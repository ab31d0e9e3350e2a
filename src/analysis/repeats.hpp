// A cell measured several times (the plan's `repeats`, interleaved across cells) as one summary row:
// every latency figure (mean, percentiles, spread), the throughput and the telemetry means are the
// means over the repeats that measured (status ok); minima and maxima (latency, clocks, heat, memory)
// the extremes; iteration counts, samples and energy the sums; a generative cell's TTFT, TPOT and per-token
// latency alike (their means and percentiles the means over the repeats, token rates the means), and a serving
// cell's (its request counts, tokens and good requests summed; MLPerf's verdict counted per repeat). Its intervals (FigureIntervals) are
// Student-t intervals over those repeats, and cv_of_means_pct is the spread of their mean latencies.
// Repeats that did not measure are named in the row's reason, and the row takes the status of the
// first of them; a cell with one repeat that measured keeps that benchmark's own intervals.
#pragma once

#include <span>
#include <vector>

#include "analysis/summary.hpp"

namespace inferbench::analysis {

// The repeats of one cell (at least one), in repeat order.
BenchmarkSummary combine_repeats(std::span<const BenchmarkSummary> repeats);

// Summaries in stored order (run, ordinal, repeat), each cell's repeats combined into one row; a cell
// measured once is kept as it is.
std::vector<BenchmarkSummary> combine_cells(const std::vector<BenchmarkSummary>& summaries);

}  // namespace inferbench::analysis
