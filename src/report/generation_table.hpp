// The generative benchmarks of a report (analysis/generation_metrics: TTFT, TPOT, per-token latency, token rates,
// tokens per joule, peak memory; analysis/generation_bounds: the fraction of the decode bandwidth bound and of the
// TTFT floor) as one table, the one source of the Generation workbook (generation_workbook.hpp), the generation
// figures (generation_plots.hpp) and the HTML page's Generation section. Every column's definition is written once,
// here, as its hint (a heading's tooltip on the page, the workbook's Definitions).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/generation_bounds.hpp"
#include "analysis/summary.hpp"
#include "devices/catalog.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// What a cell shows where its bound cannot be known (no datasheet figure, no probe, no decoder facts).
inline constexpr std::string_view kUnknownText = "unknown";

// One generative cell (its repeats combined, analysis/repeats) with its bounds under its device's roofs.
struct GenerationRow {
    analysis::BenchmarkSummary summary;  // summary.generation is set
    std::optional<analysis::GenerationBounds> bounds;
};

// The cells of `summaries` (combined, analysis::combine_cells) that have generation metrics, each with its bounds
// (analysis::generation_bounds under `catalog`; none without a catalog), ordered by series (series_name), then
// output and input tokens, then batch size: each series' batch sweep is a run of adjacent rows.
std::vector<GenerationRow> generation_rows(const store::ResultsStore& results,
                                           std::span<const analysis::BenchmarkSummary> summaries,
                                           const std::optional<devices::Catalog>& catalog);

// What tells a row's series apart in the figures: "llama-tiny llamacpp fp32 cpu" (+ options, ", run 3").
std::string series_name(const store::BenchmarkRecord& benchmark, bool several_runs);
// The same with the lengths: "llama-tiny llamacpp fp32 cpu, in 128 out 16".
std::string series_with_lengths(const store::BenchmarkRecord& benchmark, bool several_runs);

// The Generation table: one row per GenerationRow, durations as Duration (ms in keys), figures a row cannot have
// as text (kNotDefinedText, kNotMeasuredText, kUnknownText), never as 0. Each column's hint defines it.
Table generation_table(std::span<const GenerationRow> rows);

// The best decode ceiling's and prefill floor's figures a row's figures draw as bounds; nothing where unknown.
std::optional<double> decode_tokens_per_s_bound(const GenerationRow& row);  // ceiling steps/s x batch
std::optional<double> tpot_floor_ns(const GenerationRow& row);              // 1 / ceiling steps/s
std::optional<double> ttft_floor_ns(const GenerationRow& row);

}  // namespace inferbench::report
