#include "report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/generation_plots.hpp"

namespace inferbench::report {
namespace {

std::string number(double value) { return fmt::format("{:.17g}", value); }

// The y range, and the y label saying where the axis starts where that is not zero.
std::string y_axis(const Figure& figure) {
    std::vector<double> values;
    for (const auto& line : figure.lines)
        for (const auto& p : line.points)
            if (std::isfinite(p.value)) values.push_back(p.value);
    std::string label = figure.y_label;
    if (values.empty()) return "set ylabel " + gnuplot_quote(label) + "\n";
    AxisRange range = fitted_range(values);
    if (figure.y_from_zero && range.low > 0) range = {0, range.high, ""};
    if (!range.note.empty()) label += "; " + range.note;
    return fmt::format("set ylabel {}\nset yrange [{}:{}]\n", gnuplot_quote(label), number(range.low),
                       number(range.high));
}

std::string plot_style(const Line& line) {
    if (line.points.size() == 1) return line.dashed ? "with points pt 6 ps 1.2" : "with points pt 7 ps 1.2";
    if (line.dashed) return "with lines lw 1.5 dt 2";
    return line.markers ? "with linespoints lw 1.5 pt 7 ps 1" : "with lines lw 1.5";
}

std::optional<double> mean_latency(const analysis::BenchmarkSummary& summary) {
    for (const auto& metric : batch_metrics())
        if (metric.key == "mean-latency") return metric.value(summary);
    return std::nullopt;
}

std::vector<double> batch_tics(const ReportGroup& group) {
    std::set<double> sizes;
    for (const auto& b : group.benchmarks) sizes.insert(static_cast<double>(b.summary.benchmark.batch_size));
    return {sizes.begin(), sizes.end()};
}

}  // namespace

Figure make_figure(std::string stem, std::string title, std::string x_label, std::string y_label) {
    Figure figure;
    figure.stem = std::move(stem);
    figure.title = std::move(title);
    figure.x_label = std::move(x_label);
    figure.y_label = std::move(y_label);
    return figure;
}

// Milliseconds read badly as 0.00003: a figure whose every value is below 1 ms is drawn in us or ns.
void readable_ms(Figure& figure, bool x_axis) {
    double largest = 0;
    for (const auto& line : figure.lines)
        for (const auto& p : line.points) largest = std::max(largest, std::abs(x_axis ? p.t_s : p.value));
    if (largest >= 1 || largest == 0) return;
    const double scale = largest < 1e-3 ? 1e6 : 1e3;
    const auto rescale = [&](Point& p) { (x_axis ? p.t_s : p.value) *= scale; };
    for (auto& line : figure.lines) std::for_each(line.points.begin(), line.points.end(), rescale);
    for (auto& label : figure.point_labels) rescale(label.first);
    std::string& axis_label = x_axis ? figure.x_label : figure.y_label;
    if (const auto at = axis_label.rfind("(ms)"); at != std::string::npos)
        axis_label.replace(at, 4, scale == 1e6 ? "(ns)" : "(us)");
}

// One gnuplot program for every figure in every format: the data once as datablocks, then per image a
// reset and its own settings. Earlier files of the same names are removed, so that what exists
// afterwards was drawn now.
ReportFiles draw_figures(const std::vector<Figure>& figures, const std::filesystem::path& dir, const PlotOptions& options) {
    ReportFiles files;
    std::vector<OutputFile> outputs;
    std::string script;
    std::vector<std::vector<std::string>> blocks;
    std::size_t block_count = 0;
    for (const auto& figure : figures) {
        auto& names = blocks.emplace_back();
        for (const auto& line : figure.lines) {
            DataBlock block{fmt::format("d{}", block_count++), {}};
            block.rows.reserve(line.points.size());
            for (const auto& p : line.points) block.rows.push_back({p.t_s, p.value});
            script += gnuplot_datablock(block);
            names.push_back(block.name);
        }
    }
    for (std::size_t f = 0; f < figures.size(); ++f) {
        const Figure& figure = figures[f];
        for (const auto format : options.formats) {
            const auto output = dir / fmt::format("{}.{}", figure.stem, extension(format));
            std::error_code ignored;
            std::filesystem::remove(output, ignored);
            files.written.push_back(output);
            outputs.emplace_back(output);
            script += "reset\n" + gnuplot_terminal(format, options.size, outputs.back().staging_path());
            script += "set title " + gnuplot_quote(figure.title) + "\n";
            script += "set xlabel " + gnuplot_quote(figure.x_label) + "\n";
            script += y_axis(figure);
            // Points off the frame, so that none sits on an axis (y: fitted_range leaves the margin).
            script += "set grid\nset key below\nset offsets graph 0.04, graph 0.04, 0, 0\n";
            if (figure.log2_x) script += "set logscale x 2\n";
            if (!figure.x_tics.empty()) {
                std::vector<std::string> tics;
                for (const double x : figure.x_tics) tics.push_back(number(x));
                script += "set xtics (" + join(tics, ", ") + ")\n";
            }
            for (const auto& [at, text] : figure.point_labels)
                script += fmt::format("set label {} at {},{} offset char 0.6,0.6\n", gnuplot_quote(text),
                                      number(at.t_s), number(at.value));
            std::vector<std::string> plots;
            // Each line its own colour (gnuplot's linetype 1, 2, ...), a bound the colour of the line before it.
            int colour = 0;
            for (std::size_t l = 0; l < figure.lines.size(); ++l) {
                if (!figure.lines[l].dashed || colour == 0) ++colour;
                plots.push_back(fmt::format("${} using 1:2 {} lt {} title {}", blocks[f][l], plot_style(figure.lines[l]),
                                            colour, gnuplot_quote(figure.lines[l].title)));
            }
            script += "plot " + join(plots, ", \\\n     ") + "\n";
        }
    }
    script += "unset output\n";
    run_gnuplot(script, outputs, 120'000);
    return files;
}

std::vector<Point> thinned(std::vector<Point> points, std::size_t max_points, std::string& note) {
    if (points.size() <= max_points || max_points == 0) return points;
    const double span = points.back().t_s - points.front().t_s;
    const double bucket = span / static_cast<double>(max_points);
    note = fmt::format(" (means of {})", format_latency(s_to_ns(bucket)));
    return resample(points, bucket);
}

AxisRange fitted_range(const std::vector<double>& values) {
    if (values.empty()) return {};
    const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
    const double lo = *lo_it, hi = *hi_it;
    const double magnitude = std::max(std::abs(lo), std::abs(hi));
    const double span = std::max(hi - lo, 0.1 * magnitude);
    const double middle = (lo + hi) / 2;
    AxisRange range{middle - span * 0.56, middle + span * 0.56, ""};  // the span plus 6% on either side
    if (magnitude == 0) return {-1, 1, ""};
    if (lo >= 0 && range.low <= 0) range.low = 0;
    if (hi <= 0 && range.high >= 0) range.high = 0;
    if (range.low > 0) range.note = fmt::format("axis from {:.4g}, not 0", range.low);
    if (range.high < 0) range.note = fmt::format("axis up to {:.4g}, not 0", range.high);
    return range;
}

ReportFiles write_group_plots(const ReportGroup& group, const std::filesystem::path& dir, const PlotOptions& options) {
    std::vector<Figure> figures;
    for (const auto& metric : time_metrics()) {
        Figure figure =
            make_figure(fmt::format("{}-over-time-{}", metric.key, group.key),
                        fmt::format("{} over time, {}", metric.title, group.title),
                        time_axis_label(group.clock_from_zero), fmt::format("{} ({})", metric.title, metric.unit));
        for (const auto& b : group.benchmarks) {
            std::string note;
            auto points = thinned(metric.points(b), options.max_points_per_line, note);
            // A few samples (telemetry at 10 Hz) show as marked points on their line.
            const bool markers = points.size() <= 200;
            if (!points.empty()) figure.lines.push_back({b.label + note, std::move(points), markers});
        }
        if (metric.unit == "ms") readable_ms(figure, false);
        if (!figure.lines.empty()) figures.push_back(std::move(figure));
    }
    for (const auto& metric : batch_metrics()) {
        Figure figure = make_figure(fmt::format("{}-vs-batch-{}", metric.key, group.key),
                                    fmt::format("{} against batch size, {}", metric.title, group.title), "batch size",
                                    fmt::format("{} ({})", metric.title, metric.unit));
        figure.log2_x = true;
        figure.y_from_zero = metric.key == "throughput";
        figure.x_tics = batch_tics(group);
        Line line{std::string(metric.title), {}, true};
        for (const auto& b : group.benchmarks) {
            if (const auto value = metric.value(b.summary))
                line.points.push_back({static_cast<double>(b.summary.benchmark.batch_size), *value});
        }
        if (line.points.empty()) continue;
        figure.lines.push_back(std::move(line));
        if (metric.unit == "ms") readable_ms(figure, false);
        figures.push_back(std::move(figure));
    }
    if (auto per_token = per_token_latency_figure(group, options)) figures.push_back(std::move(*per_token));
    if (figures.empty()) return {{}, {fmt::format("figures of {}: nothing measured", group.key)}};
    return draw_figures(figures, dir, options);
}

ReportFiles write_throughput_latency_plots(const std::vector<BenchmarkGroup>& groups,
                                           const std::vector<analysis::BenchmarkSummary>& summaries,
                                           const std::filesystem::path& dir, const PlotOptions& options) {
    std::map<std::int64_t, const analysis::BenchmarkSummary*> by_id;
    for (const auto& s : summaries) by_id[s.benchmark.benchmark_id] = &s;
    std::vector<Figure> figures;
    std::map<std::string, std::size_t> family_figure;
    ReportFiles files;
    for (const auto& group : groups) {
        auto [it, added] = family_figure.try_emplace(group.family_key, figures.size());
        if (added) {
            figures.push_back(make_figure("throughput-vs-latency-" + group.family_key,
                                          "throughput against mean latency, " + group.family_title, "mean latency (ms)",
                                          "throughput (inferences/s)"));
            figures.back().y_from_zero = true;
        }
        Figure& figure = figures[it->second];
        Line line{group.series_title, {}, true};
        for (const auto& record : group.benchmarks) {
            const auto found = by_id.find(record.benchmark_id);
            if (found == by_id.end()) continue;
            const auto latency = mean_latency(*found->second);
            const double throughput = found->second->throughput_per_s;
            if (!latency || throughput <= 0) continue;
            line.points.push_back({*latency, throughput});
            figure.point_labels.push_back({line.points.back(), fmt::format("b{}", record.batch_size)});
        }
        if (!line.points.empty()) figure.lines.push_back(std::move(line));
    }
    std::vector<Figure> drawable;
    for (auto& figure : figures) {
        readable_ms(figure, true);
        if (figure.lines.empty()) {
            files.skipped.push_back(fmt::format("{}: no benchmark with both latency and throughput", figure.stem));
        } else {
            drawable.push_back(std::move(figure));
        }
    }
    if (!drawable.empty()) files.add(draw_figures(drawable, dir, options));
    return files;
}

}  // namespace inferbench::report
