// Rules across benchmarks: a lower precision that gains nothing, where batching stops paying, the
// winner of each objective with its margin, beyond noise or not, and a cell's repeats that disagree
// beyond their own intervals.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/repeats.hpp"
#include "core/statistics/confidence.hpp"
#include "core/units.hpp"
#include "findings/layer_facts.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

using Group = std::vector<const BenchmarkEvidence*>;

bool comparable(const BenchmarkEvidence& e) { return has_latency(e.summary) && e.summary.throughput_per_s > 0; }

// Each cell's comparable benchmarks (its repeats, or the one), cells in stored order.
std::vector<Group> repeats_by_cell(std::span<const BenchmarkEvidence> all) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;  // (run, ordinal) -> position
    std::vector<Group> cells;
    for (const auto& e : all) {
        if (!comparable(e)) continue;
        const auto [it, added] = index.try_emplace({e.summary.benchmark.run_id, e.summary.benchmark.ordinal}, cells.size());
        if (added) cells.emplace_back();
        cells[it->second].push_back(&e);
    }
    return cells;
}

// A cell's repeats as one row (analysis/repeats: the mean of their means, Student-t intervals over them,
// which hold the spread between worker processes that one run's interval does not, the CV of the means).
analysis::BenchmarkSummary combined_summary(const Group& repeats) {
    std::vector<analysis::BenchmarkSummary> summaries;
    for (const auto* e : repeats) summaries.push_back(e->summary);
    return analysis::combine_repeats(summaries);
}

// The comparable cells of `all`, one evidence each, in stored order, for rules that set cells against each
// other (never a cell against its own repeat): a cell measured once is its benchmark; a cell's repeats are
// one row combined over them (combined_summary), with the first repeat's layer profile. The combined rows
// are held in `owned`. A pipeline cell is left out: its latency is a batch of images through every stage, not the
// network's, so it is no alternative to the network-only cells of its setup (rules_pipeline judges it).
Group cells_of(std::span<const BenchmarkEvidence> all, std::deque<BenchmarkEvidence>& owned) {
    Group cells;
    for (const Group& repeats : repeats_by_cell(all)) {
        if (repeats.front()->summary.pipeline) continue;
        if (repeats.size() == 1) {
            cells.push_back(repeats.front());
            continue;
        }
        BenchmarkEvidence& combined = owned.emplace_back();
        combined.summary = combined_summary(repeats);
        combined.layers = repeats.front()->layers;
        cells.push_back(&combined);
    }
    return cells;
}

template <typename Key>
std::map<Key, Group> group_by(const Group& cells, const auto& key) {
    std::map<Key, Group> groups;
    for (const auto* e : cells) groups[key(e->summary.benchmark)].push_back(e);
    return groups;
}

// How far apart two mean latencies must be to differ beyond the noise, relative: the relative half-widths
// of their 95% intervals (analysis/intervals: batch means, or Student t over repeats) added in quadrature,
// the half-width of the ratio's interval as compare's verdicts take it (report/verdict). Where a side has
// no interval (a tool's log), the larger CV of the two, as nvbench_compare judges; unknown (NaN) where a
// log gave no standard deviation either.
double noise(const BenchmarkEvidence& a, const BenchmarkEvidence& b) {
    const auto spread = [](const analysis::BenchmarkSummary& s) -> std::optional<double> {
        if (!s.ci.mean || !(s.e2e.mean > 0)) return std::nullopt;
        return relative_half_width(*s.ci.mean, s.e2e.mean);
    };
    const auto ra = spread(a.summary);
    const auto rb = spread(b.summary);
    if (ra && rb) return std::hypot(*ra, *rb);
    return std::max(a.summary.e2e.cv_pct, b.summary.e2e.cv_pct) / 100;
}

std::string noise_text(double difference, double relative_noise) {
    if (!std::isfinite(relative_noise)) return "noise not measured";
    const double pct = relative_noise * 100;  // two significant digits below 1%: a steady run's noise is 0.03%, not 0.0%
    return fmt::format("{} the noise ({}%)", std::abs(difference) > relative_noise ? "beyond" : "within",
                       pct >= 1 ? fmt::format("{:.1f}", pct) : fmt::format("{:.2g}", pct));
}

