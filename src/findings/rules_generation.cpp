// Rules on generative benchmarks: where decode sits against its bandwidth bound, decode that per-step overheads
// hold far below it (launch-bound), decode steps that slow as the KV cache grows, and batch sizes that ran out of
// memory beside the largest that ran.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "core/units.hpp"
#include "devices/quantities.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

constexpr std::string_view kCeilingUnknown = "decode ceiling unknown: ";

std::string mb(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// The decode ceiling a finding quotes (the measured one where probed) and the achieved fraction of it.
struct DecodeStanding {
    const analysis::DecodeCeiling* ceiling = nullptr;
    const analysis::GenerationBounds* bounds = nullptr;
    const analysis::GenerationMetrics* metrics = nullptr;
    double fraction = 0;
};

std::optional<DecodeStanding> decode_standing(const BenchmarkEvidence& e) {
    const auto& g = e.summary.generation;
    if (!g || !g->decode_steps_per_s || !e.generation_bounds) return std::nullopt;
    const auto* ceiling = e.generation_bounds->best_decode();
    if (!ceiling || !ceiling->fraction) return std::nullopt;
    return DecodeStanding{ceiling, &*e.generation_bounds, &*g, *ceiling->fraction};
}

// Whether the rule on launch-bound decode holds (see limits::kLaunchBound*). A GPU's only: a CPU engine launches
// no kernels, and one far below its bandwidth bound is held back by its own compute (threads, kernels), which
// decode_below_bound says.
bool launch_bound_decode(const BenchmarkEvidence& e, const DecodeStanding& d) {
    return e.on_gpu() && d.fraction < limits::kLaunchBoundFraction && d.metrics->batch_size <= limits::kLaunchBoundMaxBatch &&
           d.bounds->bytes_per_step < limits::kLaunchBoundMaxBytes;
}

// Decode tokens/s at `batch` under the same bandwidth: the weights read once for the batch's tokens, the KV
// cache growing with the batch.
double ceiling_tokens_per_s(const DecodeStanding& d, std::int64_t batch) {
    const double scale = static_cast<double>(batch) / static_cast<double>(d.metrics->batch_size);
    const double bytes = d.bounds->weight_bytes_per_step + d.bounds->kv_bytes_per_step * scale;
    return static_cast<double>(batch) * d.ceiling->bandwidth_bytes_per_s / bytes;
}

std::string bound_basis(const DecodeStanding& d) {
    return fmt::format("{:.0f} of {:.0f} decode steps/s; {} per step ({:.0f}% of it KV cache) at {} ({})",
                       *d.metrics->decode_steps_per_s, d.ceiling->steps_per_s, mb(d.bounds->bytes_per_step),
                       d.bounds->kv_share * 100, devices::format_bandwidth(d.ceiling->bandwidth_bytes_per_s),
                       d.ceiling->what);
}

// Least-squares slope and intercept of y on x.
struct Line {
    double slope = 0, intercept = 0;
};
std::optional<Line> fit_line(std::span<const double> x, std::span<const double> y) {
    const auto n = static_cast<double>(x.size());
    if (x.size() < 3) return std::nullopt;
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    if (sxx <= 0) return std::nullopt;
    return Line{sxy / sxx, my - sxy / sxx * mx};
}

// Each decode step's median duration over the generations (the busy host's stray slow step left out), by step.
std::map<std::int64_t, double> median_step_ns(std::span<const analysis::StepTime> steps) {
    std::map<std::int64_t, std::vector<double>> by_step;
    for (const auto& s : steps)
        if (s.step > 0) by_step[s.step].push_back(static_cast<double>(s.duration_ns));
    std::map<std::int64_t, double> medians;
    for (auto& [step, values] : by_step) {
        std::sort(values.begin(), values.end());
        medians[step] = percentile_sorted(values, 50);
    }
    return medians;
}

}  // namespace

std::vector<Finding> decode_bound(const BenchmarkEvidence& e) {
    const auto& g = e.summary.generation;
    if (!g || !g->decode_steps_per_s) return {};
    const auto d = decode_standing(e);
    if (!d) {
        if (!e.generation_bounds || !e.generation_bounds->decode.empty()) return {};
        // The bounds' own note says why ("decode ceiling unknown: no memory bandwidth for ...").
        std::string why = "no memory bandwidth for this device";
        for (const auto& note : e.generation_bounds->notes)
            if (note.starts_with(kCeilingUnknown)) why = note.substr(kCeilingUnknown.size());
        return {{"generation.bound_not_measured", Severity::info, {e.id()},
                 fmt::format("decode's bandwidth bound is unknown: {}", why),
                 {{"benchmark_metrics.decoder_*", "device_probes"}, std::nullopt, {}},
                 "`inferbench probe` on that machine measures its memory bandwidth; `inferbench explain` then places "
                 "decode under it"}};
    }
    if (launch_bound_decode(e, *d)) return {};  // launch_bound_generation says why
    const std::int64_t batch = g->batch_size;
    if (d->fraction >= limits::kDecodeMemoryBoundFraction) {
        std::string statement = fmt::format("decode at {:.0f}% of the bandwidth bound ({}): memory-bound, as expected",
                                            d->fraction * 100, bound_basis(*d));
        std::string try_next = "a lower-precision weight format reads fewer bytes per step";
        if (d->bounds->kv_share < limits::kDecodeKvShareForBatching) {
            const std::int64_t larger = batch * limits::kDecodeBatchFactor;
            statement += fmt::format("; batch {} would raise tokens/s (its ceiling: {:.0f} tokens/s against {:.0f} now)",
                                     larger, ceiling_tokens_per_s(*d, larger), *g->decode_tokens_per_s);
            try_next = fmt::format("batch {}: the weights are read once per step for every sequence of the batch", larger);
        }
        return {{"generation.decode_memory_bound", Severity::info, {e.id()}, statement + ".",
                 {{"generations.steps", "benchmark_metrics.decoder_*", "device_probes"}, std::nullopt, {}}, try_next}};
    }
    return {{"generation.decode_below_bound", Severity::warning, {e.id()},
             fmt::format("decode at {:.0f}% of the bandwidth bound ({}): well below what the memory allows",
                         d->fraction * 100, bound_basis(*d)),
             {{"generations.steps", "benchmark_metrics.decoder_*", "device_probes"}, std::nullopt, {}},
             "compare engines on this cell, and check the engine's threads, its KV-cache layout and its attention "
             "kernel for this length"}};
}

