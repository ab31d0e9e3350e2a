// The report's figures, PNG and/or SVG, drawn by gnuplot (report/gnuplot.hpp), one gnuplot process
// per group:
//   <metric>-over-time-<key>    the metric over time, one line per batch size (e2e latency, GPU power,
//                               SM clock, GPU utilisation, temperature, process CPU: those measured)
//   <metric>-vs-batch-<key>     each per-benchmark metric against batch size (log2 axis)
//   per-token-latency-<key>     a generative group's decode steps over time (generation_plots.hpp)
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

// A figure before it is drawn: what every figure of the report is made of.
struct Line {
    std::string title;
    std::vector<Point> points;  // x, y
    bool markers = false;
    bool dashed = false;  // a bound: drawn dashed, in the colour of the line before it
};

struct Figure {
    std::string stem;  // file name without extension
    std::string title, x_label, y_label;
    bool log2_x = false;
    // Throughput is read as a share of the best: its axis starts at zero, so a few percent look like
    // a few percent (the other quantities' axes are fitted, and say so where they do not start at 0).
    bool y_from_zero = false;
    std::vector<double> x_tics;  // explicit tics (batch sizes); empty: gnuplot's
    std::vector<std::pair<Point, std::string>> point_labels;
    std::vector<Line> lines;
};

Figure make_figure(std::string stem, std::string title, std::string x_label, std::string y_label);

// Milliseconds read badly as 0.00003: a figure whose every value is below 1 ms is drawn in us or ns (the
// axis label's "(ms)" says which).
void readable_ms(Figure& figure, bool x_axis);

// A line of more than `max_points` points as the means of max_points equal time buckets; `note` then says how wide
// (" (means of 1.2 ms)"), for the line's title.
std::vector<Point> thinned(std::vector<Point> points, std::size_t max_points, std::string& note);

// One gnuplot program for every figure in every format (PlotOptions::formats), DIR/<stem>.<ext>.
ReportFiles draw_figures(const std::vector<Figure>& figures, const std::filesystem::path& dir, const PlotOptions& options);

ReportFiles write_group_plots(const ReportGroup& group, const std::filesystem::path& dir, const PlotOptions& options);

// One figure per family of `groups` (same run, device and model); `summaries` those of the selection.
ReportFiles write_throughput_latency_plots(const std::vector<BenchmarkGroup>& groups,
                                           const std::vector<analysis::BenchmarkSummary>& summaries,
                                           const std::filesystem::path& dir, const PlotOptions& options);

}  // namespace inferbench::report
