#include "runner/load/scenario_run.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/metrics/scenario_metrics.hpp"
#include "core/statistics/scenario_verdict.hpp"
#include "core/splitmix64.hpp"
#include "core/time_units.hpp"
#include "runner/load/find_peak.hpp"
#include "runner/load/query_schedule.hpp"

namespace inferbench::runner {
namespace {

namespace sm = scenario_metrics;

// A query waiting this long (at least) ends a server run: the system fell behind.
constexpr std::int64_t kFallBehindFloorNs = 1'000'000'000;
constexpr std::int64_t kFallBehindBounds = 10;  // ... or this many latency bounds, if longer

// The server's arrivals get their own stream of the cell's seed (the inputs have theirs).
std::uint64_t schedule_seed(std::uint64_t seed) { return splitmix64_mix(seed ^ 0x5343484544554c45ULL); }

BackendMetric count_metric(std::string_view name, std::int64_t value, std::string_view unit = "count") {
    return {std::string(name), static_cast<double>(value), std::string(unit)};
}

struct Run {
    LoadPlan plan;
    LoadResult result;
};

class ScenarioRunner {
public:
    ScenarioRunner(const ScenarioInstances& instances, const BenchmarkSpec& spec, const LoopSettings& loop,
                   TraceSink sink, std::int64_t capacity, const std::atomic<std::int32_t>& stop, LoadClock& clock)
        : instances_(instances), spec_(spec), loop_(loop), sink_(sink), capacity_(capacity), stop_(stop), clock_(clock) {}

    // The plan of a run of the cell's scenario (a server's at `qps`).
    LoadPlan plan(double qps, double seconds_per_inference) const {
        const ScenarioSettings& s = spec_.scenario;
        LoadPlan plan;
        plan.batcher = uses_batcher(s);
        plan.max_queue_delay_ns = s.batcher_max_queue_delay_ns;
        plan.duration_ns = loop_.duration_ns;
        plan.min_queries = loop_.min_iterations;
        switch (s.scenario) {
            case Scenario::server:
                plan.schedule_ns = poisson_schedule(qps, loop_.duration_ns, loop_.min_iterations, capacity_,
                                                    schedule_seed(spec_.seed));
                plan.fall_behind_ns = std::max(kFallBehindFloorNs, kFallBehindBounds * s.latency_bound_ns);
                break;
            case Scenario::offline:
                plan.schedule_ns = offline_schedule(offline_inferences(seconds_per_inference, s.streams,
                                                                       loop_.duration_ns, loop_.min_iterations, capacity_));
                break;
            case Scenario::multi_stream: plan.inferences_per_query = inferences_per_query(s, spec_.batch_size); break;
            case Scenario::concurrency: plan.clients = s.concurrency; break;
            case Scenario::single_stream: break;
        }
        return plan;
    }

    Run run(LoadPlan plan) {
        sink_.published->store(0, std::memory_order_release);  // a find_peak step before this one is replaced
        Run run{std::move(plan), {}};
        run.result = run_load(instances_.streams(), run.plan, sink_, capacity_, stop_, clock_);
        return run;
    }

    // The verdict of the run just made, from the records it left in the sink.
    ScenarioVerdict judge(const Run& run) const {
        std::vector<std::int64_t> latencies;
        latencies.reserve(static_cast<std::size_t>(run.result.completed));
        ScenarioFacts judged = facts(run);
        for (std::int64_t i = 0; i < run.result.completed; ++i) {
            const IterationRecord& record = sink_.records[i];
            latencies.push_back(record.e2e_ns);
            const std::int64_t service = record.e2e_ns - record.queue_ns;
            if (judged.fastest_service_ns < 0 || service < judged.fastest_service_ns) judged.fastest_service_ns = service;
        }
        std::sort(latencies.begin(), latencies.end());
        return judge_scenario(spec_.scenario, latencies, judged);
    }

