// The stage breakdown of a report's pipeline cells (analysis/pipeline_summary) as a stacked bar per cell: each
// stage's mean time per batch and the time between stages, stacked to the batch's mean e2e (more where stages of a
// batch overlap: the cell's notes say so). The same figures drawn by gnuplot (PNG and SVG, pipeline-stages.<ext>)
// and as the HTML page's chart.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "report/html_page.hpp"
#include "report/plots.hpp"

namespace inferbench::report {

struct StageBreakdown {
    std::vector<std::string> segments;        // the stages stored by any cell, in batch order, then "between stages"
    std::vector<std::string> cells;           // "#3 resnet50 onnxruntime cpu b8 cpu/cpu sequential"
    std::vector<std::vector<double>> ms;      // per cell, per segment: ms per batch (0 where the cell has no such stage)
};

// Nothing (no cells) where no summary is a pipeline cell's.
StageBreakdown stage_breakdown(std::span<const analysis::BenchmarkSummary> summaries);

// The HTML chart: one bar per cell, its segments stacked (ChartType::stacked_bars).
Chart stage_breakdown_chart(const StageBreakdown& breakdown);

// pipeline-stages.png / .svg in `dir`; nothing written without a pipeline cell.
ReportFiles write_pipeline_plots(std::span<const analysis::BenchmarkSummary> summaries,
                                 const std::filesystem::path& dir, const PlotOptions& options);

}  // namespace inferbench::report
