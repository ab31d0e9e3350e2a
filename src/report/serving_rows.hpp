// A report's serving cells (analysis/serving_metrics) as the report shows them: the serving table (one row per
// cell: requests by outcome, TTFT, TPOT, chunk gaps, tokens/s of the system and per user, goodput, MLPerf's verdict,
// tokens per joule) and the sweeps (analysis/serving_sweep: one row per load, each marked on the Pareto front, at
// the goodput knee, at the saturation point). Every column carries its definition (Column::hint); a figure a cell
// does not have says why ("unknown", "not measured", "no SLOs"), never 0. The one source of `summary`'s serving
// table, serving.md/csv/json, the Serving workbook (serving_workbook.hpp), the serving figures (serving_plots.hpp)
// and the HTML page's Serving section (serving_section.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "analysis/serving_sweep.hpp"
#include "analysis/summary.hpp"
#include "report/report_data.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// Whether a summary is a serving cell's: one with a serving summary or of the `openai` backend (a cell that stored
// no request is shown, saying so). A serving cell with token lengths is not in the generation table: its TTFT and
// TPOT are the serving table's, measured per request.
bool is_serving(const analysis::BenchmarkSummary& summary);

// The serving cells among `summaries`, in their order, with the GPUs each server used where stored (`gpus`, by
// benchmark id: server_metrics::kGpus); others unknown.
std::vector<analysis::ServingCell> serving_cells(std::span<const analysis::BenchmarkSummary> summaries,
                                                 const std::map<std::int64_t, std::int64_t>& gpus = {});

// The GPUs each serving server used where its benchmark stored them (server_metrics::kGpus), added to `gpus`.
void add_server_gpus(const ReportGroup& group, std::map<std::int64_t, std::int64_t>& gpus);

// One row per serving cell of `summaries`; no rows where none is.
Table serving_table(std::span<const analysis::BenchmarkSummary> summaries);

// A sweep with what is read from it, computed once.
struct SweepView {
    analysis::ServingSweep sweep;
    analysis::ParetoFront front;
    analysis::GoodputKnee knee;
    std::optional<analysis::Saturation> saturation;
};
std::vector<SweepView> sweep_views(std::span<const analysis::ServingCell> cells,
                                   double goodput_target = analysis::limits::kGoodputTarget);

// One row per point of every sweep, in sweep then load order: the points' figures and the marks.
Table sweep_table(std::span<const SweepView> views);

// What each sweep shows, a sentence each: its front, its knee (or why none) and its saturation point (or none).
std::vector<std::string> sweep_statements(std::span<const SweepView> views);

}  // namespace inferbench::report
