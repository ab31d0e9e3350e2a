#include "analysis/serving_sweep.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/scenario_summary.hpp"
#include "core/error.hpp"
#include "core/plan/plan.hpp"
#include "core/units.hpp"

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

bool is_serving(const store::BenchmarkRecord& benchmark) { return benchmark.backend == kServingBackend; }

std::string_view to_string(LoadKind kind) {
    return kind == LoadKind::concurrency ? "concurrency" : "request rate";
}

std::string_view load_unit(LoadKind kind) {
    return kind == LoadKind::concurrency ? "requests in flight" : "requests/s";
}

std::string load_text(LoadKind kind, double load) {
    return kind == LoadKind::concurrency ? fmt::format("concurrency {:g}", load) : fmt::format("{:g} requests/s", load);
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

namespace inferbench::analysis {
namespace {

constexpr std::string_view kLoadSettings[] = {"concurrency=", "target_qps="};

// The variant without the load's own setting: what the cells of one sweep share.
std::string variant_without_load(const std::string& variant) {
    std::vector<std::string> kept;
    std::istringstream words(variant);
    for (std::string word; words >> word;) {
        const bool load = std::any_of(std::begin(kLoadSettings), std::end(kLoadSettings),
                                      [&](std::string_view prefix) { return word.starts_with(prefix); });
        if (!load) kept.push_back(word);
    }
    return join(kept, " ");
}

std::string sweep_key(const store::BenchmarkRecord& b, LoadKind kind) {
    return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", b.run_id, b.model, b.backend, b.device, b.precision,
                       b.batch_size, b.input_tokens, b.output_tokens, variant_without_load(b.variant), to_string(kind));
}

std::string sweep_name(const store::BenchmarkRecord& b, LoadKind kind, bool several_runs) {
    std::string name = fmt::format("{} {} {} {}", b.model, b.backend, b.device, b.precision);
    const auto rest = variant_without_load(b.variant);
    if (!rest.empty()) name += " " + rest;
    name += fmt::format(", {}", to_string(kind));
    if (several_runs) name += fmt::format(", run {}", b.run_id);
    return name;
}

std::optional<double> p50_of(const std::optional<LatencyDistribution>& d) {
    return d ? std::optional(d->ns.p50) : std::nullopt;
}
std::optional<double> p99_of(const std::optional<LatencyDistribution>& d) {
    return d ? std::optional(d->ns.p99) : std::nullopt;
}

}  // namespace

std::optional<std::pair<LoadKind, SweepPoint>> sweep_point(const ServingCell& cell) {
    if (!cell.serving) return std::nullopt;
    const auto scenario = stored_scenario(cell.benchmark);
    if (!scenario) return std::nullopt;
    LoadKind kind = LoadKind::concurrency;
    SweepPoint p;
    if (scenario->scenario == Scenario::concurrency) {
        p.load = static_cast<double>(scenario->concurrency);
    } else if (scenario->scenario == Scenario::server) {
        kind = LoadKind::request_rate;
        p.load = scenario->target_qps;
    } else {
        return std::nullopt;
    }
    const ServingSummary& s = *cell.serving;
    p.benchmark_id = cell.benchmark.benchmark_id;
    if (s.output_tokens_per_s_per_user) p.user_tokens_per_s = s.output_tokens_per_s_per_user->p50;
    p.system_tokens_per_s = s.output_tokens_per_s;
    p.gpus = cell.gpus;
    if (s.goodput) p.goodput_fraction = s.goodput->fraction;
    else if (s.counts.sent > 0)
        p.goodput_fraction = static_cast<double>(s.counts.ok) / static_cast<double>(s.counts.sent);
    p.ttft_p50_ns = p50_of(s.ttft);
    p.ttft_p99_ns = p99_of(s.ttft);
    p.tpot_p50_ns = p50_of(s.tpot);
    p.tpot_p99_ns = p99_of(s.tpot);
    return std::pair{kind, p};
}

std::vector<ServingSweep> serving_sweeps(std::span<const ServingCell> cells) {
    std::set<std::int64_t> runs;
    for (const auto& c : cells) runs.insert(c.benchmark.run_id);
    std::vector<ServingSweep> sweeps;
    std::map<std::string, std::size_t> index;
    for (const auto& cell : cells) {
        auto point = sweep_point(cell);
        if (!point) continue;
        const auto [it, added] = index.try_emplace(sweep_key(cell.benchmark, point->first), sweeps.size());
        if (added) sweeps.push_back({sweep_name(cell.benchmark, point->first, runs.size() > 1), point->first, {}});
        auto& points = sweeps[it->second].points;
        const bool repeated = std::any_of(points.begin(), points.end(),
                                          [&](const SweepPoint& p) { return p.load == point->second.load; });
        if (!repeated) points.push_back(point->second);
    }
    for (auto& sweep : sweeps)
        std::stable_sort(sweep.points.begin(), sweep.points.end(),
                         [](const SweepPoint& a, const SweepPoint& b) { return a.load < b.load; });
    return sweeps;
}

}  // namespace inferbench::analysis
