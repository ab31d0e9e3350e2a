#include "analysis/serving_sweep.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::analysis {
namespace {

// Whether a is at least b in both coordinates and above it in one.
bool dominates(double a_user, double a_throughput, double b_user, double b_throughput) {
    return a_user >= b_user && a_throughput >= b_throughput && (a_user > b_user || a_throughput > b_throughput);
}

double growth(double from, double to) { return (to - from) / from; }

// Whether no load above `at` (in `order`, from position `from` on) grows system tokens/s by the saturation share
// of its own load growth over `at`'s.
bool throughput_stopped(std::span<const SweepPoint> points, std::span<const std::size_t> order, std::size_t from) {
    const SweepPoint& base = points[order[from]];
    for (std::size_t i = from + 1; i < order.size(); ++i) {
        const SweepPoint& later = points[order[i]];
        const double gain = growth(*base.system_tokens_per_s, *later.system_tokens_per_s);
        if (gain >= limits::kSaturationGainShare * growth(base.load, later.load)) return false;
    }
    return true;
}

}  // namespace

std::string_view to_string(LoadKind kind) {
    return kind == LoadKind::concurrency ? "concurrency" : "request rate";
}

std::string_view load_unit(LoadKind kind) {
    return kind == LoadKind::concurrency ? "requests in flight" : "requests/s";
}

std::optional<double> tokens_per_s_per_gpu(const SweepPoint& point) {
    if (!point.system_tokens_per_s || !point.gpus || *point.gpus <= 0) return std::nullopt;
    return *point.system_tokens_per_s / static_cast<double>(*point.gpus);
}

std::vector<std::size_t> load_order(std::span<const SweepPoint> points) {
    std::vector<std::size_t> order(points.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return points[a].load < points[b].load; });
    for (std::size_t i = 0; i < order.size(); ++i) {
        const SweepPoint& p = points[order[i]];
        if (!(p.load > 0))
            throw UserError(fmt::format("benchmark {}: load {} is not above 0; a sweep's loads are concurrency levels "
                                        "or request rates", p.benchmark_id, p.load));
        if (i > 0 && points[order[i - 1]].load == p.load)
            throw UserError(fmt::format("benchmarks {} and {} have the same load {}: they are not one sweep",
                                        points[order[i - 1]].benchmark_id, p.benchmark_id, p.load));
    }
    return order;
}

std::string_view to_string(ThroughputAxis axis) {
    return axis == ThroughputAxis::per_gpu ? "output tokens/s per GPU" : "output tokens/s per server";
}

ThroughputAxis throughput_axis(std::span<const SweepPoint> points) {
    const bool all_known = !points.empty() && std::all_of(points.begin(), points.end(), [](const SweepPoint& p) {
        return p.gpus && *p.gpus > 0;
    });
    return all_known ? ThroughputAxis::per_gpu : ThroughputAxis::per_server;
}

std::optional<double> throughput_on(ThroughputAxis axis, const SweepPoint& point) {
    return axis == ThroughputAxis::per_gpu ? tokens_per_s_per_gpu(point) : point.system_tokens_per_s;
}

ParetoFront pareto_front(std::span<const SweepPoint> points) {
    ParetoFront front;
    front.axis = throughput_axis(points);
    std::vector<std::size_t> placed;
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (points[i].user_tokens_per_s && throughput_on(front.axis, points[i]))
            placed.push_back(i);
        else
            front.left_out.push_back(i);
    }
    for (const std::size_t i : placed) {
        const double user = *points[i].user_tokens_per_s, throughput = *throughput_on(front.axis, points[i]);
        const bool beaten = std::any_of(placed.begin(), placed.end(), [&](std::size_t j) {
            return dominates(*points[j].user_tokens_per_s, *throughput_on(front.axis, points[j]), user, throughput);
        });
        if (!beaten) front.points.push_back(i);
    }
    std::stable_sort(front.points.begin(), front.points.end(), [&](std::size_t a, std::size_t b) {
        return *points[a].user_tokens_per_s < *points[b].user_tokens_per_s;
    });
    return front;
}

GoodputKnee goodput_knee(std::span<const SweepPoint> points, double target) {
    GoodputKnee knee;
    knee.target = target;
    const auto order = load_order(points);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const SweepPoint& p = points[order[i]];
        if (p.goodput_fraction && *p.goodput_fraction >= target) {
            knee.point = order[i];
            continue;
        }
        if (knee.point) {
            knee.next = order[i];
        } else if (p.goodput_fraction) {
            knee.why_none = fmt::format("the lowest load ({}) has a goodput of {:.1f}%, under the target {:.1f}%", p.load,
                                        *p.goodput_fraction * 100, target * 100);
        } else {
            knee.why_none = fmt::format("the goodput at the lowest load ({}) is unknown", p.load);
        }
        return knee;
    }
    if (order.empty()) knee.why_none = "no points";
    return knee;
}

std::optional<Saturation> saturation(std::span<const SweepPoint> points) {
    const auto all = load_order(points);
    std::vector<std::size_t> order;
    std::copy_if(all.begin(), all.end(), std::back_inserter(order), [&](std::size_t i) {
        return points[i].system_tokens_per_s && *points[i].system_tokens_per_s > 0 && points[i].ttft_p50_ns &&
               *points[i].ttft_p50_ns > 0;
    });
    if (order.size() < 2) return std::nullopt;
    double peak = 0;
    for (const std::size_t i : order) peak = std::max(peak, *points[i].system_tokens_per_s);
    for (std::size_t k = 0; k + 1 < order.size(); ++k) {
        const SweepPoint& here = points[order[k]];
        const SweepPoint& next = points[order[k + 1]];
        const double ttft = growth(*here.ttft_p50_ns, *next.ttft_p50_ns);
        if (ttft < limits::kSaturationTtftGrowth || !throughput_stopped(points, order, k)) continue;
        return Saturation{order[k], order[k + 1], growth(here.load, next.load),
                          growth(*here.system_tokens_per_s, *next.system_tokens_per_s), ttft, peak};
    }
    return std::nullopt;
}

}  // namespace inferbench::analysis
