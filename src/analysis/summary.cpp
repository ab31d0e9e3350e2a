#include "analysis/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "analysis/default_run.hpp"
#include "analysis/placement.hpp"
#include "core/error.hpp"
#include "core/metrics/host_stage_metrics.hpp"
#include "core/metrics/load_metrics.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/metrics/model_metrics.hpp"
#include "core/metrics/profile_metrics.hpp"
#include "core/metrics/quantization_metrics.hpp"
#include "core/metrics/scenario_metrics.hpp"
#include "core/metrics/server_metrics.hpp"
#include "core/time_units.hpp"
#include "core/metrics/trtexec_metrics.hpp"
#include "core/units.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace inferbench::analysis {

namespace {

// A benchmark that hit max_iterations before its duration measured less time than asked for.
std::optional<std::string> cut_short_warning(const CellSettings& settings, std::int64_t count, std::int64_t wall_ns) {
    const auto max_iterations = settings.max_iterations.value_or(0);
    const auto duration_ns = settings.duration_ns.value_or(0);
    // A criterion's loop has no duration; where it hit max_iterations, it did not converge, which it says.
    if (settings.criterion != StopCriterion::fixed) return std::nullopt;
    if (max_iterations <= 0 || count < max_iterations || wall_ns >= duration_ns) return std::nullopt;
    return fmt::format("stopped at max_iterations ({}) after {}, before the {} duration; raise --max-iterations "
                       "(0: no limit) to measure longer",
                       max_iterations, format_latency(static_cast<double>(wall_ns)), format_duration(duration_ns));
}

// A benchmark whose stopping criterion gave up: its figures are not as precise as the plan asked. One that
// measured nothing (skipped, failed) has no figures to qualify: its reason says why.
std::optional<std::string> convergence_warning(const store::BenchmarkRecord& benchmark) {
    if (benchmark.convergence != Convergence::not_converged || benchmark.status != BenchmarkStatus::ok)
        return std::nullopt;
    return fmt::format("did not converge: {}", benchmark.stop_reason.empty() ? "the measured loop did not end"
                                                                               : benchmark.stop_reason);
}

double metric_or_nan(const std::map<std::string, double, std::less<>>& metrics, std::string_view name) {
    const auto it = metrics.find(name);
    return it == metrics.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

// trtexec's aggregates of one quantity ("<quantity>_<stat>_ms"), in ns. What trtexec did not print
// (the standard deviation, often p90 and p95) stays NaN, which every report shows as empty.
std::optional<TimingSummary> timing_from_metrics(const std::map<std::string, double, std::less<>>& metrics,
                                                 std::string_view quantity, std::int64_t count) {
    const auto ns = [&](std::string_view stat) {
        return ms_to_ns(metric_or_nan(metrics, trtexec_metrics::statistic_name(quantity, stat)));
    };
    if (!metrics.contains(trtexec_metrics::statistic_name(quantity, trtexec_metrics::kMean))) return std::nullopt;
    TimingSummary timing;
    timing.count = count;
    timing.min = ns(trtexec_metrics::kMin);
    timing.max = ns(trtexec_metrics::kMax);
    timing.mean = ns(trtexec_metrics::kMean);
    timing.p50 = ns(trtexec_metrics::kMedian);
    timing.p90 = ns(trtexec_metrics::percentile(90));
    timing.p95 = ns(trtexec_metrics::percentile(95));
    timing.p99 = ns(trtexec_metrics::percentile(99));
    timing.p999 = ns(trtexec_metrics::percentile(99.9));
    timing.stdev = timing.cv_pct = std::numeric_limits<double>::quiet_NaN();
    return timing;
}

// A benchmark without iterations but with a tool's own figures (`inferbench import trtexec`):
// end-to-end is trtexec's End-to-End Host Latency where printed, else its (host) Latency.
BenchmarkSummary summarize_from_metrics(const store::BenchmarkRecord& benchmark,
                                        std::span<const store::Metric> stored) {
    std::map<std::string, double, std::less<>> metrics;
    for (const auto& metric : stored) metrics[metric.name] = metric.value;
    BenchmarkSummary summary;
    summary.benchmark = benchmark;
    summary.settings = cell_settings(benchmark);
    const double queries = metric_or_nan(metrics, trtexec_metrics::kQueries);
    const auto count = std::isfinite(queries) ? static_cast<std::int64_t>(std::llround(queries)) : 0;
    auto e2e = timing_from_metrics(metrics, trtexec_metrics::kE2eHostLatency, count);
    if (!e2e) e2e = timing_from_metrics(metrics, trtexec_metrics::kHostLatency, count);
    if (e2e) summary.e2e = *e2e;
    summary.compute = timing_from_metrics(metrics, trtexec_metrics::kGpuCompute, count);
    // trtexec counts queries; each query runs the whole batch.
    const double qps = metric_or_nan(metrics, trtexec_metrics::kThroughputQps);
    summary.throughput_per_s = std::isfinite(qps) ? qps * static_cast<double>(benchmark.batch_size) : 0.0;
    summary.samples = count * benchmark.batch_size;
    summary.warnings.push_back(fmt::format("imported from a {} log: statistics as {} computed them",
                                           benchmark.backend, benchmark.backend));
    summary.warnings.insert(summary.warnings.end(), summary.settings.imported_warnings.begin(),
                            summary.settings.imported_warnings.end());
    return summary;
}

ModelFigures model_figures(std::span<const store::Metric> metrics) {
    ModelFigures model;
    model.parameters = store::find_metric(metrics, model_metrics::kParameters);
    model.macs_per_inference = store::find_metric(metrics, model_metrics::kMacsPerInference);
    model.flops_per_inference = store::find_metric(metrics, model_metrics::kFlopsPerInference);
    model.bytes_per_inference = store::find_metric(metrics, model_metrics::kBytesPerInference);
    model.cost_unknown_nodes = store::find_metric(metrics, model_metrics::kCostUnknownNodes);
    model.cost_data_dependent_nodes = store::find_metric(metrics, model_metrics::kCostDataDependentNodes);
    return model;
}

// The samples (inferences) one stored record stands for: a query of one batch, of samples_per_query
// (multi_stream), of one sample (the batcher).
std::int64_t samples_per_stored_record(const store::BenchmarkRecord& benchmark) {
    const auto scenario = stored_scenario(benchmark);
    return scenario ? samples_per_record(*scenario, benchmark.batch_size) : benchmark.batch_size;
}

// Figures a tool's log gave in place of iterations (not the model-cost figures every run stores).
bool has_tool_figures(std::span<const store::Metric> metrics) {
    return std::any_of(metrics.begin(), metrics.end(), [](const store::Metric& m) {
        return !m.name.starts_with(model_metrics::kPrefix) && !m.name.starts_with(quantization_metrics::kPrefix) &&
               !m.name.starts_with(profile_metrics::kPrefix) && !m.name.starts_with(host_stage_metrics::kPrefix) &&
               !load_metrics::is_load_metric(m.name) && !m.name.starts_with(harness_metrics::kPrefix) &&
               !m.name.starts_with(scenario_metrics::kPrefix) && !m.name.starts_with(server_metrics::kPrefix);
    });
}

LoadFigures load_figures(std::span<const store::Metric> metrics) {
    LoadFigures load;
    load.compile_seconds = store::find_metric(metrics, load_metrics::kCompileSeconds);
    if (const auto hit = store::find_metric(metrics, load_metrics::kCompileCacheHit)) load.compile_cache_hit = *hit != 0;
    load.cuda_graph_fallback = store::find_metric(metrics, load_metrics::kCudaGraphFallback).value_or(0) != 0;
    return load;
}

// The idle power of the GPUs whose samples these are, together; unset unless each has a baseline.
std::optional<double> idle_power_w(std::span<const GpuSample> gpu, const std::map<int, GpuFacts>& gpus) {
    std::map<int, double> idle;
    for (const auto& s : gpu) {
        if (idle.contains(s.gpu_index)) continue;
        const auto it = gpus.find(s.gpu_index);
        if (it == gpus.end() || !it->second.idle || !it->second.idle->power_w) return std::nullopt;
        idle[s.gpu_index] = *it->second.idle->power_w;
    }
    if (idle.empty()) return std::nullopt;
    double sum = 0;
    for (const auto& [index, watts] : idle) sum += watts;
    return sum;
}

// Power, energy, clocks, heat, memory and CPU from the benchmark's telemetry samples, and their warnings.
// Energy counts every measured record (the phase's), whatever the statistics keep.
void add_telemetry(std::span<const GpuSample> all_gpu, std::span<const CpuSample> cpu,
                   std::span<const TelemetrySource> sources, std::int64_t records,
                   const std::map<int, GpuFacts>& gpus, BenchmarkSummary& summary) {
    const auto& b = summary.benchmark;
    const auto gpu = benchmark_gpu_samples(all_gpu, b.device);
    if (gpu.empty() && cpu.empty() && sources.empty()) return;
    const std::int64_t wall_ns = b.measured_wall_ns.value_or(0);
    summary.telemetry = summarize_telemetry(gpu, cpu, sources, records * samples_per_stored_record(b), wall_ns,
                                            idle_power_w(gpu, gpus));
    const auto device = parse_device(b.device);
    if (device && device->kind == DeviceKind::cuda) {
        if (const auto joules = summary.telemetry.joules_per_inference)
            summary.ci.joules_per_inference = energy_interval(*joules, gpu, summary.ci.throughput, summary.throughput_per_s);
        const auto warnings = telemetry_warnings(summary.telemetry, gpu);
        summary.warnings.insert(summary.warnings.end(), warnings.begin(), warnings.end());
    }
}

}  // namespace

std::optional<double> ModelFigures::achieved_flops_per_s(double throughput_per_s) const {
    if (!flops_per_inference || throughput_per_s <= 0) return std::nullopt;
    return *flops_per_inference * throughput_per_s;
}

std::optional<double> HostStageFigures::share_pct() const {
    if (!e2e_mean_ns || *e2e_mean_ns <= 0 || (!pre_mean_ns && !post_mean_ns)) return std::nullopt;
    return 100 * (pre_mean_ns.value_or(0) + post_mean_ns.value_or(0)) / *e2e_mean_ns;
}

std::vector<std::string> LoadFigures::notes() const {
    std::vector<std::string> notes;
    if (compile_cache_hit.value_or(false)) {
        notes.push_back("compiled file from the cache: its compile is not in the load time");
    } else if (compile_seconds) {
        notes.push_back(fmt::format("load includes a {:.1f} s compile", *compile_seconds));
    }
    if (cuda_graph_fallback) notes.push_back("no CUDA graph: capture failed, measured without one (see the stored output)");
    return notes;
}

std::optional<std::string> InputFigures::described() const {
    if (file.empty()) return seed ? std::optional{fmt::format("random (seed {})", *seed)} : std::nullopt;
    if (!samples) return file;
    return fmt::format("{} ({:.0f} sample{}{})", file, *samples, *samples == 1 ? "" : "s",
                       cycled ? ", cycled" : (*samples > 1 ? ", the first alone" : ""));
}

bool ModelFigures::cost_complete() const {
    return cost_unknown_nodes.value_or(0) == 0 && cost_data_dependent_nodes.value_or(0) == 0;
}

std::optional<std::string> ModelFigures::incomplete_cost_reason() const {
    if (cost_complete()) return std::nullopt;
    std::vector<std::string> parts;
    const double unknown = cost_unknown_nodes.value_or(0);
    const double data_dependent = cost_data_dependent_nodes.value_or(0);
    if (unknown > 0)
        parts.push_back(fmt::format("{:.0f} node{} not costed (FLOPs and bytes are lower bounds)", unknown,
                                    unknown == 1 ? "" : "s"));
    if (data_dependent > 0)
        parts.push_back(fmt::format("{:.0f} node{} costed at the largest sizes the data allows (FLOPs and bytes are "
                                    "upper bounds)",
                                    data_dependent, data_dependent == 1 ? "" : "s"));
    return fmt::format("model cost not a total: {}", fmt::join(parts, "; "));
}

std::vector<std::int64_t> benchmark_ids(const BenchmarkSummary& s) {
    if (!s.repeat_ids.empty()) return s.repeat_ids;
    if (s.benchmark.benchmark_id > 0) return {s.benchmark.benchmark_id};
    return {};
}

namespace {

// What a benchmark's summary reads of its sorted latencies beyond their timing summary: the percentiles'
// intervals and the scenario's verdict (analysis/iteration_statistics: asked of a recorder, then read).
SortedReader e2e_reads(const store::BenchmarkRecord& benchmark, std::span<const store::Metric> metrics) {
    return [&benchmark, metrics](const SortedValues& sorted) {
        FigureIntervals ci;
        add_percentile_intervals(sorted, ci);
        (void)scenario_verdict(benchmark, sorted, metrics);
    };
}

}  // namespace

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark, const IterationStatistics& iterations) {
    BenchmarkSummary summary;
    summary.benchmark = benchmark;
    summary.settings = cell_settings(benchmark);
    if (auto convergence = convergence_warning(benchmark)) summary.warnings.push_back(std::move(*convergence));
    if (iterations.count == 0) return summary;
    summary.e2e = summarize(iterations.e2e.sorted, iterations.e2e.moments);
    summary.ci = iteration_intervals(iterations, samples_per_stored_record(benchmark));
    const auto timing = [](const ColumnFigures& column) -> std::optional<TimingSummary> {
        if (column.count() == 0) return std::nullopt;
        return summarize(column.sorted, column.moments);
    };
    summary.compute = timing(iterations.compute);
    summary.h2d = timing(iterations.h2d);
    summary.d2h = timing(iterations.d2h);
    const std::int64_t wall_ns = benchmark.measured_wall_ns.value_or(
        iterations.last.start_ns + iterations.last.e2e_ns - iterations.first.start_ns);
    const std::int64_t per_record = samples_per_stored_record(benchmark);
    summary.samples = per_record * summary.e2e.count;
    summary.throughput_per_s = throughput_per_s(per_record, summary.e2e.count, wall_ns);
    // Where queries queue by design, their spread is the load's, not noise.
    WarningThresholds thresholds;
    const auto scenario = stored_scenario(benchmark);
    if (scenario && queues_by_design(scenario->scenario)) thresholds.max_cv_pct = std::numeric_limits<double>::infinity();
    const auto timing_notes = timing_warnings(summary.e2e, thresholds);
    summary.warnings.insert(summary.warnings.end(), timing_notes.begin(), timing_notes.end());
    if (auto cut = cut_short_warning(summary.settings, summary.e2e.count, wall_ns)) summary.warnings.push_back(*cut);
    return summary;
}

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations) {
    return summarize_benchmark(benchmark, iteration_statistics(IterationsInMemory(iterations), e2e_reads(benchmark, {})));
}

