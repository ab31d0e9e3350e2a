// A report's generative benchmarks as the report draws them: each cell (its repeats combined) with its bounds, in
// series order; the generative table (generation_table.hpp) extended with the columns the figures draw and each
// column's definition, the one source of the Generation workbook (generation_workbook.hpp), the generation figures
// (generation_plots.hpp) and the HTML page's Generation section (generation_section.hpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/generation_bounds.hpp"
#include "analysis/summary.hpp"
#include "devices/catalog.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// One generative cell with its bounds under its device's roofs (none where unknown).
struct GenerationRow {
    analysis::BenchmarkSummary summary;  // summary.generation unset where it generated nothing whole (failed)
    std::optional<analysis::GenerationBounds> bounds;
};

// The generative cells of `summaries` (combined, analysis::combine_cells), each with its bounds
// (analysis::generation_bounds under `catalog`; none without a catalog), ordered by series (series_name), then
// output and input tokens, then batch size: each series' batch sweep is a run of adjacent rows.
std::vector<GenerationRow> generation_rows(const store::ResultsStore& results,
                                           std::span<const analysis::BenchmarkSummary> summaries,
                                           const std::optional<devices::Catalog>& catalog);

// What tells a row's series apart in the figures: "llama-tiny llamacpp fp32 cpu" (+ options, ", run 3").
std::string series_name(const store::BenchmarkRecord& benchmark, bool several_runs);
// The same with the lengths: "llama-tiny llamacpp fp32 cpu, in 128 out 16".
std::string series_with_lengths(const store::BenchmarkRecord& benchmark, bool several_runs);
bool several_runs(std::span<const GenerationRow> rows);

// generation_table's table of the rows, with the figures' columns after its own (e2e_p50_ms, tpot_floor_ms,
// decode_tokens_per_s_bound: "unknown" where the bound is) and every column that needs one defined (Column::hint):
// TTFT, TPOT, ITL, ... each with the other tools' word for it.
Table generation_report_table(std::span<const GenerationRow> rows);

// The bounds a row's figures draw; nothing where unknown.
std::optional<double> decode_tokens_per_s_bound(const GenerationRow& row);  // ceiling steps/s x batch
std::optional<double> tpot_floor_ns(const GenerationRow& row);              // 1 / ceiling steps/s
std::optional<double> ttft_floor_ns(const GenerationRow& row);

}  // namespace inferbench::report