    ScenarioFacts facts(const Run& run) const {
        ScenarioFacts facts;
        facts.scheduled = run.result.scheduled;
        facts.issued = run.result.issued;
        facts.fell_behind = run.result.fell_behind;
        facts.schedule_span_ns = run.plan.schedule_ns.empty() || spec_.scenario.scenario != Scenario::server
                                     ? -1
                                     : run.plan.schedule_ns.back();
        facts.duration_ns = loop_.duration_ns;
        return facts;
    }

private:
    const ScenarioInstances& instances_;
    const BenchmarkSpec& spec_;
    const LoopSettings& loop_;
    TraceSink sink_;
    std::int64_t capacity_;
    const std::atomic<std::int32_t>& stop_;
    LoadClock& clock_;
};

std::vector<BackendMetric> run_metrics(const Run& run, const ScenarioFacts& facts) {
    const LoadResult& r = run.result;
    std::vector<BackendMetric> metrics = {
        count_metric(sm::kScheduledQueries, r.scheduled), count_metric(sm::kIssuedQueries, r.issued),
        count_metric(sm::kInferences, r.inferences), count_metric(sm::kLongestWait, r.longest_wait_ns, "ns"),
        count_metric(sm::kFellBehind, r.fell_behind ? 1 : 0, "flag")};
    if (run.plan.batcher) metrics.push_back(count_metric(sm::kPaddedSamples, r.padded_samples));
    if (facts.schedule_span_ns >= 0) metrics.push_back(count_metric(sm::kScheduleSpan, facts.schedule_span_ns, "ns"));
    return metrics;
}

std::vector<store::Series> peak_series(const PeakSearch& search) {
    std::vector<store::Series> series = {{std::string(sm::kPeakStepQps), {}},
                                         {std::string(sm::kPeakStepP99), {}},
                                         {std::string(sm::kPeakStepQueries), {}},
                                         {std::string(sm::kPeakStepPassed), {}}};
    for (const PeakStep& step : search.steps) {
        series[0].values.push_back(step.qps);
        series[1].values.push_back(ns_to_ms(step.p99_ns));
        series[2].values.push_back(static_cast<double>(step.queries));
        series[3].values.push_back(step.passed ? 1.0 : 0.0);
    }
    return series;
}

// The queries per second the instances could serve at the warm-up's pace: one query per inference, or
// a batch of them with the batcher.
double capacity_qps(const BenchmarkSpec& spec, double seconds_per_inference) {
    if (seconds_per_inference <= 0) return 1.0;
    const double per_inference = uses_batcher(spec.scenario) ? static_cast<double>(spec.batch_size) : 1.0;
    return static_cast<double>(spec.scenario.streams) * per_inference / seconds_per_inference;
}

}  // namespace

ScenarioInstances::ScenarioInstances(Backend& primary, const BenchmarkSpec& spec, const InstanceMaker& make)
    : primary_(&primary) {
    const std::vector<std::int64_t> sizes =
        uses_batcher(spec.scenario) ? batcher_batch_sizes(spec.batch_size) : std::vector<std::int64_t>{spec.batch_size};
    std::vector<std::int64_t> usable;
    for (const std::int64_t size : sizes) {
        if (size == spec.batch_size) {
            usable.push_back(size);
            continue;
        }
        try {
            owned_.push_back(make(size));
            usable.push_back(size);
        } catch (const std::exception& e) {
            notes_.push_back(fmt::format("batch {} not loadable ({}); smaller batches are padded", size, e.what()));
        }
    }
    for (std::int64_t stream = 0; stream < spec.scenario.streams; ++stream) {
        StreamInstances& instances = streams_.emplace_back();
        std::size_t made = 0;
        for (const std::int64_t size : usable) {
            Backend* backend = nullptr;
            if (stream == 0) {
                backend = size == spec.batch_size ? primary_ : owned_[made++].get();
            } else {
                owned_.push_back(make(size));
                backend = owned_.back().get();
            }
            instances.push_back({backend, size});
        }
    }
}

WarmupResult ScenarioInstances::warm_up_others(std::int64_t iterations, const std::atomic<std::int32_t>& stop) const {
    LoopSettings warm;
    warm.warmup_ns = 0;
    warm.warmup_iterations = std::max<std::int64_t>(iterations, 1);
    WarmupResult total;
    for (const StreamInstances& instances : streams_)
        for (const LoadInstance& instance : instances) {
            if (instance.backend == primary_) continue;
            const WarmupResult one = run_warmup(*instance.backend, warm, stop);
            total.iterations += one.iterations;
            total.elapsed_ns += one.elapsed_ns;
        }
    return total;
}

ScenarioOutcome run_scenario(const ScenarioInstances& instances, const BenchmarkSpec& spec, const LoopSettings& loop,
                             double seconds_per_inference, TraceSink sink, std::int64_t capacity,
                             const std::atomic<std::int32_t>& stop, LoadClock& clock) {
    ScenarioRunner runner(instances, spec, loop, sink, capacity, stop, clock);
    ScenarioOutcome outcome;
    double qps = spec.scenario.target_qps;
    // The outcome with the run kept (the last made: its records are the sink's) and its figures.
    const auto finish = [&](ScenarioOutcome done, const Run& run, double rate) {
        const auto metrics = run_metrics(run, runner.facts(run));
        done.metrics.insert(done.metrics.end(), metrics.begin(), metrics.end());
        if (spec.scenario.scenario == Scenario::server) done.metrics.push_back({std::string(sm::kTargetQps), rate, "qps"});
        if (run.plan.batcher) done.metrics.push_back(count_metric(sm::kSmallestBatch, instances.smallest_batch()));
        done.measured = {run.result.completed, run.result.wall_ns, run.result.stopped, StopOutcome{}};
        return done;
    };
    if (spec.scenario.scenario == Scenario::server && spec.scenario.find_peak) {
        const auto step = [&](double step_qps) {
            const Run run = runner.run(runner.plan(step_qps, seconds_per_inference));
            const ScenarioVerdict verdict = runner.judge(run);
            return PeakStep{step_qps, run.result.completed, verdict.percentile_ns,
                            verdict.valid.value_or(false) && !run.result.stopped};
        };
        const PeakSearch search = search_peak(capacity_qps(spec, seconds_per_inference), step, kMaxPeakSteps,
                                              kPeakPrecision, max_peak_qps(capacity, loop.duration_ns));
        outcome.series = peak_series(search);
        // The run kept: one at the confirmed peak (confirm_peak); where no passing rate passed again, the
        // last tried; where nothing passed at all, one at the lowest rate tried, to show why.
        std::optional<Run> kept;
        const PeakConfirmation confirmation = confirm_peak(search, [&](double rate) {
            kept = runner.run(runner.plan(rate, seconds_per_inference));
            return runner.judge(*kept).valid.value_or(false) && !kept->result.stopped;
        });
        outcome.metrics.push_back({std::string(sm::kPeakQps), confirmation.peak_qps, "qps"});
        if (search.at_max && confirmation.peak_qps >= search.peak_qps) outcome.metrics.push_back(count_metric(sm::kPeakAtMax, 1, "flag"));
        if (!confirmation.failed.empty()) {
            outcome.metrics.push_back({std::string(sm::kPeakUnconfirmedQps), confirmation.failed.front(), "qps"});
            outcome.metrics.push_back(
                count_metric(sm::kPeakUnconfirmed, static_cast<std::int64_t>(confirmation.failed.size())));
        }
        if (kept) return finish(std::move(outcome), *kept, confirmation.last_tried_qps);
        if (!search.steps.empty())
            qps = std::min_element(search.steps.begin(), search.steps.end(), [](const PeakStep& a, const PeakStep& b) {
                      return a.qps < b.qps;
                  })->qps;
    }
    return finish(std::move(outcome), runner.run(runner.plan(qps, seconds_per_inference)), qps);
}

}  // namespace inferbench::runner