std::string label(const store::BenchmarkRecord& b) {
    std::string text = fmt::format("#{} {} {} {} b{}", b.benchmark_id, b.backend, b.precision, b.device, b.batch_size);
    if (!b.variant.empty()) text += " " + b.variant;
    return text;
}

// ---- precision anomalies

// Lower precision, expected faster: each pair (lower, higher).
constexpr std::pair<std::string_view, std::string_view> kExpectedFaster[] = {
    {"int8", "fp16"}, {"int8", "bf16"}, {"fp8", "fp16"}, {"fp16", "fp32"}, {"bf16", "fp32"}, {"int8", "fp32"}};

// The probable cause in the lower precision's layer profile; "not measured" without one.
std::string probable_cause(const BenchmarkEvidence& low, std::vector<std::string>& layers) {
    if (!low.layers || low.layers->layers.empty())
        return "probable cause not measured: no per-layer profile stored (the backend's layer_profile option stores "
               "one)";
    const auto& set = *low.layers;
    std::vector<std::string> causes;
    const auto fallback = share_where(set, [](const auto& l) { return is_cpu_node(l.layer); });
    if (set.host_dispatch > 0) {  // the shares are of the host's dispatch time: only counts can be said
        const auto conversions = share_where(set, [](const auto& l) { return is_conversion(l.layer.op_type); });
        if (low.on_gpu() && !fallback.layers.empty())
            causes.push_back(fmt::format("{} nodes fell back to the CPU", fallback.layers.size()));
        if (!conversions.layers.empty())
            causes.push_back(fmt::format("{} reformat/quantize layers ran", conversions.layers.size()));
        for (const auto* share : {&fallback, &conversions})
            for (auto& l : share->labels(2)) layers.push_back(std::move(l));
        const std::string unmeasured = "per-layer GPU times not measured (the profiler timed the host's dispatch)";
        return causes.empty() ? unmeasured
                              : fmt::format("possible causes: {}; {}", fmt::join(causes, "; "), unmeasured);
    }
    if (low.on_gpu() && fallback.share_pct >= limits::kFallbackSharePct)
        causes.push_back(fmt::format("{} nodes fell back to the CPU ({:.1f}% of the profiled time)",
                                     fallback.layers.size(), fallback.share_pct));
    const auto conversions = share_where(set, [](const auto& l) { return is_conversion(l.layer.op_type); });
    if (conversions.share_pct >= limits::kPitfallSharePct)
        causes.push_back(fmt::format("{:.0f}% of the profiled time is in reformat/quantize layers",
                                     conversions.share_pct));
    const auto memory = share_where(set, is_memory_bound);
    if (memory.share_pct >= limits::kMemoryBoundSharePct)
        causes.push_back(fmt::format("{:.0f}% is in memory-bound layers, which gain little from faster math",
                                     memory.share_pct));
    for (const auto* share : {&fallback, &conversions, &memory})
        for (auto& l : share->labels(2)) layers.push_back(std::move(l));
    if (causes.empty()) return "the per-layer profile shows no fallback, conversion or memory-bound share that explains it";
    return fmt::format("probable cause: {}", fmt::join(causes, "; "));
}

std::optional<Finding> precision_pair(const BenchmarkEvidence& low, const BenchmarkEvidence& high) {
    const double a = low.summary.e2e.mean, b = high.summary.e2e.mean;
    const double difference = a / b - 1;  // > 0: the lower precision is slower
    const double n = noise(low, high);
    const double margin = std::isfinite(n) ? n : 0.0;
    if (-difference > margin) return std::nullopt;  // faster beyond the noise: as expected
    const auto& lb = low.summary.benchmark;
    Finding f;
    f.id = "precision." + lb.precision + "_not_faster_than_" + high.summary.benchmark.precision;
    f.severity = difference > margin ? Severity::problem : Severity::warning;
    f.benchmarks = {low.id(), high.id()};
    std::vector<std::string> layers;
    const auto cause = probable_cause(low, layers);
    f.statement = fmt::format("{} is not faster than {} for {} on {} ({} b{}): mean latency {} vs {} ({:+.1f}%, {}); {}",
                              lb.precision, high.summary.benchmark.precision, lb.model, lb.backend, lb.device,
                              lb.batch_size, format_latency(a), format_latency(b), difference * 100,
                              noise_text(difference, n), cause);
    f.evidence = {{"iterations.e2e", "layer_times"}, std::nullopt, layers};
    f.try_next = "check that the precision was applied (calibration for int8, the engine's layer precisions), "
                 "remove CPU fallbacks, and compare at a larger batch where the math dominates";
    // What the runtime is known to do, beside what the data shows.
    if (lb.backend == "onnxruntime" && lb.precision == "int8" && low.on_gpu())
        f.try_next =
            "ONNX Runtime's CUDA provider runs a QDQ model's Conv, MatMul and Gemm as dequantize, float kernel, "
            "quantize (it has no int8 kernels for them), so int8 only adds work there: run the QDQ file on "
            "the TensorRT provider or trtexec, which fuse QDQ into int8 kernels, or keep fp16 on CUDA";
    return f;
}