std::vector<Finding> launch_bound_generation(const BenchmarkEvidence& e) {
    const auto d = decode_standing(e);
    if (!d || !launch_bound_decode(e, *d)) return {};
    const double step_ns = 1e9 / *d->metrics->decode_steps_per_s;
    const double streamed_ns = 1e9 / d->ceiling->steps_per_s;
    return {{"generation.decode_launch_bound", Severity::warning, {e.id()},
             fmt::format("decode is launch-bound: a step takes {:.3f} ms where reading its {} at {} takes {:.3f} ms "
                         "({:.0f}% of the bound) at batch {}: fixed per-step costs (kernel launches, synchronisation, "
                         "the engine's host work) dominate, not the memory",
                         ns_to_ms(step_ns), mb(d->bounds->bytes_per_step),
                         devices::format_bandwidth(d->ceiling->bandwidth_bytes_per_s), ns_to_ms(streamed_ns),
                         d->fraction * 100, d->metrics->batch_size),
             {{"generations.steps", "benchmark_metrics.decoder_*"}, std::nullopt, {}},
             "CUDA graphs (torch.compile's reduce-overhead mode, an engine's graph option) or a larger batch; a model "
             "this small measures the engine's overheads, not the hardware"}};
}

std::vector<Finding> kv_cache_growth(const BenchmarkEvidence& e) {
    const auto medians = median_step_ns(e.generation_steps);
    const auto& g = e.summary.generation;
    if (!g || medians.size() < limits::kKvGrowthMinSteps) return {};
    std::vector<double> context, step_ns;
    for (const auto& [step, ns] : medians) {
        context.push_back(static_cast<double>(g->input_tokens + step));  // tokens each sequence's cache holds
        step_ns.push_back(ns);
    }
    const auto line = fit_line(context, step_ns);
    if (!line || line->slope <= 0) return {};
    const double first = line->intercept + line->slope * context.front();
    const double last = line->intercept + line->slope * context.back();
    if (first <= 0 || (last - first) / first < limits::kKvGrowthFraction) return {};
    std::string kv;
    if (e.generation_bounds && g->decoder) {
        const double kv_last = static_cast<double>(g->batch_size) * context.back() * g->decoder->kv_bytes_per_token;
        kv = fmt::format("; at the last step the KV cache is {:.0f}% of the {} a step reads",
                         100 * kv_last / (kv_last + e.generation_bounds->weight_bytes_per_step),
                         mb(kv_last + e.generation_bounds->weight_bytes_per_step));
    }
    return {{"generation.kv_cache_growth", Severity::info, {e.id()},
             fmt::format("decode steps slow as the context grows: +{:.3f} ms per 1k tokens of context, from {:.3f} ms "
                         "to {:.3f} ms over {} steps (+{:.0f}%){}",
                         ns_to_ms(line->slope * 1000), ns_to_ms(first), ns_to_ms(last), medians.size(),
                         100 * (last - first) / first, kv),
             {{"generations.steps.end_ns", "generations.steps.kv_cache_bytes"}, std::nullopt, {}},
             "longer outputs cost more per token: a KV cache in a smaller type (fp8, int8) or an attention kernel "
             "for long contexts reads fewer bytes"}};
}

std::vector<Finding> generation_out_of_memory(std::span<const BenchmarkEvidence> all) {
    // One finding per kind of cell (the failed cells it names), at its largest batch that ran.
    std::map<std::set<std::int64_t>, const BenchmarkEvidence*> largest;
    for (const auto& e : all) {
        if (e.out_of_memory.empty()) continue;
        std::set<std::int64_t> failed;
        for (const auto& b : e.out_of_memory) failed.insert(b.benchmark_id);
        auto& best = largest[failed];
        if (!best || e.summary.benchmark.batch_size > best->summary.benchmark.batch_size) best = &e;
    }
    std::vector<Finding> out;
    for (const auto& [failed, e] : largest) {
        std::set<std::int64_t> batches;
        std::vector<std::int64_t> ids = {e->id()};
        for (const auto& b : e->out_of_memory) {
            batches.insert(b.batch_size);
            ids.push_back(b.benchmark_id);
        }
        std::vector<std::string> listed;
        for (const auto b : batches) listed.push_back(std::to_string(b));
        const auto& b = e->summary.benchmark;
        out.push_back({"generation.out_of_memory", Severity::warning, ids,
                       fmt::format("batch {} ran out of memory ({}: {}); batch {} is the largest that ran (benchmark {}, "
                                   "{} + {} tokens)",
                                   join(listed, ", "), e->out_of_memory.front().benchmark_id,
                                   e->out_of_memory.front().reason, b.batch_size, e->id(), b.input_tokens,
                                   b.output_tokens),
                       {{"benchmarks.reason"}, std::nullopt, {}},
                       "a KV cache in a smaller type or shorter lengths fit a larger batch; between the two batch "
                       "sizes, a plan's batch_sizes list finds the largest that fits"});
    }
    return out;
}

}  // namespace inferbench::findings
