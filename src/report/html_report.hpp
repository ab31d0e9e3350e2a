// The HTML report: one self-contained page (html_page.hpp) with the findings, the runs and their environments, a
// sortable overview of every benchmark, warnings and failure reasons, each benchmark on its device's
// roofline (roofline_view.hpp), then per (device, model,
// backend, precision) interactive charts of every time series (latency per iteration, GPU power,
// clocks, temperature, utilisation, memory, CPU and RSS, imported traces) and of the batch sweep.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "analysis/roofline_placement.hpp"
#include "findings/finding.hpp"
#include "report/comparison.hpp"
#include "report/generation_rows.hpp"
#include "report/serving_rows.hpp"
#include "report/html_page.hpp"
#include "report/report_data.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// The charts of one group of benchmarks (selection.hpp's grouping), under its title.
struct ChartGroup {
    std::string title;
    std::vector<Chart> charts;
};

// The roofline section's content: the placed benchmarks, or why there are none.
struct RooflineSection {
    analysis::RooflineSet set;
    std::string unavailable;                      // why no roofline could be computed (e.g. a broken devices file)
    std::vector<analysis::LayerSet> layers = {};  // of the benchmarks with stored per-layer times
};

// The roofline of the summarized benchmarks (analysis/roofline_placement.hpp, with the store's runs,
// probes and layer times). A devices file that cannot be read costs the section, not the report: then
// `unavailable` says why.
RooflineSection roofline_section(const store::ResultsStore& results,
                                 std::span<const analysis::BenchmarkSummary> summaries);

// The page, from already loaded data: the findings (report/findings_section.hpp), runs and
// environments, the overview table, warnings and failures, the roofline (where any benchmark could be
// placed or was skipped), then the chart groups.
// `generation`: the generative cells (generation_rows.hpp), shown in their own section after the overview.
// `side_by_side`: several hosts' or GPUs' cells side by side (fleet_comparison.hpp), right after the overview.
std::string render_html_report(const ReportSelection& selection, const std::vector<ChartGroup>& groups,
                               const RooflineSection& roofline = {}, const std::vector<findings::Finding>& found = {},
                               std::span<const GenerationRow> generation = {}, std::span<const SweepView> sweeps = {},
                               const Comparison* side_by_side = nullptr);

// The same page written to `file` as it is made, the groups' charts copied from `charts` (drawn as each group
// was read): neither the charts nor the page are ever all in memory.
void write_html_report(const std::filesystem::path& file, const ReportSelection& selection, const ChartSpool& charts,
                       const RooflineSection& roofline, const std::vector<findings::Finding>& found,
                       std::span<const GenerationRow> generation, std::span<const SweepView> sweeps,
                       const Comparison* side_by_side = nullptr);

// Writes the page of the selected benchmarks alone to `file` (usually DIR/report.html): load_selection,
// each group's charts, the roofline section and the findings. `inferbench report` writes it with its other outputs from
// the same selection (report_writer.hpp).
void write_html_report(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                       const std::filesystem::path& file, const std::vector<findings::Finding>& found = {});

}  // namespace inferbench::report
