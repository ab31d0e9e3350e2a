// The charts of the HTML report for one group of benchmarks (selection.hpp: they differ only in batch
// size): time series with one series per benchmark, and the batch sweep.
#pragma once

#include <vector>

#include "report/html_page.hpp"
#include "report/report_data.hpp"

namespace inferbench::report {

// Time series first (latency and device compute time per iteration; GPU power, SM clock,
// temperature, utilisation and memory per sampled GPU; process CPU and RSS; stored traces such as
// trtexec's), then the sweep (latency p50/p99, throughput, inferences per joule vs batch size) when the
// group has two or more batch sizes. Charts without any value are left out; long series are reduced to
// kMaxChartPoints.
std::vector<Chart> group_charts(const ReportGroup& group);

// Per-iteration and per-sample series longer than this are drawn from min/max buckets.
inline constexpr std::size_t kMaxChartPoints = 5000;

}  // namespace inferbench::report
