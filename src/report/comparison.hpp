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

// What was loaded from one database: the chosen runs and the summaries of their selected benchmarks.
struct ComparisonSource {
    std::string db;                       // as given on the command line
    std::vector<store::RunRecord> runs;   // the runs the summaries come from, oldest first (one, or several hosts'
                                          // runs of a merged or shared store: `compare --run all`)
    std::vector<analysis::BenchmarkSummary> summaries;  // telemetry included; a cell's repeats combined
};

// One column group of the comparison: one device of one host in one database, named by what ran it (a GPU
// model on host A and the same model on host B are two sides; so are cuda:0 and cuda:1 of one host).
struct ComparisonSide {
    std::size_t source = 0;  // index into Comparison::sources
    std::string device;      // as stored: "cuda:0"
    std::string label;       // for people: the GPU's name where known, else the device and host
    std::string host;        // the host its runs recorded; empty where none did
    std::string name;        // the device by name (analysis::device_name): "NVIDIA A100-SXM4-40GB", the CPU model
    std::string driver;      // the GPU driver's version its run recorded; empty for a CPU or where not recorded
    std::vector<std::int64_t> run_ids;    // the runs its figures come from, in store order
    std::vector<std::string> frameworks;  // each backend with its version as stored: "onnxruntime 1.17.1"
    // Benchmarks measured again in a later run of the same side: the later run's figures are shown.
    std::size_t superseded = 0;
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
    // The run a side's figures come from (its latest where several), for its environment.
    const store::RunRecord& run_of(std::size_t side) const;
    // The id of the run a row's figures on a side come from; 0 where that side did not measure it.
    std::int64_t run_id(const ComparisonRow& row, std::size_t side) const;
    // Whether the sides are more than one host, or more than one GPU: a fleet's columns.
    bool spans_hosts_or_gpus() const;
};

// The device a benchmark ran on, for people: the GPU's name (from the imported log or the run's
// environment, gpus.devices[].name) for cuda devices, the CPU model for cpu, else the device string;
// " @ host" where the name alone says nothing about the machine (no GPU name found).
std::string device_label(const store::RunRecord& run, const analysis::BenchmarkSummary& benchmark);

// Sides are the (source, host, device, device name) that measured something (status ok): within one source of
// several runs, the runs of one host's device make one side, and a benchmark measured in several of them shows
// the latest run's figures (ComparisonSide::superseded counts them). Labels made unique by the host, then the
// database index or run, then the device. `baseline`: empty (the first side), a 1-based database index
// ("2": the first side of the second --db), or text matching one side's device or label (case
// insensitive, a part of the label or of the side's host suffices if only one side matches). Throws UserError otherwise,
// and when no side measured anything.
Comparison build_comparison(std::vector<ComparisonSource> sources, const std::string& baseline);

// Side by side, one row per benchmark key, columns per side "[n] mean", "[n] inf/s", "[n] x", "[n] W",
// "[n] J/inf" (mJ where every value is below 1 J), "[n] inf/J", "[n] eff x" (x: throughput relative to the
// baseline; eff x: inferences per joule relative to the baseline), "[n] verdict" (report/verdict.hpp, against
// the baseline) and a generative row's TTFT and TPOT verdicts; then "settings differ": the sides whose cell ran
// under other settings than the reference's (settings_differences). Where any side measured power, a side
// that measured the row without it says "not measured" in W, J/inf and inf/J. For terminals and Markdown.
Table comparison_table(const Comparison& comparison);
// One row per benchmark key and side, for CSV and JSON: with the side's host, device name, driver and the
// backend's version, and the settings its cell differs in (empty where none).
Table comparison_long_table(const Comparison& comparison);
// "[1] NVIDIA H200 (cuda:0): h200.db run 3 on gpu01, driver 550.54.15, torch 2.3.0, baseline" one line per side
// (several runs: "runs 3, 5"; a GPU whose driver the run did not record: "driver not recorded").
std::vector<std::string> comparison_legend(const Comparison& comparison);
// One row per side: its number, label, device, host, device name, driver, frameworks, database and runs (the
// legend as a table, for the report's workbook and page).
Table comparison_sides_table(const Comparison& comparison);

// The settings a row's cell on `side` ran under that differ from the reference's: the baseline's where it measured
// the row, else the first side's that did: "duration 2s ([1] 10s)". Empty where they agree, for the reference
// itself, and where the side did not measure the row. The settings: duration, warm-up, iteration limits, measure
// conditions, stopping criterion, repeats, load scenario, and whether it ran alone or beside other devices' work.
std::vector<std::string> settings_differences(const Comparison& comparison, const ComparisonRow& row, std::size_t side);

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
