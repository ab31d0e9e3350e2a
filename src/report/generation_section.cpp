#include "report/generation_section.hpp"

#include "report/generation_plots.hpp"
#include "report/report_charts.hpp"

namespace inferbench::report {

Chart figure_chart(const Figure& figure) {
    Chart chart{.title = figure.title, .x_label = figure.x_label, .y_label = figure.y_label};
    chart.x_log = figure.log2_x;
    chart.log_base = 2;
    for (const auto& line : figure.lines) {
        ChartSeries series{.label = line.title};
        for (const auto& p : line.points) {
            series.x.push_back(p.t_s);
            series.y.push_back(p.value);
        }
        if (line.points.size() == 1) series.type = ChartType::points;  // no line through one point
        if (line.markers) chart.type = ChartType::points;                // lines with their points marked
        series.dashed = line.dashed;
        chart.series.push_back(std::move(series));
    }
    return chart;
}

void add_per_token_chart(std::vector<Chart>& charts, const ReportGroup& group) {
    PlotOptions options;
    options.max_points_per_line = kMaxChartPoints;
    if (auto figure = per_token_latency_figure(group, options)) charts.push_back(figure_chart(*figure));
}

void generation_section(HtmlPage& page, std::span<const GenerationRow> rows) {
    if (rows.empty()) return;
    page.open_section("Generation", "generation");
    page.paragraph(
        "One row per generative cell (a decoder generating output tokens after a prefill of its input tokens; "
        "repeats combined). Hover a column heading for its definition, or open Definitions below. Durations are "
        "per generation (TTFT, TPOT, e2e) or per decode step (ITL); a figure a cell cannot have says why "
        "(not defined, not measured, unknown), never 0.",
        "hint");
    const Table table = generation_report_table(rows);
    page.table(page_columns(table));
    page.open_details("Definitions");
    std::vector<std::pair<std::string, std::string>> definitions;
    add_column_definitions(definitions, table);
    close_with_definitions_and_figures(page, definitions, generation_figures(rows));
}

void close_with_definitions_and_figures(HtmlPage& page,
                                        const std::vector<std::pair<std::string, std::string>>& definitions,
                                        const std::vector<Figure>& figures) {
    page.definition_list(definitions);
    page.close_details();
    if (!figures.empty()) {
        page.raw("<div class=\"charts\">\n");
        for (const auto& figure : figures) page.chart(figure_chart(figure));
        page.raw("</div>\n");
    }
    page.close_section();
}

}  // namespace inferbench::report