namespace {

// The time throughput divides by, where the measured wall time is not it: with work between the iterations
// (l2_flush, the next input sample prepared) the iterations' own time (that work is no part of the model's);
// under discard, the kept iterations' share of the time (by their end-to-end latencies).
void adjust_throughput(const store::BenchmarkRecord& benchmark, const IterationStatistics& all,
                       const IterationStatistics& used, bool work_between, BenchmarkSummary& summary) {
    const bool discarded = used.count != all.count;
    if ((!work_between && !discarded) || used.count == 0) return;
    const double all_ns = all.e2e_sum_ns;
    const double wall_ns = static_cast<double>(
        benchmark.measured_wall_ns.value_or(all.last.start_ns + all.last.e2e_ns - all.first.start_ns));
    const double time_ns = (work_between ? all_ns : wall_ns) * (all_ns > 0 ? used.e2e_sum_ns / all_ns : 1.0);
    summary.throughput_per_s = throughput_per_s(samples_per_stored_record(benchmark), used.count,
                                                static_cast<std::int64_t>(time_ns));
    // The interval came from the gaps between the iterations' starts, which hold the work between them and the
    // discarded iterations this figure leaves out: it is not this figure's interval, so there is none.
    summary.ci.throughput.reset();
    if (discarded && !work_between)
        summary.warnings.push_back(
            "throughput of the kept iterations is an estimate: the measured time scaled by their share of the "
            "summed latencies");
}

// The iterations the throttle flags judge, in memory: only a CUDA benchmark under flag or discard is judged
// (each iteration by the GPU samples around it), so only its stored iterations are read into memory.
std::vector<IterationRecord> held_for_throttling(const store::MeasuredBenchmark& measured, const IterationSource& source,
                                                 const MeasureConditions& conditions) {
    std::vector<IterationRecord> held;
    if (!measured.iterations.empty() || !judges_throttling(measured.record, conditions)) return held;
    source.for_each_chunk([&](std::span<const IterationRecord> chunk) { held.insert(held.end(), chunk.begin(), chunk.end()); });
    return held;
}

// A generative benchmark's metrics; its iterations (one per generation: few) held for them where the caller
// walks them through the store. A benchmark none of whose generations is whole says so instead.
void add_generation(const store::MeasuredBenchmark& measured, const IterationSource& source, BenchmarkSummary& summary) {
    if (!is_generative(measured.record) || measured.generations.empty()) return;
    std::vector<IterationRecord> held;
    if (measured.iterations.empty())
        source.for_each_chunk([&](std::span<const IterationRecord> chunk) { held.insert(held.end(), chunk.begin(), chunk.end()); });
    try {
        summary.generation = generation_metrics(measured, held);
    } catch (const UserError& e) {
        summary.warnings.emplace_back(e.what());
    }
}

// A serving cell's metrics from its requests, under the SLOs stored with its workload; energy from its GPU's
// samples where its device is a GPU, else from the CPU package's RAPL readings (a server on the CPU has no GPU
// energy of its own).
void add_serving(const store::MeasuredBenchmark& measured, BenchmarkSummary& summary) {
    if (measured.served_requests.empty()) return;
    const ServingSlos slos = measured.serving_workload ? measured.serving_workload->slos : ServingSlos{};
    const auto device = parse_device(measured.record.device);
    const bool on_gpu = device && device->kind == DeviceKind::cuda;
    std::vector<GpuSample> gpu;
    if (on_gpu) gpu = benchmark_gpu_samples(measured.gpu_samples, measured.record.device);
    const std::span<const CpuSample> cpu = on_gpu ? std::span<const CpuSample>{} : std::span(measured.cpu_samples);
    try {
        summary.serving = serving_summary(measured.served_requests, slos, gpu, cpu);
    } catch (const UserError& e) {
        summary.warnings.emplace_back(e.what());
    }
}

// A pipeline cell's stage figures from its stored stages (carried in its record, read by read_measured) and its
// iterations, held for them where the caller walks them through the store. The stages are not kept in the
// summary's record: a report holds many summaries.
void add_pipeline(const store::MeasuredBenchmark& measured, const IterationSource& source, BenchmarkSummary& summary) {
    summary.benchmark.pipeline_stages = {};
    if (measured.record.pipeline_stages.empty()) return;
    std::vector<IterationRecord> held;
    if (measured.iterations.empty())
        source.for_each_chunk([&](std::span<const IterationRecord> chunk) { held.insert(held.end(), chunk.begin(), chunk.end()); });
    try {
        summary.pipeline = pipeline_summary(measured.iterations.empty() ? held : measured.iterations,
                                            measured.record.pipeline_stages, pipeline_facts(measured.record));
    } catch (const UserError& e) {
        summary.warnings.emplace_back(e.what());
    }
}

}  // namespace