// ---- batch scaling

struct Point {
    const BenchmarkEvidence* e;
    double batch;
    double throughput;
    double latency;
};

std::string objective_text(std::span<const Point> points) {
    const auto best_tp = std::max_element(points.begin(), points.end(),
                                          [](const Point& a, const Point& b) { return a.throughput < b.throughput; });
    const auto best_lat = std::min_element(points.begin(), points.end(),
                                           [](const Point& a, const Point& b) { return a.latency < b.latency; });
    std::string energy = "inferences per joule not measured";
    const Point* best_energy = nullptr;
    for (const auto& p : points) {
        const auto ipj = p.e->summary.telemetry.inferences_per_joule;
        if (ipj && (!best_energy || *ipj > *best_energy->e->summary.telemetry.inferences_per_joule)) best_energy = &p;
    }
    if (best_energy)
        energy = fmt::format("energy: batch {:.0f} ({:.1f} inferences/J)", best_energy->batch,
                             *best_energy->e->summary.telemetry.inferences_per_joule);
    return fmt::format("throughput: batch {:.0f} ({:.1f}/s); latency: batch {:.0f} ({} per query); {}", best_tp->batch,
                       best_tp->throughput, best_lat->batch, format_latency(best_lat->latency), energy);
}

Finding batch_finding(const Group& group, std::span<const Point> points) {
    const auto& b = group.front()->summary.benchmark;
    Finding f;
    f.severity = Severity::info;
    for (const auto& p : points) f.benchmarks.push_back(p.e->id());
    f.evidence.series = {"throughput", "iterations.e2e"};
    if (std::any_of(points.begin(), points.end(),
                    [](const Point& p) { return p.e->summary.telemetry.inferences_per_joule.has_value(); }))
        f.evidence.series.emplace_back("gpu_samples.energy");
    // The smallest batch that no larger one beats by kBatchGainFraction and beyond the noise of the two; at the
    // largest batch measured, throughput may still grow beyond it.
    std::string plateau;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        const auto best_after = std::max_element(points.begin() + static_cast<std::ptrdiff_t>(i) + 1, points.end(),
                                                 [](const Point& a, const Point& c) { return a.throughput < c.throughput; });
        const double gain = best_after->throughput / points[i].throughput - 1;
        const double n = noise(*points[i].e, *best_after->e);
        const double needed = std::max(limits::kBatchGainFraction, std::isfinite(n) ? n : 0.0);
        if (gain >= needed) continue;
        f.id = "batch.plateau";
        plateau = fmt::format(
            "throughput stops growing at batch {:.0f} ({:.1f}/s): no larger batch measured gives "
            "{:.0f}% more beyond the noise (the best of them, batch {:.0f}, {:+.1f}%, {})",
            points[i].batch, points[i].throughput, limits::kBatchGainFraction * 100, best_after->batch, gain * 100,
            noise_text(gain, n));
        break;
    }
    if (f.id.empty()) {
        const Point& last = points.back();
        const Point& before = points[points.size() - 2];
        const double gain = last.throughput / before.throughput - 1;
        f.id = "batch.still_scaling";
        plateau = fmt::format(
            "throughput still grows at the largest batch measured ({:.0f}: {:.1f}/s, {:+.1f}% over "
            "batch {:.0f}, {})",
            last.batch, last.throughput, gain * 100, before.batch, noise_text(gain, noise(*last.e, *before.e)));
    }
    std::string linear;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        const double batch_growth = points[i + 1].batch / points[i].batch - 1;
        const double latency_growth = points[i + 1].latency / points[i].latency - 1;
        if (latency_growth < limits::kLinearLatencyFraction * batch_growth) continue;
        linear = fmt::format("; latency grows about linearly with the batch from batch {:.0f} on", points[i].batch);
        break;
    }
    f.statement = fmt::format("{} / {} / {} / {}: {}{}; best batch for {}", b.model, b.backend, b.precision, b.device,
                              plateau, linear, objective_text(points));
    f.try_next = f.id == "batch.plateau"
                     ? "serve at the batch where throughput levels off (larger only adds latency)"
                     : "measure larger batches (--batch) to find where throughput levels off";
    return f;
}

