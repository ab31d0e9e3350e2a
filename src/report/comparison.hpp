// `inferbench compare`: the same benchmarks (model, backend, options, precision, batch size) measured on
// several devices, side by side, with speed-ups and energy efficiency relative to a baseline device:
// the question "which GPU?" answered from stored results.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/summary.hpp"
#include "core/statistics/statistics.hpp"
#include "report/table.hpp"
#include "report/verdict.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// What was loaded from one database: the chosen run and the summaries of its selected benchmarks.
struct ComparisonSource {
    std::string db;  // as given on the command line
    store::RunRecord run;
    std::vector<analysis::BenchmarkSummary> summaries;  // telemetry included; a cell's repeats combined
};

// One column group of the comparison: one device of one database.
struct ComparisonSide {
    std::size_t source = 0;  // index into Comparison::sources
    std::string device;      // as stored: "cuda:0"
    std::string label;       // for people: the GPU's name where known, else the device and host
};

using ComparisonKey = std::tuple<std::string, std::string, std::string, std::string, std::int64_t>;
// model, backend, variant (options; a generative cell's lengths added: "input_tokens=128 output_tokens=128"),
// precision, batch size

struct ComparisonRow {
    ComparisonKey key;
    std::vector<std::optional<std::size_t>> cells;  // per side: index into its source's summaries
};

struct Comparison {
    std::vector<ComparisonSource> sources;
    std::vector<ComparisonSide> sides;
    std::size_t baseline = 0;         // index into sides
    std::vector<ComparisonRow> rows;  // by model, backend, options, precision, batch size
    double margin = kDefaultMargin;   // the verdicts' equivalence margin (report/verdict.hpp)

    // The summary of a row on a side; nullptr where that side did not measure it.
    const analysis::BenchmarkSummary* at(const ComparisonRow& row, std::size_t side) const;
};

// The device a benchmark ran on, for people: the GPU's name (from the imported log or the run's
// environment, gpus.devices[].name) for cuda devices, the CPU model for cpu, else the device string;
// " @ host" where the name alone says nothing about the machine (no GPU name found).
std::string device_label(const store::RunRecord& run, const analysis::BenchmarkSummary& benchmark);

// Sides are the (source, device) pairs that measured something (status ok); labels made unique by the
// host, then the database index. `baseline`: empty (the first side), a 1-based database index
// ("2": the first side of the second --db), or text matching one side's device or label (case
// insensitive, a part of the label suffices if only one side matches). Throws UserError otherwise,
// and when no side measured anything.
Comparison build_comparison(std::vector<ComparisonSource> sources, const std::string& baseline);

// Side by side, one row per benchmark key, seven columns per side "[n] mean", "[n] inf/s", "[n] x",
// "[n] W", "[n] inf/J", "[n] eff x" (x: throughput relative to the baseline; eff x: inferences per
// joule relative to the baseline) and "[n] verdict" (report/verdict.hpp, against the baseline): for
// terminals and Markdown.
Table comparison_table(const Comparison& comparison);
// One row per benchmark key and side, for CSV and JSON.
Table comparison_long_table(const Comparison& comparison);
// "[1] NVIDIA H200 (cuda:0): h200.db run 3 on gpu01, baseline" one line per side.
std::vector<std::string> comparison_legend(const Comparison& comparison);

// What makes a comparison doubtful, each text once with the number of rows it concerns: sides that
// ran with different settings (duration, warm-up, iteration limits), and sides whose latency CV is
// above `max_cv_pct` (core/statistics/statistics.hpp's threshold by default).
std::vector<std::string> comparison_warnings(const Comparison& comparison,
                                             double max_cv_pct = WarningThresholds{}.max_cv_pct);

// The verdict of a row's side against the baseline; nothing for the baseline itself and where either
// lacks a mean latency.
std::optional<PairVerdict> row_verdict(const Comparison& comparison, const ComparisonRow& row, std::size_t side);

// A generative row's verdict on its mean TTFT or mean TPOT (analysis/generation_metrics: their batch-means or
// repeats' intervals), judged as the mean latency is (report/verdict.hpp); nothing for the baseline itself, a row
// that is not generative, or TPOT where a side has one output token.
enum class GenerationFigure { ttft, tpot };
std::string_view to_string(GenerationFigure figure);  // "TTFT", "TPOT"
std::optional<PairVerdict> generation_verdict(const Comparison& comparison, const ComparisonRow& row, std::size_t side,
                                              GenerationFigure figure);

// Every pair judged SLOWER by more than `threshold` (a fraction of the baseline's mean latency; of a generative
// row's mean TTFT and mean TPOT too), one line each: "resnet50 onnxruntime fp32 b1 [2] NVIDIA H100: SLOWER +7.2%
// (+5.1% to +9.3%)", "... [2] NVIDIA H100: TPOT SLOWER +9.0% (...)".
std::vector<std::string> regressions(const Comparison& comparison, double threshold);

// Legend, warnings and table for terminals and Markdown, the long table for CSV and JSON.
std::string render_comparison(const Comparison& comparison, Format format, const RenderOptions& options = {});

// The comparison as one self-contained HTML page (html_page.hpp): sides and their environments, the
// table, and per model bar charts of throughput and inferences per joule for every device.
std::string render_comparison_html(const Comparison& comparison);

}  // namespace inferbench::report
