#include "report/serving_section.hpp"

#include "report/generation_section.hpp"
#include "report/serving_plots.hpp"

namespace inferbench::report {
namespace {

}  // namespace

void serving_section(HtmlPage& page, std::span<const analysis::BenchmarkSummary> summaries,
                     std::span<const SweepView> views) {
    const Table table = serving_table(summaries);
    if (table.rows.empty()) return;
    page.open_section("Serving", "serving");
    page.paragraph(
        "One row per serving cell (an OpenAI-compatible server measured from the client: every streamed chunk "
        "timestamped on arrival). Hover a column heading for its definition, or open Definitions below. Latencies are "
        "per ok request, TTFT and end-to-end from the request's scheduled time; failed requests count against "
        "goodput; a figure a cell cannot have says why (not defined, not measured, unknown, no SLOs), never 0.",
        "hint");
    page.table(page_columns(table));
    std::vector<std::pair<std::string, std::string>> definitions;
    add_column_definitions(definitions, table);
    if (!views.empty()) {
        const Table sweep = sweep_table(views);
        page.heading(3, "Sweeps");
        page.list(sweep_statements(views));
        page.table(without_empty_columns(sweep));
        add_column_definitions(definitions, sweep);
    }
    page.open_details("Definitions");
    close_with_definitions_and_figures(page, definitions, serving_figures(views));
}

}  // namespace inferbench::report
