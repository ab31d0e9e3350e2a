// The figures of a report's serving sweeps (serving_rows.hpp's SweepView), drawn as the report's other figures
// (plots.hpp: gnuplot, PNG and SVG) and shown on the HTML page from the same Figure values:
//   serving-pareto-per-gpu, serving-pareto-per-server
//                      output tokens/s per user (x) against output tokens/s per GPU (y; per server for sweeps
//                      whose GPU count is unknown): every load of each sweep marked, its Pareto front joined, its
//                      goodput knee labelled
//   serving-ttft-vs-concurrency, serving-tpot-vs-concurrency, serving-ttft-vs-request-rate, serving-tpot-vs-request-rate
//                      TTFT and TPOT p50 and p99 against the load, one line each per sweep
// A figure is drawn where some sweep has two points or more for it.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include "report/plots.hpp"
#include "report/serving_rows.hpp"

namespace inferbench::report {

std::vector<Figure> serving_figures(std::span<const SweepView> views);

// serving_figures drawn into `dir`; nothing written without a figure.
ReportFiles write_serving_plots(std::span<const SweepView> views, const std::filesystem::path& dir,
                                const PlotOptions& options);

}  // namespace inferbench::report
