#include "analysis/repeats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::analysis {
namespace {

using Summaries = std::vector<const BenchmarkSummary*>;

bool measured(const BenchmarkSummary& s) { return s.benchmark.status == BenchmarkStatus::ok && has_latency(s); }

// The values of every repeat, or nothing where one of them lacks it (a mean of some would be a claim
// about all).
template <typename Get>
std::optional<std::vector<double>> values_of(const Summaries& repeats, Get get) {
    std::vector<double> values;
    for (const auto* s : repeats) {
        const std::optional<double> value = get(*s);
        if (!value || !std::isfinite(*value)) return std::nullopt;
        values.push_back(*value);
    }
    return values;
}

double mean(const std::vector<double>& values) {
    double sum = 0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

std::optional<double> mean_of(const std::optional<std::vector<double>>& values) {
    return values ? std::optional(mean(*values)) : std::nullopt;
}
std::optional<double> max_of(const std::optional<std::vector<double>>& values) {
    return values ? std::optional(*std::max_element(values->begin(), values->end())) : std::nullopt;
}
std::optional<double> min_of(const std::optional<std::vector<double>>& values) {
    return values ? std::optional(*std::min_element(values->begin(), values->end())) : std::nullopt;
}
std::optional<double> sum_of(const std::optional<std::vector<double>>& values) {
    return values ? std::optional(mean(*values) * static_cast<double>(values->size())) : std::nullopt;
}

TimingSummary mean_timing(const std::vector<const TimingSummary*>& timings) {
    TimingSummary m;
    m.min = timings.front()->min;
    m.max = timings.front()->max;
    for (double TimingSummary::*field : {&TimingSummary::mean, &TimingSummary::stdev, &TimingSummary::cv_pct,
                                         &TimingSummary::p50, &TimingSummary::p90, &TimingSummary::p95,
                                         &TimingSummary::p99, &TimingSummary::p999}) {
        double sum = 0;
        for (const auto* t : timings) sum += (*t).*field;
        m.*field = sum / static_cast<double>(timings.size());
    }
    for (const auto* t : timings) {
        m.count += t->count;
        m.min = std::min(m.min, t->min);
        m.max = std::max(m.max, t->max);
    }
    return m;
}

std::optional<TimingSummary> mean_device_time(const Summaries& repeats,
                                              std::optional<TimingSummary> BenchmarkSummary::*field) {
    std::vector<const TimingSummary*> timings;
    for (const auto* s : repeats) {
        if (!(s->*field)) return std::nullopt;
        timings.push_back(&*(s->*field));
    }
    return mean_timing(timings);
}

TelemetrySummary combine_telemetry(const Summaries& repeats) {
    using T = TelemetrySummary;
    const auto of = [&](std::optional<double> T::*field) {
        return values_of(repeats, [field](const BenchmarkSummary& s) { return s.telemetry.*field; });
    };
    T t = repeats.front()->telemetry;  // the sources: the first repeat's, as every repeat's ran on one host
    t.gpu_samples = t.cpu_samples = 0;
    for (const auto* s : repeats) {
        t.gpu_samples += s->telemetry.gpu_samples;
        t.cpu_samples += s->telemetry.cpu_samples;
        if (s->telemetry.energy_source == "integrated power") t.energy_source = s->telemetry.energy_source;
    }
    for (auto field : {&T::mean_power_w, &T::joules_per_inference, &T::joules_per_inference_net, &T::mean_sm_clock_mhz,
                       &T::mean_gpu_util_pct, &T::mean_process_cpu_pct})
        t.*field = mean_of(of(field));
    // The inverse of the row's J/inf, so the two columns of one row agree.
    t.inferences_per_joule = t.joules_per_inference && *t.joules_per_inference > 0
                                 ? std::optional(1 / *t.joules_per_inference)
                                 : std::nullopt;
    for (auto field : {&T::max_power_w, &T::max_temperature_c, &T::peak_fb_used_mib, &T::peak_process_fb_mib,
                       &T::peak_rss_mib})
        t.*field = max_of(of(field));
    t.min_sm_clock_mhz = min_of(of(&T::min_sm_clock_mhz));
    t.energy_j = sum_of(of(&T::energy_j));
    // Each reason's mean share over the repeats (0 where a repeat's samples did not show it); unknown where a
    // repeat has no GPU samples, whose share is not 0 but not measured.
    t.throttled.clear();
    if (std::any_of(repeats.begin(), repeats.end(), [](const auto* s) { return s->telemetry.gpu_samples == 0; }))
        return t;
    std::map<std::string, double> shares;
    for (const auto* s : repeats)
        for (const auto& share : s->telemetry.throttled) shares[share.reason] += share.share;
    for (const auto& [reason, total] : shares) t.throttled.push_back({reason, total / static_cast<double>(repeats.size())});
    return t;
}

// The repeats' throttle flags counted together, where every repeat was judged.
std::optional<ThrottleSummary> combine_throttle(const Summaries& repeats) {
    std::optional<ThrottleSummary> all;
    for (const auto* s : repeats) {
        if (!s->throttle) return std::nullopt;
        if (!all) {
            all = s->throttle;
            continue;
        }
        all->iterations += s->throttle->iterations;
        all->flagged += s->throttle->flagged;
        all->unknown += s->throttle->unknown;
        all->discarded += s->throttle->discarded;
        all->reasons |= s->throttle->reasons;
        all->clock_below_floor = all->clock_below_floor || s->throttle->clock_below_floor;
    }
    return all;
}

// The load scenario over the repeats: queueing, service and rates as means; VALID only where every
// repeat is (each INVALID repeat's reasons named). LoadGen's early-stopping estimates belong to one
// run's queries, so the row has none (`summary --each-repeat` shows each repeat's).
ScenarioSummary combine_scenario(const Summaries& repeats) {
    ScenarioSummary row = repeats.front()->scenario;
    const auto timings = [&](std::optional<TimingSummary> ScenarioSummary::*field) -> std::optional<TimingSummary> {
        std::vector<const TimingSummary*> all;
        for (const auto* s : repeats) {
            if (!(s->scenario.*field)) return std::nullopt;
            all.push_back(&*(s->scenario.*field));
        }
        return mean_timing(all);
    };
    row.queue = timings(&ScenarioSummary::queue);
    row.service = timings(&ScenarioSummary::service);
    for (auto field : {&ScenarioSummary::completed_qps, &ScenarioSummary::target_qps, &ScenarioSummary::peak_qps,
                       &ScenarioSummary::mean_batch})
        row.*field = mean_of(values_of(repeats, [field](const BenchmarkSummary& s) { return s.scenario.*field; }));
    row.peak_steps.clear();
    ScenarioVerdict verdict;
    verdict.percentile = row.verdict.percentile;
    bool every_judged = true;
    for (const auto* s : repeats) {
        const auto& v = s->scenario.verdict;
        if (!v.valid) {
            every_judged = false;
            continue;
        }
        verdict.valid = verdict.valid.value_or(true) && *v.valid;
        for (const auto& reason : v.reasons)
            verdict.reasons.push_back(fmt::format("repeat {}: {}", s->benchmark.repeat + 1, reason));
    }
    if (!every_judged && verdict.valid.value_or(false)) verdict.valid.reset();  // VALID only where every repeat was judged so
    row.verdict = std::move(verdict);
    return row;
}

// Each text of the repeats once; where only some repeats have it, which ("repeats 2, 3: ..."). The
// timing warnings (core/statistics/statistics: timing_warnings) of each repeat are left out: the row's combined
// latencies are judged once instead.
std::vector<std::string> combined_warnings(std::span<const BenchmarkSummary> all) {
    std::vector<std::pair<std::string, std::vector<std::string>>> texts;
    for (const auto& s : all) {
        const auto timing = timing_warnings(s.e2e);
        for (const auto& warning : s.warnings) {
            if (std::find(timing.begin(), timing.end(), warning) != timing.end()) continue;
            auto it = std::find_if(texts.begin(), texts.end(), [&](const auto& t) { return t.first == warning; });
            if (it == texts.end()) it = texts.insert(texts.end(), {warning, {}});
            it->second.push_back(std::to_string(s.benchmark.repeat + 1));
        }
    }
    std::vector<std::string> warnings;
    for (const auto& [text, repeats] : texts)
        warnings.push_back(repeats.size() == all.size() ? text
                                                        : fmt::format("repeat{} {}: {}", repeats.size() == 1 ? "" : "s",
                                                                      join(repeats, ", "), text));
    return warnings;
}

// The row's status and reason: ok where every repeat measured, else the first other status, with every
// repeat that did not measure named.
void combine_status(std::span<const BenchmarkSummary> all, std::size_t measured_count, store::BenchmarkRecord& row) {
    std::vector<std::string> reasons;
    std::optional<BenchmarkStatus> status;
    for (const auto& s : all) {
        if (s.benchmark.status == BenchmarkStatus::ok) continue;
        if (!status) status = s.benchmark.status;
        reasons.push_back(fmt::format("repeat {} of {} {}{}", s.benchmark.repeat + 1, all.size(),
                                      to_string(s.benchmark.status),
                                      s.benchmark.reason.empty() ? "" : ": " + s.benchmark.reason));
    }
    row.status = status.value_or(BenchmarkStatus::ok);
    if (reasons.empty()) return;
    reasons.push_back(fmt::format("figures from the {} repeat{} that measured", measured_count,
                                  measured_count == 1 ? "" : "s"));
    row.reason = join(reasons, "; ");
}

void combine_convergence(std::span<const BenchmarkSummary> all, store::BenchmarkRecord& row) {
    std::size_t not_converged = 0, converged = 0;
    for (const auto& s : all) {
        if (s.benchmark.status == BenchmarkStatus::skipped) continue;  // it measured nothing
        not_converged += s.benchmark.convergence == Convergence::not_converged ? 1 : 0;
        converged += s.benchmark.convergence == Convergence::converged ? 1 : 0;
    }
    row.convergence = not_converged > 0 ? Convergence::not_converged
                      : converged > 0   ? Convergence::converged
                                        : Convergence::fixed;
    if (not_converged > 0) row.stop_reason = fmt::format("{} of {} repeats did not converge", not_converged, all.size());
    else if (converged > 0) row.stop_reason = fmt::format("all {} repeats converged", all.size());
}

// Latency intervals are cut at the fastest iteration of any repeat, throughput and energy at 0.
FigureIntervals repeat_intervals(const Summaries& ok, double fastest_ns) {
    FigureIntervals ci;
    ci.method = fmt::format("Student t over {} repeats", ok.size());
    const auto over = [&](double least, auto get) -> std::optional<Interval> {
        const auto values = values_of(ok, get);
        return values ? at_least(t_interval(*values), least) : std::nullopt;
    };
    ci.mean = over(fastest_ns, [](const BenchmarkSummary& s) { return std::optional(s.e2e.mean); });
    ci.p50 = over(fastest_ns, [](const BenchmarkSummary& s) { return std::optional(s.e2e.p50); });
    ci.p90 = over(fastest_ns, [](const BenchmarkSummary& s) { return std::optional(s.e2e.p90); });
    ci.p99 = over(fastest_ns, [](const BenchmarkSummary& s) { return std::optional(s.e2e.p99); });
    ci.throughput = over(0, [](const BenchmarkSummary& s) { return std::optional(s.throughput_per_s); });
    ci.joules_per_inference = over(0, [](const BenchmarkSummary& s) { return s.telemetry.joules_per_inference; });
    return ci;
}

// One distribution of a generative or serving cell's repeats, as e2e's: each figure the mean over the repeats,
// Student-t intervals over their means and percentiles; nothing where a repeat lacks it. `get` gives a repeat's.
const LatencyDistribution* optional_of(const std::optional<LatencyDistribution>& d) { return d ? &*d : nullptr; }

template <typename Get>
std::optional<LatencyDistribution> combine_distribution(const Summaries& ok, Get get) {
    std::vector<const TimingSummary*> timings;
    std::vector<double> means, p50s, p99s;
    for (const auto* s : ok) {
        const LatencyDistribution* d = get(*s);
        if (!d) return std::nullopt;
        timings.push_back(&d->ns);
        means.push_back(d->ns.mean);
        p50s.push_back(d->ns.p50);
        p99s.push_back(d->ns.p99);
    }
    LatencyDistribution combined;
    combined.ns = mean_timing(timings);
    combined.mean_ci = at_least(t_interval(means), combined.ns.min);
    combined.p50_ci = at_least(t_interval(p50s), combined.ns.min);
    combined.p99_ci = at_least(t_interval(p99s), combined.ns.min);
    return combined;
}

// A generative cell's repeats (analysis/generation_metrics): latencies as above, rates and energy the means,
// peak memory the largest, generations summed; nothing where a repeat has no generation metrics.
std::optional<GenerationMetrics> combine_generation(const Summaries& ok) {
    for (const auto* s : ok)
        if (!s->generation) return std::nullopt;
    GenerationMetrics g = *ok.front()->generation;
    g.ttft = *combine_distribution(ok, [](const BenchmarkSummary& s) { return &s.generation->ttft; });
    g.e2e = *combine_distribution(ok, [](const BenchmarkSummary& s) { return &s.generation->e2e; });
    g.tpot = combine_distribution(ok, [](const BenchmarkSummary& s) { return optional_of(s.generation->tpot); });
    g.per_token = combine_distribution(ok, [](const BenchmarkSummary& s) { return optional_of(s.generation->per_token); });
    const auto of = [&](auto get) { return values_of(ok, [&](const BenchmarkSummary& s) { return get(*s.generation); }); };
    g.prefill_tokens_per_s = *mean_of(of([](const GenerationMetrics& m) { return std::optional(m.prefill_tokens_per_s); }));
    g.output_tokens_per_s = *mean_of(of([](const GenerationMetrics& m) { return std::optional(m.output_tokens_per_s); }));
    g.decode_tokens_per_s = mean_of(of([](const GenerationMetrics& m) { return m.decode_tokens_per_s; }));
    g.decode_steps_per_s = mean_of(of([](const GenerationMetrics& m) { return m.decode_steps_per_s; }));
    g.tokens_per_joule = mean_of(of([](const GenerationMetrics& m) { return m.tokens_per_joule; }));
    g.joules_per_token = mean_of(of([](const GenerationMetrics& m) { return m.joules_per_token; }));
    g.energy_j = sum_of(of([](const GenerationMetrics& m) { return m.energy_j; }));
    g.peak_gpu_memory_mib = max_of(of([](const GenerationMetrics& m) { return m.peak_gpu_memory_mib; }));
    g.peak_process_gpu_memory_mib = max_of(of([](const GenerationMetrics& m) { return m.peak_process_gpu_memory_mib; }));
    g.peak_rss_mib = max_of(of([](const GenerationMetrics& m) { return m.peak_rss_mib; }));
    g.generations = g.incomplete = 0;
    for (const auto* s : ok) {
        g.generations += s->generation->generations;
        g.incomplete += s->generation->incomplete;
    }
    return g;
}

// A serving cell's repeats (analysis/serving_metrics): latencies as above; requests, tokens, goodput's good
// requests and energy summed, the goodput fraction of the sums; rates and tokens per joule the means. MLPerf's
// verdict is of one run's requests: the combined row has none and says how many repeats were VALID. Nothing
// where a repeat has no serving summary.
std::optional<ServingSummary> combine_serving(const Summaries& ok) {
    for (const auto* s : ok)
        if (!s->serving) return std::nullopt;
    ServingSummary v = *ok.front()->serving;
    using S = const BenchmarkSummary&;
    v.ttft = combine_distribution(ok, [](S s) { return optional_of(s.serving->ttft); });
    v.tpot = combine_distribution(ok, [](S s) { return optional_of(s.serving->tpot); });
    v.chunk_gap = combine_distribution(ok, [](S s) { return optional_of(s.serving->chunk_gap); });
    v.per_token = combine_distribution(ok, [](S s) { return optional_of(s.serving->per_token); });
    v.e2e = combine_distribution(ok, [](S s) { return optional_of(s.serving->e2e); });
    const auto of = [&](auto get) { return values_of(ok, [&](S s) { return get(*s.serving); }); };
    v.output_tokens_per_s = mean_of(of([](const ServingSummary& m) { return m.output_tokens_per_s; }));
    v.requests_per_s = mean_of(of([](const ServingSummary& m) { return m.requests_per_s; }));
    v.tokens_per_joule = mean_of(of([](const ServingSummary& m) { return m.tokens_per_joule; }));
    v.joules_per_token = mean_of(of([](const ServingSummary& m) { return m.joules_per_token; }));
    v.energy_j = sum_of(of([](const ServingSummary& m) { return m.energy_j; }));
    std::vector<const TimingSummary*> per_user;
    for (const auto* s : ok)
        if (s->serving->output_tokens_per_s_per_user) per_user.push_back(&*s->serving->output_tokens_per_s_per_user);
    v.output_tokens_per_s_per_user.reset();
    if (per_user.size() == ok.size()) v.output_tokens_per_s_per_user = mean_timing(per_user);
    v.counts = {};
    v.token_counting = {};
    v.output_tokens = 0;
    std::map<RequestOutcome, std::int64_t> failures;
    std::map<std::int64_t, std::int64_t> statuses;
    std::int64_t good = 0, valid = 0, judged = 0;
    for (const auto* s : ok) {
        const ServingSummary& m = *s->serving;
        v.counts.sent += m.counts.sent;
        v.counts.ok += m.counts.ok;
        v.counts.warmup += m.counts.warmup;
        for (const auto& [outcome, count] : m.counts.failures) failures[outcome] += count;
        for (const auto& [status, count] : m.counts.http_statuses) statuses[status] += count;
        v.token_counting.from_usage += m.token_counting.from_usage;
        v.token_counting.from_chunks += m.token_counting.from_chunks;
        v.token_counting.unknown += m.token_counting.unknown;
        v.output_tokens += m.output_tokens;
        if (m.goodput) good += m.goodput->good;
        if (!m.verdict) continue;
        ++judged;
        if (m.verdict->valid) ++valid;
    }
    v.counts.failures.assign(failures.begin(), failures.end());
    v.counts.http_statuses.assign(statuses.begin(), statuses.end());
    if (v.goodput) {
        v.goodput->good = good;
        v.goodput->fraction = v.counts.sent > 0 ? static_cast<double>(good) / static_cast<double>(v.counts.sent) : 0.0;
        v.goodput->per_s = mean_of(of([](const ServingSummary& m) {
                               return m.goodput ? std::optional(m.goodput->per_s) : std::nullopt;
                           })).value_or(0.0);
    }
    v.verdict.reset();
    v.window_start_ns = v.window_end_ns = 0;  // each repeat had its own
    if (judged > 0)
        v.notes.push_back(fmt::format("MLPerf LLM Server verdict per repeat: {} of {} VALID", valid, judged));
    return v;
}

// A pipeline cell's repeats (analysis/pipeline_summary): images/s, e2e and each stage's figures the means over the
// repeats (a figure none where a repeat lacks it), batches and images summed; a stage that some repeat did not store
// is left out and said so. Nothing where a repeat has no pipeline summary.
std::optional<PipelineSummary> combine_pipeline(const Summaries& ok) {
    for (const auto* s : ok)
        if (!s->pipeline) return std::nullopt;
    using P = const PipelineSummary&;
    PipelineSummary p = *ok.front()->pipeline;
    const auto of = [&](auto get) { return values_of(ok, [&](const BenchmarkSummary& s) { return get(*s.pipeline); }); };
    std::vector<const TimingSummary*> e2e;
    for (const auto* s : ok) e2e.push_back(&s->pipeline->e2e);
    p.e2e = mean_timing(e2e);
    p.images_per_s = mean_of(of([](P m) { return std::optional(m.images_per_s); })).value_or(0);
    p.between_stages_pct = mean_of(of([](P m) { return std::optional(m.between_stages_pct); })).value_or(0);
    p.network_share_pct = mean_of(of([](P m) { return m.network_share_pct; }));
    p.gpu_idle_pct = mean_of(of([](P m) { return m.gpu_idle_pct; }));
    p.batches = p.images = 0;
    for (const auto* s : ok) {
        p.batches += s->pipeline->batches;
        p.images += s->pipeline->images;
        p.images_lower_bound = p.images_lower_bound || s->pipeline->images_lower_bound;
    }
    p.window_start_ns = p.window_end_ns = 0;  // each repeat had its own
    std::vector<StageFigures> stages;
    for (StageFigures f : p.stages) {
        const auto stage_of = [&](auto get) {
            return of([&](P m) { const auto* x = m.stage(f.stage); return x ? get(*x) : std::nullopt; });
        };
        const auto mean_ns = stage_of([](const StageFigures& x) { return std::optional(x.mean_ns); });
        if (!mean_ns) {
            p.notes.push_back(fmt::format("{} is not stored in every repeat: left out", to_string(f.stage)));
            continue;
        }
        f.mean_ns = mean(*mean_ns);
        f.share_pct = mean_of(stage_of([](const StageFigures& x) { return std::optional(x.share_pct); })).value_or(0);
        f.cpu_ns_per_image = mean_of(stage_of([](const StageFigures& x) { return x.cpu_ns_per_image; }));
        f.cores = mean_of(stage_of([](const StageFigures& x) { return x.cores; }));
        f.cores_while_running = mean_of(stage_of([](const StageFigures& x) { return x.cores_while_running; }));
        f.bound_images_per_s = mean_of(stage_of([](const StageFigures& x) { return x.bound_images_per_s; }));
        f.batches = f.images = 0;
        for (const auto* s : ok)
            if (const auto* x = s->pipeline->stage(f.stage)) {
                f.batches += x->batches;
                f.images += x->images;
            }
        stages.push_back(f);
    }
    p.stages = std::move(stages);
    p.bounding_stage = lowest_bound(p.stages);
    return p;
}

// The figures of two or more measured repeats: their means, extremes and sums, with intervals over them.
void combine_figures(const Summaries& ok, BenchmarkSummary& row) {
    std::vector<const TimingSummary*> e2e;
    for (const auto* s : ok) e2e.push_back(&s->e2e);
    row.e2e = mean_timing(e2e);
    row.compute = mean_device_time(ok, &BenchmarkSummary::compute);
    row.h2d = mean_device_time(ok, &BenchmarkSummary::h2d);
    row.d2h = mean_device_time(ok, &BenchmarkSummary::d2h);
    row.throughput_per_s =
        mean_of(values_of(ok, [](const BenchmarkSummary& s) { return std::optional(s.throughput_per_s); })).value_or(0);
    const auto load = values_of(ok, [](const BenchmarkSummary& s) {
        return s.benchmark.load_ns ? std::optional(static_cast<double>(*s.benchmark.load_ns)) : std::nullopt;
    });
    row.benchmark.load_ns = load ? std::optional(static_cast<std::int64_t>(mean(*load))) : std::nullopt;
    row.telemetry = combine_telemetry(ok);
    row.samples = 0;
    for (const auto* s : ok) row.samples += s->samples;
    row.throttle = combine_throttle(ok);
    row.scenario = combine_scenario(ok);
    row.ci = repeat_intervals(ok, row.e2e.min);
    row.generation = combine_generation(ok);
    row.serving = combine_serving(ok);
    row.pipeline = combine_pipeline(ok);
    const auto means = values_of(ok, [](const BenchmarkSummary& s) { return std::optional(s.e2e.mean); });
    if (!means) return;  // an imported log without a mean: no spread of the means either
    const double centre = mean(*means);
    double squares = 0;
    for (const double m : *means) squares += (m - centre) * (m - centre);
    if (centre > 0) row.cv_of_means_pct = 100 * std::sqrt(squares / static_cast<double>(means->size() - 1)) / centre;
}

}  // namespace

BenchmarkSummary combine_repeats(std::span<const BenchmarkSummary> repeats) {
    Summaries ok;
    for (const auto& s : repeats)
        if (measured(s)) ok.push_back(&s);
    BenchmarkSummary row = ok.empty() ? repeats.front() : *ok.front();
    combine_status(repeats, ok.size(), row.benchmark);
    combine_convergence(repeats, row.benchmark);
    row.warnings = combined_warnings(repeats);
    row.repeats = static_cast<std::int64_t>(ok.size());
    row.repeat_ids.clear();
    for (const auto& s : repeats) row.repeat_ids.push_back(s.benchmark.benchmark_id);
    // One measured repeat keeps its own figures and intervals.
    if (ok.size() >= 2) combine_figures(ok, row);
    if (!ok.empty()) {
        // As for one run (analysis/summary): where queries queue by design, their spread is the load's.
        WarningThresholds thresholds;
        if (row.scenario.settings && queues_by_design(row.scenario.settings->scenario))
            thresholds.max_cv_pct = std::numeric_limits<double>::infinity();
        const auto timing = timing_warnings(row.e2e, thresholds);
        row.warnings.insert(row.warnings.begin(), timing.begin(), timing.end());
    }
    return row;
}

std::vector<BenchmarkSummary> combine_cells(const std::vector<BenchmarkSummary>& summaries) {
    std::vector<BenchmarkSummary> rows;
    for (std::size_t begin = 0; begin < summaries.size();) {
        std::size_t end = begin + 1;
        const auto& first = summaries[begin].benchmark;
        while (end < summaries.size() && summaries[end].benchmark.run_id == first.run_id &&
               summaries[end].benchmark.ordinal == first.ordinal)
            ++end;
        if (end - begin == 1) rows.push_back(summaries[begin]);
        else rows.push_back(combine_repeats(std::span(summaries).subspan(begin, end - begin)));
        begin = end;
    }
    return rows;
}

}  // namespace inferbench::analysis