// ---- comparisons

struct Objective {
    std::string_view name;
    bool higher_is_better;
    std::function<std::optional<double>(const BenchmarkEvidence&)> value;
    std::function<std::string(double)> show;
};

std::optional<std::string> winner_text(const Group& group, const Objective& objective) {
    std::vector<std::pair<double, const BenchmarkEvidence*>> ranked;
    for (const auto* e : group)
        if (auto v = objective.value(*e)) ranked.emplace_back(*v, e);
    if (ranked.size() < 2) return std::nullopt;
    std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
        return objective.higher_is_better ? a.first > b.first : a.first < b.first;
    });
    const auto& [best, winner] = ranked[0];
    const auto& [second, runner_up] = ranked[1];
    const double margin = objective.higher_is_better ? best / second - 1 : second / best - 1;
    const std::string noise_part = objective.name == "energy" ? "noise not measured" : noise_text(margin, noise(*winner, *runner_up));
    return fmt::format("{}: {} ({}), {:.1f}% ahead of {} ({}, {})", objective.name, label(winner->summary.benchmark),
                       objective.show(best), margin * 100, label(runner_up->summary.benchmark), objective.show(second),
                       noise_part);
}

}  // namespace

std::vector<Finding> precision_anomalies(std::span<const BenchmarkEvidence> all) {
    std::deque<BenchmarkEvidence> combined;
    const auto groups = group_by<std::tuple<std::string, std::string, std::string, std::int64_t, std::string>>(
        cells_of(all, combined), [](const store::BenchmarkRecord& b) {
            return std::tuple{b.model, b.backend, b.device, b.batch_size, b.variant};
        });
    std::vector<Finding> out;
    for (const auto& [key, group] : groups) {
        for (const auto& [low_name, high_name] : kExpectedFaster) {
            const auto find = [&](std::string_view precision) {
                const auto it = std::find_if(group.begin(), group.end(), [&](const BenchmarkEvidence* e) {
                    return e->summary.benchmark.precision == precision;
                });
                return it == group.end() ? nullptr : *it;
            };
            const auto* low = find(low_name);
            const auto* high = find(high_name);
            if (!low || !high) continue;
            if (auto f = precision_pair(*low, *high)) out.push_back(std::move(*f));
        }
    }
    return out;
}

std::vector<Finding> batch_scaling(std::span<const BenchmarkEvidence> all) {
    std::deque<BenchmarkEvidence> combined;
    const auto groups = group_by<std::tuple<std::int64_t, std::string, std::string, std::string, std::string, std::string>>(
        cells_of(all, combined), [](const store::BenchmarkRecord& b) {
            return std::tuple{b.run_id, b.model, b.backend, b.device, b.precision, b.variant};
        });
    std::vector<Finding> out;
    for (const auto& [key, group] : groups) {
        std::map<std::int64_t, Point> by_batch;  // a repeated batch size: its first benchmark
        for (const auto* e : group)
            by_batch.try_emplace(e->summary.benchmark.batch_size,
                                 Point{e, static_cast<double>(e->summary.benchmark.batch_size),
                                       e->summary.throughput_per_s, e->summary.e2e.mean});
        if (by_batch.size() < 2) continue;
        std::vector<Point> points;
        for (const auto& [batch, p] : by_batch) points.push_back(p);
        out.push_back(batch_finding(group, points));
    }
    return out;
}

