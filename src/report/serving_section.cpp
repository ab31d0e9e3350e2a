#include "report/serving_section.hpp"

#include <algorithm>

#include "report/generation_section.hpp"
#include "report/serving_plots.hpp"

namespace inferbench::report {
namespace {

// The table without the columns for files: the workbook has them all.
Table page_columns(const Table& table) {
    Table shown;
    shown.name = table.name;
    std::vector<std::size_t> kept;
    for (std::size_t c = 0; c < table.columns.size(); ++c)
        if (!table.columns[c].export_only) kept.push_back(c);
    for (const auto c : kept) shown.columns.push_back(table.columns[c]);
    for (const auto& row : table.rows) {
        auto& cells = shown.rows.emplace_back();
        for (const auto c : kept) cells.push_back(row[c]);
    }
    return without_empty_columns(std::move(shown));
}

void add_definitions(std::vector<std::pair<std::string, std::string>>& definitions, const Table& table) {
    for (const auto& column : table.columns) {
        if (column.hint.empty()) continue;
        const auto same = std::find_if(definitions.begin(), definitions.end(),
                                       [&](const auto& d) { return d.second == column.hint; });
        if (same == definitions.end()) definitions.emplace_back(column.title, column.hint);
        else if (same->first.find(column.title) == std::string::npos) same->first += ", " + column.title;
    }
}

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
    add_definitions(definitions, table);
    if (!views.empty()) {
        const Table sweep = sweep_table(views);
        page.heading(3, "Sweeps");
        page.list(sweep_statements(views));
        page.table(without_empty_columns(sweep));
        add_definitions(definitions, sweep);
    }
    page.open_details("Definitions");
    page.definition_list(definitions);
    page.close_details();
    const auto figures = serving_figures(views);
    if (!figures.empty()) {
        page.raw("<div class=\"charts\">\n");
        for (const auto& figure : figures) page.chart(figure_chart(figure));
        page.raw("</div>\n");
    }
    page.close_section();
}

}  // namespace inferbench::report