BenchmarkSummary summarize_measured(const store::MeasuredBenchmark& measured, const IterationSource& source,
                                    const std::map<int, GpuFacts>& gpus) {
    const MeasureConditions conditions = cell_settings(measured.record).conditions.value_or(MeasureConditions{});
    const SortedReader reads = e2e_reads(measured.record, measured.metrics);
    const IterationStatistics all = iteration_statistics(source, reads);
    const std::vector<IterationRecord> held = held_for_throttling(measured, source, conditions);
    ThrottleJudgement throttle =
        judge_throttling(measured, held.empty() ? std::span(measured.iterations) : std::span(held), conditions, gpus);
    const bool discarding = throttle.summary && throttle.summary->discarded > 0;
    std::optional<IterationStatistics> kept;
    if (discarding) kept = iteration_statistics(IterationsInMemory(throttle.kept), reads);
    const IterationStatistics& used = kept ? *kept : all;
    BenchmarkSummary summary = all.count == 0 && has_tool_figures(measured.metrics)
                                   ? summarize_from_metrics(measured.record, measured.metrics)
                                   : summarize_benchmark(measured.record, used);
    summary.inputs = {summary.settings.inputs, store::find_metric(measured.metrics, harness_metrics::kInputSamples),
                      store::find_metric(measured.metrics, harness_metrics::kInputsCycled).value_or(0) != 0,
                      summary.settings.seed};
    adjust_throughput(measured.record, all, used, conditions.l2_flush || summary.inputs.cycled, summary);
    summary.throttle = throttle.summary;
    if (summary.throttle)
        for (auto& note : throttle_notes(*summary.throttle)) summary.warnings.push_back(std::move(note));
    for (auto& note : condition_notes(measured, conditions, gpus)) summary.warnings.push_back(std::move(note));
    summary.model = model_figures(measured.metrics);
    summary.scenario = summarize_scenario(measured.record, all, measured.metrics, measured.series);
    summary.quantization = {store::find_metric(measured.metrics, quantization_metrics::kOutputCosine),
                            store::find_metric(measured.metrics, quantization_metrics::kTop1Agreement),
                            store::find_metric(measured.metrics, quantization_metrics::kWeightMaxLevel),
                            store::find_metric(measured.metrics, quantization_metrics::kWeightRangeReason)};
    summary.profile_check = {store::find_metric(measured.metrics, profile_metrics::kRuns),
                             store::find_metric(measured.metrics, profile_metrics::kRuntimeMedianNs),
                             store::find_metric(measured.metrics, profile_metrics::kEventsMedianNs),
                             store::find_metric(measured.metrics, profile_metrics::kRuntimeOverEvents)};
    summary.host_stages = {store::find_metric(measured.metrics, host_stage_metrics::kIterations),
                           store::find_metric(measured.metrics, host_stage_metrics::kPreMeanNs),
                           store::find_metric(measured.metrics, host_stage_metrics::kPostMeanNs),
                           store::find_metric(measured.metrics, host_stage_metrics::kE2eMeanNs)};
    summary.load = load_figures(measured.metrics);
    add_telemetry(measured.gpu_samples, measured.cpu_samples, measured.telemetry_sources,
                  discarding ? all.count : summary.e2e.count, gpus, summary);
    if (auto placement = placement_warning(measured.record.device, measured.layer_times))
        summary.warnings.push_back(std::move(*placement));
    add_generation(measured, source, summary);
    add_serving(measured, summary);
    add_pipeline(measured, source, summary);
    return summary;
}