std::vector<Finding> comparisons(std::span<const BenchmarkEvidence> all) {
    std::deque<BenchmarkEvidence> combined;
    const auto groups = group_by<std::tuple<std::string, std::int64_t>>(
        cells_of(all, combined), [](const store::BenchmarkRecord& b) { return std::tuple{b.model, b.batch_size}; });
    const Objective objectives[] = {
        {"latency", false, [](const BenchmarkEvidence& e) -> std::optional<double> { return e.summary.e2e.mean; },
         [](double v) { return format_latency(v); }},
        {"throughput", true,
         [](const BenchmarkEvidence& e) -> std::optional<double> { return e.summary.throughput_per_s; },
         [](double v) { return fmt::format("{:.1f}/s", v); }},
        {"energy", true, [](const BenchmarkEvidence& e) { return e.summary.telemetry.inferences_per_joule; },
         [](double v) { return fmt::format("{:.2f} inferences/J", v); }},
    };
    std::vector<Finding> out;
    for (const auto& [key, group] : groups) {
        if (group.size() < 2) continue;
        std::vector<std::string> parts;
        for (const auto& objective : objectives)
            if (auto text = winner_text(group, objective)) parts.push_back(*text);
        Finding f{"compare.winners", Severity::info, {}, {}, {{"iterations.e2e", "throughput"}, std::nullopt, {}},
                  "where a margin is within the noise, measure longer or repeat the runs before choosing"};
        for (const auto* e : group) f.benchmarks.push_back(e->id());
        f.statement = fmt::format("{} at batch {}, {} benchmarks: {}", std::get<0>(key), std::get<1>(key), group.size(),
                                  fmt::join(parts, "; "));
        if (group.front()->summary.telemetry.inferences_per_joule) f.evidence.series.emplace_back("gpu_samples.energy");
        out.push_back(std::move(f));
    }
    return out;
}

// ---- repeats

std::vector<Finding> repeat_spread(std::span<const BenchmarkEvidence> all) {
    std::vector<Finding> out;
    for (const Group& repeats : repeats_by_cell(all)) {
        const auto has_interval = [](const BenchmarkEvidence* e) { return e->summary.ci.mean && e->summary.e2e.mean > 0; };
        if (repeats.size() < 2 || !std::ranges::all_of(repeats, has_interval)) continue;
        const auto mean_of = [](const BenchmarkEvidence* e) { return e->summary.e2e.mean; };
        const auto [low, high] = std::ranges::minmax_element(repeats, {}, mean_of);
        // Beyond the noise as everywhere here: the ratio of the two means outside its interval.
        const double ratio = mean_of(*high) / mean_of(*low) - 1;
        if (!(ratio > noise(**low, **high))) continue;
        double widest = 0, narrowest = std::numeric_limits<double>::infinity();
        for (const auto* e : repeats) {
            const double half = relative_half_width(*e->summary.ci.mean, mean_of(e));
            widest = std::max(widest, half);
            narrowest = std::min(narrowest, half);
        }
        const auto pct = [](double fraction) { return fmt::format("{:.2g}%", 100 * fraction); };
        // The interval over the repeats and the CV of their means, as the summary's row of the cell has them.
        const analysis::BenchmarkSummary row = combined_summary(repeats);
        const auto& b = repeats.front()->summary.benchmark;
        Finding f{"repeats.spread", Severity::warning, {}, {}, {{"iterations.e2e"}, std::nullopt, {}},
                  "quote the interval over the repeats, and give each cell several repeats before comparing cells; "
                  "where the repeats' means fall into levels, look for what is chosen once per process (cuDNN's "
                  "autotuned algorithms: cudnn_benchmark; a compile's autotuning; memory placement) and pin it"};
        for (const auto* e : repeats) f.benchmarks.push_back(e->id());
        f.statement = fmt::format(
            "{} {} {} {} b{}: its {} repeats differ beyond their own intervals: means {} to {} ({:+.1f}%, CV of the "
            "means {}), while each run's 95% interval of its mean is ±{}. What changes from one worker process "
            "to the next outweighs the noise within a run, so a single run's interval understates the uncertainty; "
            "over the repeats the interval is ±{}",
            b.model, b.backend, b.precision, b.device, b.batch_size, repeats.size(), format_latency(mean_of(*low)),
            format_latency(mean_of(*high)), 100 * ratio,
            row.cv_of_means_pct ? fmt::format("{:.1f}%", *row.cv_of_means_pct) : std::string("unknown"),
            pct(narrowest) == pct(widest) ? pct(widest) : fmt::format("{}-{}", pct(narrowest), pct(widest)),
            row.ci.mean && row.e2e.mean > 0 ? pct(relative_half_width(*row.ci.mean, row.e2e.mean)) : "unknown");
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace inferbench::findings
