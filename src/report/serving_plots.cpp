#include "report/serving_plots.hpp"

#include <fmt/format.h>

#include "core/time_units.hpp"

namespace inferbench::report {
namespace {

bool any_line_drawn(const Figure& figure) {
    for (const auto& line : figure.lines)
        if (line.points.size() > 1) return true;
    return false;
}

std::optional<Figure> pareto_figure(std::span<const SweepView> views, analysis::ThroughputAxis axis) {
    const bool per_gpu = axis == analysis::ThroughputAxis::per_gpu;
    Figure figure = make_figure(per_gpu ? "serving-pareto-per-gpu" : "serving-pareto-per-server",
                                fmt::format("Pareto front: output tokens/s per user against {}", to_string(axis)),
                                "output tokens/s per user (median request)", std::string(to_string(axis)));
    figure.y_from_zero = true;
    for (const auto& view : views) {
        if (view.front.axis != axis) continue;
        const auto& points = view.sweep.points;
        Line all{view.sweep.name, {}, true};
        for (std::size_t i = 0; i < points.size(); ++i) {
            const auto y = analysis::throughput_on(axis, points[i]);
            if (!points[i].user_tokens_per_s || !y) continue;
            all.points.push_back({*points[i].user_tokens_per_s, *y});
            std::string label = fmt::format("{:g}", points[i].load);
            if (view.knee.point == i) label += view.knee.next ? ": goodput knee" : ": knee (lower bound)";
            figure.point_labels.push_back({{*points[i].user_tokens_per_s, *y}, std::move(label)});
        }
        Line front{fmt::format("{} (Pareto front)", view.sweep.name), {}, false};
        for (const auto i : view.front.points)
            front.points.push_back({*points[i].user_tokens_per_s, *analysis::throughput_on(axis, points[i])});
        if (all.points.empty()) continue;
        figure.lines.push_back(std::move(all));
        if (front.points.size() > 1) figure.lines.push_back(std::move(front));
    }
    if (!any_line_drawn(figure)) return std::nullopt;
    return figure;
}

std::optional<Figure> latency_figure(std::span<const SweepView> views, analysis::LoadKind kind, bool ttft) {
    const char* what = ttft ? "TTFT" : "TPOT";
    const std::string load_key = kind == analysis::LoadKind::concurrency ? "concurrency" : "request-rate";
    Figure figure = make_figure(fmt::format("serving-{}-vs-{}", ttft ? "ttft" : "tpot", load_key),
                                fmt::format("{} p50 and p99 against {}", what, to_string(kind)),
                                fmt::format("{} ({})", to_string(kind), load_unit(kind)), fmt::format("{} (ms)", what));
    figure.log2_x = kind == analysis::LoadKind::concurrency;
    std::vector<double> tics;
    for (const auto& view : views) {
        if (view.sweep.kind != kind) continue;
        Line p50{fmt::format("{} p50", view.sweep.name), {}, true};
        Line p99{fmt::format("{} p99", view.sweep.name), {}, true};
        for (const auto& p : view.sweep.points) {
            const auto& median = ttft ? p.ttft_p50_ns : p.tpot_p50_ns;
            const auto& tail = ttft ? p.ttft_p99_ns : p.tpot_p99_ns;
            if (median) p50.points.push_back({p.load, ns_to_ms(*median)});
            if (tail) p99.points.push_back({p.load, ns_to_ms(*tail)});
            tics.push_back(p.load);
        }
        if (!p50.points.empty()) figure.lines.push_back(std::move(p50));
        if (!p99.points.empty()) figure.lines.push_back(std::move(p99));
    }
    if (!any_line_drawn(figure)) return std::nullopt;
    if (figure.log2_x) {
        std::sort(tics.begin(), tics.end());
        tics.erase(std::unique(tics.begin(), tics.end()), tics.end());
        figure.x_tics = std::move(tics);
    }
    readable_ms(figure, false);
    return figure;
}

}  // namespace

std::vector<Figure> serving_figures(std::span<const SweepView> views) {
    std::vector<Figure> figures;
    for (const auto axis : {analysis::ThroughputAxis::per_gpu, analysis::ThroughputAxis::per_server})
        if (auto f = pareto_figure(views, axis)) figures.push_back(std::move(*f));
    for (const auto kind : {analysis::LoadKind::concurrency, analysis::LoadKind::request_rate})
        for (const bool ttft : {true, false})
            if (auto f = latency_figure(views, kind, ttft)) figures.push_back(std::move(*f));
    return figures;
}

ReportFiles write_serving_plots(std::span<const SweepView> views, const std::filesystem::path& dir,
                                const PlotOptions& options) {
    const auto figures = serving_figures(views);
    if (figures.empty()) return {};
    return draw_figures(figures, dir, options);
}

}  // namespace inferbench::report
