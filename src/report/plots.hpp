// The report's figures, PNG and/or SVG, drawn by gnuplot (report/gnuplot.hpp), one gnuplot process
// per group:
//   <metric>-over-time-<key>    the metric over time, one line per batch size (e2e latency, GPU power,
//                               SM clock, GPU utilisation, temperature, process CPU: those measured)
//   <metric>-vs-batch-<key>     each per-benchmark metric against batch size (log2 axis)
//   throughput-vs-latency-<family key>   per device and model: throughput against mean latency, one
//                               line per backend / precision / options, a labelled point per batch size
// Every title and label that holds user data goes through gnuplot_quote.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/report_data.hpp"
#include "report/selection.hpp"

namespace inferbench::report {

struct PlotOptions {
    std::vector<ImageFormat> formats = {ImageFormat::png, ImageFormat::svg};
    PlotSize size;
    // Longer lines are drawn as the means of equal time buckets (a million points help no eye).
    std::size_t max_points_per_line = 5000;
};

// The y range of a figure: the data's with a margin, never narrower than a tenth of the values'
// magnitude (a 3% change then takes a third of the height, not all of it: no V out of noise), from
// zero where the margin reaches it. `note`: what the axis label says when it does not start at zero.
struct AxisRange {
    double low = 0, high = 1;
    std::string note;  // "axis from 950, not 0", or empty
};
AxisRange fitted_range(const std::vector<double>& values);

ReportFiles write_group_plots(const ReportGroup& group, const std::filesystem::path& dir, const PlotOptions& options);

// One figure per family of `groups` (same run, device and model); `summaries` those of the selection.
ReportFiles write_throughput_latency_plots(const std::vector<BenchmarkGroup>& groups,
                                           const std::vector<analysis::BenchmarkSummary>& summaries,
                                           const std::filesystem::path& dir, const PlotOptions& options);

}  // namespace inferbench::report