BenchmarkSummary summarize_measured(const store::MeasuredBenchmark& measured, const std::map<int, GpuFacts>& gpus) {
    return summarize_measured(measured, IterationsInMemory(measured.iterations), gpus);
}

namespace {

// A benchmark's iterations in a vector of their count (ResultsStore::iterations grows one chunk by chunk, up to
// twice the rows' size): a report holds a group's rows, and the size is its memory.
std::vector<IterationRecord> stored_iterations(const store::ResultsStore& results, std::int64_t benchmark_id) {
    std::vector<IterationRecord> rows;
    rows.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, results.iteration_count(benchmark_id))));
    results.for_each_iteration_chunk(benchmark_id, [&](std::span<const IterationRecord> chunk) {
        rows.insert(rows.end(), chunk.begin(), chunk.end());
    });
    return rows;
}

}  // namespace

store::MeasuredBenchmark read_measured(const store::ResultsStore& results, const store::BenchmarkRecord& benchmark,
                                       bool with_iterations) {
    const auto id = benchmark.benchmark_id;
    store::MeasuredBenchmark measured{benchmark,
                                      with_iterations ? stored_iterations(results, id) : std::vector<IterationRecord>{},
                                      results.metrics(id),
                                      results.gpu_samples(id),
                                      results.cpu_samples(id),
                                      results.telemetry_sources(id),
                                      results.layer_times(id),
                                      results.series(id)};
    if (is_generative(benchmark)) measured.generations = results.generations(id);
    measured.served_requests = results.served_requests(id);
    measured.serving_workload = results.serving_workload(id);
    measured.record.pipeline_stages = results.pipeline_stages(id);
    return measured;
}

