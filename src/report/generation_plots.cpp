#include "report/generation_plots.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/time_units.hpp"

namespace inferbench::report {
namespace {

// A figure's y value of a row and its bound, in the figure's unit; nothing where the row has none.
struct GenerationValue {
    const char* key;      // "ttft"
    const char* title;    // "p50 TTFT"
    const char* y_label;  // with its unit
    std::optional<double> (*value)(const GenerationRow& row);
    std::optional<double> (*bound)(const GenerationRow& row);
    const char* bound_name;
};

std::optional<double> ms(std::optional<double> ns) { return ns ? std::optional(ns_to_ms(*ns)) : std::nullopt; }

const GenerationValue kTtft{"ttft", "p50 TTFT", "p50 TTFT (ms)",
                            [](const GenerationRow& r) { return ms(r.summary.generation->ttft.ns.p50); },
                            [](const GenerationRow& r) { return ms(ttft_floor_ns(r)); }, "TTFT floor"};
const GenerationValue kTpot{"tpot", "p50 TPOT", "p50 TPOT (ms)",
                            [](const GenerationRow& r) {
                                const auto& tpot = r.summary.generation->tpot;
                                return tpot ? ms(tpot->ns.p50) : std::nullopt;
                            },
                            [](const GenerationRow& r) { return ms(tpot_floor_ns(r)); }, "TPOT floor"};
const GenerationValue kDecode{"decode-tokens-per-s", "decode tokens/s", "decode tokens/s",
                              [](const GenerationRow& r) { return r.summary.generation->decode_tokens_per_s; },
                              &decode_tokens_per_s_bound, "bandwidth bound"};

struct Axis {
    const char* key;    // "batch"
    const char* label;  // with its unit
    double (*x)(const store::BenchmarkRecord& b);
    // What a line holds besides the series: the other axis's value and the lengths not on this axis.
    std::string (*line_name)(const store::BenchmarkRecord& b, bool several_runs);
};

const Axis kBatchAxis{"batch", "batch size", [](const store::BenchmarkRecord& b) { return static_cast<double>(b.batch_size); },
                      &series_with_lengths};
const Axis kInputAxis{"input", "input tokens",
                      [](const store::BenchmarkRecord& b) { return static_cast<double>(b.input_tokens); },
                      [](const store::BenchmarkRecord& b, bool several_runs) {
                          return fmt::format("{}, batch {} out {}", series_name(b, several_runs), b.batch_size,
                                             b.output_tokens);
                      }};

// One measured line per series with, after each, its bound's line where every point of it has one.
std::optional<Figure> value_figure(std::span<const GenerationRow> rows, const GenerationValue& value, const Axis& axis) {
    Figure figure = make_figure(fmt::format("{}-vs-{}", value.key, axis.key),
                                fmt::format("{} against {}", value.title, axis.label), axis.label, value.y_label);
    figure.log2_x = true;
    figure.y_from_zero = std::string_view(value.key) == kDecode.key;
    std::vector<std::string> names;
    std::map<std::string, std::pair<Line, Line>> lines;  // measured, bound
    std::set<double> tics;
    const bool runs = several_runs(rows);
    for (const auto& row : rows) {
        if (!row.summary.generation) continue;  // it generated nothing whole
        const auto y = value.value(row);
        if (!y) continue;
        const auto& b = row.summary.benchmark;
        const std::string name = axis.line_name(b, runs);
        auto [it, added] = lines.try_emplace(name, Line{name, {}, true}, Line{fmt::format("{} ({})", name, value.bound_name), {}, false, true});
        if (added) names.push_back(name);
        const double x = axis.x(b);
        tics.insert(x);
        it->second.first.points.push_back({x, *y});
        if (const auto bound = value.bound(row)) it->second.second.points.push_back({x, *bound});
    }
    bool drawn = false;
    for (const auto& name : names) {
        auto& [measured, bound] = lines.at(name);
        const auto by_x = [](const Point& a, const Point& b) { return a.t_s < b.t_s; };
        std::sort(measured.points.begin(), measured.points.end(), by_x);
        std::sort(bound.points.begin(), bound.points.end(), by_x);
        drawn = drawn || measured.points.size() > 1;
        const bool bound_whole = bound.points.size() == measured.points.size();
        figure.lines.push_back(std::move(measured));
        if (bound_whole) figure.lines.push_back(std::move(bound));
    }
    if (!drawn) return std::nullopt;
    figure.x_tics.assign(tics.begin(), tics.end());
    if (std::string_view(value.y_label).ends_with("(ms)")) readable_ms(figure, false);
    return figure;
}

}  // namespace

std::vector<Figure> generation_figures(std::span<const GenerationRow> rows) {
    std::vector<Figure> figures;
    const std::pair<const GenerationValue*, const Axis*> drawn[] = {{&kTtft, &kBatchAxis}, {&kTpot, &kBatchAxis},
                                                                   {&kDecode, &kBatchAxis}, {&kTtft, &kInputAxis},
                                                                   {&kTpot, &kInputAxis}};
    for (const auto& [value, axis] : drawn)
        if (auto figure = value_figure(rows, *value, *axis)) figures.push_back(std::move(*figure));
    return figures;
}

std::optional<Figure> per_token_latency_figure(const ReportGroup& group, const PlotOptions& options) {
    Figure figure = make_figure(fmt::format("per-token-latency-{}", group.key),
                                fmt::format("per-token latency (each decode step) over the run, {}", group.title),
                                time_axis_label(group.clock_from_zero), "decode step duration (ms)");
    for (const auto& b : group.benchmarks) {
        std::vector<Point> points;
        for (const auto& step : b.steps)
            if (step.step > 0) points.push_back({b.seconds(step.end_ns), ns_to_ms(step.duration_ns)});
        if (points.empty()) continue;
        std::string note;
        points = thinned(std::move(points), options.max_points_per_line, note);
        figure.lines.push_back({b.label + note, std::move(points), false});
    }
    if (figure.lines.empty()) return std::nullopt;
    readable_ms(figure, false);
    return figure;
}

ReportFiles write_generation_plots(std::span<const GenerationRow> rows, const std::filesystem::path& dir,
                                   const PlotOptions& options) {
    const auto figures = generation_figures(rows);
    if (figures.empty()) return {};
    return draw_figures(figures, dir, options);
}

}  // namespace inferbench::report
