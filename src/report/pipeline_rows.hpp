// A report's pipeline cells (analysis/pipeline_summary) as the report shows them: the pipeline table (one row per
// cell: images/s, e2e per batch, the network's share, the GPU's idle time, the time between stages, the CPU stage
// that bounds throughput) and the stage table (one row per cell and stage: mean per batch, share of e2e, cores,
// CPU per image, the stage's bound). Every column carries its definition (Column::hint); a figure a cell does not
// have says why ("not measured", "unknown", "on the GPU"), never 0. The one source of `summary`'s pipeline tables,
// pipeline.md/csv/json, the Pipeline workbook sheet, the stacked bars (pipeline_plots.hpp) and the HTML page's
// Pipeline section.
#pragma once

#include <span>
#include <string>

#include "analysis/summary.hpp"
#include "report/table.hpp"

namespace inferbench::report {

bool is_pipeline(const analysis::BenchmarkSummary& summary);

// "cpu/cpu sequential": where pre- and post-processing ran and the mode; a part not known is "?".
std::string pipeline_setup(const analysis::PipelineSummary& pipeline);

// One row per pipeline cell of `summaries`; no rows where none is.
Table pipeline_table(std::span<const analysis::BenchmarkSummary> summaries);
// One row per stage of each pipeline cell, in the order a batch passes them.
Table pipeline_stage_table(std::span<const analysis::BenchmarkSummary> summaries);

}  // namespace inferbench::report