namespace {

BenchmarkSummary summarize_in_run(const store::MeasuredBenchmark& measured, const IterationSource& iterations,
                                  std::span<const store::RunRecord> runs) {
    const auto& b = measured.record;
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.run_id == b.run_id; });
    RunContext context;
    if (run != runs.end()) context = run_context(*run, b);
    BenchmarkSummary summary = summarize_measured(measured, iterations, context.gpus);
    summary.run = std::move(context);
    return summary;
}

}  // namespace

BenchmarkSummary summarize_stored(const store::MeasuredBenchmark& measured, std::span<const store::RunRecord> runs) {
    return summarize_in_run(measured, IterationsInMemory(measured.iterations), runs);
}

BenchmarkSummary summarize_stored(const store::ResultsStore& results, const store::BenchmarkRecord& benchmark,
                                  std::span<const store::RunRecord> runs) {
    const store::MeasuredBenchmark measured = read_measured(results, benchmark, false);
    return summarize_in_run(measured, StoredIterations(results, benchmark.benchmark_id), runs);
}

std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id) {
    if (!run_id) run_id = default_run(results).run_id;
    std::vector<BenchmarkSummary> summaries;
    const auto runs = results.runs();
    for (const auto& benchmark : results.benchmarks(run_id))
        summaries.push_back(summarize_stored(results, benchmark, runs));
    if (summaries.empty() && !results.benchmarks(std::nullopt).empty()) {
        // An unknown run id: say which exist.
        throw UserError(fmt::format("{}: run {} has no benchmarks; list runs with `inferbench summary --runs`",
                                    results.path().string(), *run_id));
    }
    return summaries;
}

}  // namespace inferbench::analysis
