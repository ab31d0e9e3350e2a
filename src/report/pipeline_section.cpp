#include "report/pipeline_section.hpp"

#include "report/generation_section.hpp"
#include "report/pipeline_plots.hpp"
#include "report/pipeline_rows.hpp"

namespace inferbench::report {

void pipeline_section(HtmlPage& page, std::span<const analysis::BenchmarkSummary> summaries) {
    const Table cells = pipeline_table(summaries);
    if (cells.rows.empty()) return;
    page.open_section("Pipeline", "pipeline");
    page.paragraph(
        "One row per image pipeline cell (decode, resize, normalise, infer, post-process, each stage timed per "
        "batch), then one row per stage. Hover a column heading for its definition. The stacked bar shows each "
        "stage's mean time per batch and the time between stages; a figure a cell cannot have says why (not "
        "measured, unknown, on the GPU), never 0.",
        "hint");
    page.table(page_columns(cells));
    const Table stages = pipeline_stage_table(summaries);
    page.heading(3, "Stages");
    page.table(page_columns(stages));
    page.chart(stage_breakdown_chart(stage_breakdown(summaries)));
    std::vector<std::pair<std::string, std::string>> definitions;
    add_column_definitions(definitions, cells);
    add_column_definitions(definitions, stages);
    page.open_details("Definitions");
    close_with_definitions_and_figures(page, definitions, {});
}

}  // namespace inferbench::report
