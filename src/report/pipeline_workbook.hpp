// pipeline.xlsx, written only where the selection has pipeline cells:
//   "Pipeline"     one row per pipeline cell (pipeline_rows.hpp's pipeline table, keys with their units)
//   "Stages"       one row per stage of each cell (pipeline_rows.hpp's stage table): the stacked bar's data
//   "Breakdown"    one row per cell, one column per stage and the time between stages, ms per batch
//                  (pipeline_plots.hpp's StageBreakdown): what a stacked bar chart is drawn from in a spreadsheet
//   "Definitions"  what each column means, and that the workbook has no stacked bar chart: the workbook writer
//                  (xlsx_writer) draws scatter charts only; the bars are pipeline-stages.png/.svg and the HTML page's
// Values a cell does not have are written as text ("not measured", "unknown", "on the GPU"), never as 0.
#pragma once

#include <filesystem>
#include <span>

#include "analysis/summary.hpp"
#include "report/report_data.hpp"

namespace inferbench::report {

// Writes DIR/pipeline.xlsx where `summaries` has a pipeline cell; else removes an earlier report's file of that
// name and writes nothing.
ReportFiles pipeline_workbook_files(std::span<const analysis::BenchmarkSummary> summaries,
                                    const std::filesystem::path& dir);

}  // namespace inferbench::report
