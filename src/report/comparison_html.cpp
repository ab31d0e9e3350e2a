// The comparison as an HTML page: the same machinery (html_page.hpp) as the report.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "core/version.hpp"
#include "report/comparison.hpp"
#include "report/html_page.hpp"

namespace inferbench::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void sides_part(HtmlPage& page, const Comparison& comparison) {
    page.open_section("Devices", "devices");
    for (std::size_t i = 0; i < comparison.sides.size(); ++i) {
        const auto& side = comparison.sides[i];
        const auto& source = comparison.sources[side.source];
        const auto& run = comparison.run_of(i);
        std::vector<std::string> runs;
        for (const auto id : side.run_ids) runs.push_back(std::to_string(id));
        page.heading(3, fmt::format("[{}] {}{}", i + 1, side.label, i == comparison.baseline ? " (baseline)" : ""));
        std::vector<std::pair<std::string, std::string>> entries = {{"device", side.device},
                                                                    {"device name", side.name},
                                                                    {"host", side.host}};
        if (side.device.starts_with("cuda"))
            entries.emplace_back("driver", side.driver.empty() ? "not recorded" : side.driver);
        entries.insert(entries.end(), {{"frameworks", join(side.frameworks, ", ")},
                                       {"results", source.db},
                                       {runs.size() == 1 ? "run" : "runs", join(runs, ", ")},
                                       {"started", format_utc(run.started_unix_ms)},
                                       {"git commit", run.git_commit},
                                       {"inferbench version", run.inferbench_version}});
        page.definition_list(entries);
        const auto environment = nlohmann::json::parse(run.environment_json, nullptr, false);
        if (environment.is_object() && !environment.empty()) {
            page.open_details(fmt::format("Environment of run {} in {}", run.run_id, source.db));
            page.definition_list(json_entries(environment));
            page.close_details();
        }
    }
    page.close_section();
}

using Family = std::tuple<std::string, std::string, std::string>;  // model, backend, variant

// Per model (backend, options): bars per device over "precision, batch", for one figure.
void bar_charts(HtmlPage& page, const Comparison& comparison) {
    std::map<Family, std::vector<const ComparisonRow*>> families;
    for (const auto& row : comparison.rows) {
        const auto& [model, backend, variant, precision, batch] = row.key;
        families[{model, backend, variant}].push_back(&row);
    }
    struct Figure {
        const char* title;
        const char* unit;
        double (*value)(const analysis::BenchmarkSummary&);
    };
    const Figure figures[] = {
        {"Throughput", "inferences/s",
         [](const analysis::BenchmarkSummary& s) { return s.throughput_per_s > 0 ? s.throughput_per_s : kNaN; }},
        {"Energy efficiency", "inferences/J",
         [](const analysis::BenchmarkSummary& s) { return s.telemetry.inferences_per_joule.value_or(kNaN); }},
    };
    for (const auto& [family, rows] : families) {
        const auto& [model, backend, variant] = family;
        page.open_section(fmt::format("{} · {}{}", model, backend, variant.empty() ? "" : " · " + variant));
        page.raw("<div class=\"charts\">\n");
        for (const auto& figure : figures) {
            Chart chart{.title = figure.title,
                        .x_label = "precision, batch size",
                        .y_label = figure.unit,
                        .type = ChartType::bars};
            for (const auto* row : rows)
                chart.categories.push_back(fmt::format("{} b{}", std::get<3>(row->key), std::get<4>(row->key)));
            bool any = false;
            for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
                ChartSeries series{.label = fmt::format("[{}] {}", side + 1, comparison.sides[side].label)};
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    const auto* s = comparison.at(*rows[i], side);
                    series.x.push_back(static_cast<double>(i));
                    series.y.push_back(s ? figure.value(*s) : kNaN);
                    any = any || std::isfinite(series.y.back());
                }
                chart.series.push_back(std::move(series));
            }
            if (any) page.chart(chart);
        }
        page.raw("</div>\n");
        page.close_section();
    }
}

bool is_empty(const Cell& cell) {
    const auto* text = std::get_if<std::string>(&cell);
    return std::holds_alternative<Null>(cell) || (text && text->empty());
}

// The side-by-side table with each side's verdict right after the columns that name the row (model to
// batch size): with every side's figures a row is wider than a screen, and the verdict is what it says.
// A verdict column without any verdict (the baseline's) is left out.
Table verdicts_first(Table table) {
    const auto is_verdict = [](const Column& c) { return c.key.ends_with("_verdict"); };
    const auto has_values = [&](std::size_t column) {
        return std::any_of(table.rows.begin(), table.rows.end(),
                           [&](const auto& row) { return column < row.size() && !is_empty(row[column]); });
    };
    const auto batch =
        std::find_if(table.columns.begin(), table.columns.end(), [](const Column& c) { return c.key == "batch_size"; });
    if (batch == table.columns.end()) return table;
    const auto first = static_cast<std::size_t>(batch - table.columns.begin()) + 1;
    std::vector<std::size_t> order(first);
    for (std::size_t i = 0; i < first; ++i) order[i] = i;
    for (std::size_t i = first; i < table.columns.size(); ++i)
        if (is_verdict(table.columns[i]) && has_values(i)) order.push_back(i);
    for (std::size_t i = first; i < table.columns.size(); ++i)
        if (!is_verdict(table.columns[i])) order.push_back(i);
    Table out{.name = table.name, .columns = {}, .rows = {}};
    for (const std::size_t i : order) out.columns.push_back(table.columns[i]);
    for (const auto& row : table.rows) {
        auto& cells = out.rows.emplace_back();
        for (const std::size_t i : order) cells.push_back(i < row.size() ? row[i] : Cell{Null{}});
    }
    return out;
}

}  // namespace

std::string render_comparison_html(const Comparison& comparison) {
    std::vector<std::string> labels;
    for (const auto& side : comparison.sides) labels.push_back(side.label);
    std::string title = "inferbench compare: ";
    for (std::size_t i = 0; i < labels.size(); ++i) title += (i ? " vs " : "") + labels[i];
    HtmlPage page(title);
    sides_part(page, comparison);
    if (const auto warnings = comparison_warnings(comparison); !warnings.empty()) {
        page.open_section("Warnings", "warnings");
        page.list(warnings);
        page.close_section();
    }
    page.open_section("Side by side", "comparison");
    page.paragraph(fmt::format("[n] verdict: side n against the baseline [{}]; [n] x: throughput relative to the "
                               "baseline; [n] eff x: inferences per joule relative to the baseline. Click a column "
                               "heading to sort.",
                               comparison.baseline + 1),
                   "hint");
    page.table(verdicts_first(comparison_table(comparison)));
    page.close_section();
    bar_charts(page, comparison);
    page.paragraph(fmt::format("Written by inferbench {} ({}). Charts: hover for values, drag to zoom, double-click to "
                               "reset.",
                               kVersion, kGitCommit),
                   "hint");
    return page.finish();
}

}  // namespace inferbench::report
