#include "report/pipeline_plots.hpp"

#include <algorithm>
#include <array>
#include <system_error>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/gnuplot.hpp"
#include "report/pipeline_rows.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kBetween = "between stages";

std::string cell_name(const analysis::BenchmarkSummary& s) {
    const auto& b = s.benchmark;
    return fmt::format("#{} {} {} {} b{} {}", b.benchmark_id, b.model, b.backend, b.device, b.batch_size,
                       pipeline_setup(*s.pipeline));
}

// The gnuplot data: one row per cell, one column per segment (rowstacked histogram), the cells' names as x tics.
std::string breakdown_script(const StageBreakdown& d) {
    DataBlock block{"stages", d.ms};
    std::string script = gnuplot_datablock(block);
    std::vector<std::string> tics, plots;
    for (std::size_t i = 0; i < d.cells.size(); ++i) tics.push_back(fmt::format("{} {}", gnuplot_quote(d.cells[i]), i));
    for (std::size_t k = 0; k < d.segments.size(); ++k)
        plots.push_back(fmt::format("{} using {} title {}", k == 0 ? "$stages" : "''", k + 1, gnuplot_quote(d.segments[k])));
    script += "set title 'Pipeline stages: mean time per batch'\nset ylabel 'ms per batch'\nset yrange [0:*]\n";
    script += "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 border -1\n";
    script += "set boxwidth 0.6\nset key outside right\nset grid ytics\nset xtics rotate by -20\n";
    script += "set xtics (" + join(tics, ", ") + ")\n";
    script += "plot " + join(plots, ", ") + "\n";
    return script;
}

}  // namespace

StageBreakdown stage_breakdown(std::span<const analysis::BenchmarkSummary> summaries) {
    StageBreakdown d;
    std::array<bool, std::size(kPipelineStages)> present{};
    for (const auto& s : summaries)
        if (is_pipeline(s))
            for (const auto& f : s.pipeline->stages) present[static_cast<std::size_t>(f.stage)] = true;
    std::vector<PipelineStage> stages;
    for (const auto stage : kPipelineStages)
        if (present[static_cast<std::size_t>(stage)]) {
            stages.push_back(stage);
            d.segments.emplace_back(to_string(stage));
        }
    d.segments.emplace_back(kBetween);
    for (const auto& s : summaries) {
        if (!is_pipeline(s)) continue;
        const auto& p = *s.pipeline;
        std::vector<double> row;
        for (const auto stage : stages) {
            const auto* f = p.stage(stage);
            row.push_back(f ? ns_to_ms(f->mean_ns) : 0.0);
        }
        row.push_back(ns_to_ms(p.e2e.mean * p.between_stages_pct / 100));
        d.cells.push_back(cell_name(s));
        d.ms.push_back(std::move(row));
    }
    if (d.cells.empty()) d.segments.clear();
    return d;
}

// uPlot draws no stacks: each series is the running sum up to its segment, drawn from the whole bar down, so each
// shorter bar covers the one before it and what shows of each is its own segment.
Chart stage_breakdown_chart(const StageBreakdown& d) {
    Chart chart{.title = "Pipeline stages: mean time per batch (stacked)",
                .x_label = "cell",
                .y_label = "ms per batch",
                .type = ChartType::stacked_bars,
                .categories = d.cells};
    std::vector<std::vector<double>> running(d.segments.size(), std::vector<double>(d.cells.size(), 0.0));
    for (std::size_t c = 0; c < d.cells.size(); ++c) {
        double sum = 0;
        for (std::size_t k = 0; k < d.segments.size(); ++k) running[k][c] = sum += d.ms[c][k];
    }
    std::vector<double> x(d.cells.size());
    for (std::size_t c = 0; c < x.size(); ++c) x[c] = static_cast<double>(c);
    for (std::size_t k = d.segments.size(); k-- > 0;)
        chart.series.push_back({.label = k + 1 == d.segments.size() ? "e2e (all stages + " + d.segments[k] + ")"
                                                                    : "up to " + d.segments[k],
                                .x = x,
                                .y = running[k]});
    return chart;
}

ReportFiles write_pipeline_plots(std::span<const analysis::BenchmarkSummary> summaries,
                                 const std::filesystem::path& dir, const PlotOptions& options) {
    ReportFiles files;
    const StageBreakdown d = stage_breakdown(summaries);
    if (d.cells.empty()) return files;
    std::vector<OutputFile> outputs;
    outputs.reserve(options.formats.size());
    std::string script;
    for (const auto format : options.formats) {
        const auto output = dir / fmt::format("pipeline-stages.{}", extension(format));
        std::error_code ignored;
        std::filesystem::remove(output, ignored);
        outputs.emplace_back(output);
        files.written.push_back(output);
        script += "reset\n" + gnuplot_terminal(format, options.size, outputs.back().staging_path());
        script += breakdown_script(d);
    }
    run_gnuplot(script, outputs);
    return files;
}

}  // namespace inferbench::report
