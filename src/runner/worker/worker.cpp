#include "runner/worker/worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "runner/worker/crash_report.hpp"
#include "runner/worker/cuda_conditions.hpp"
#include "runner/worker/generation_loop.hpp"
#include "runner/worker/input_feed.hpp"
#include "runner/load/load_clock.hpp"
#include "runner/worker/measure_loop.hpp"
#include "runner/worker/pipeline_cell.hpp"
#include "runner/worker/serving_cell.hpp"
#include "runner/load/scenario_run.hpp"
#include "runner/wire/trace_buffer.hpp"
#include "runner/wire/worker_protocol.hpp"

namespace inferbench::runner {
namespace {

namespace wp = worker_protocol;

void send_event(const wp::Event& event) {
    const std::string line = wp::to_json(event).dump() + "\n";
    std::size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = write(wp::kEventFd, line.data() + written, line.size() - written);
        if (n <= 0) return;  // the orchestrator is gone; nothing left to tell
        written += static_cast<std::size_t>(n);
    }
}

// After the measured loop (never during it): the backend's per-layer times, where its options ask for
// them, and the figures it measured besides the iterations, as one Layers event. Nothing when the
// measurement was stopped.
void send_layer_times(Backend& backend, const TraceBuffer& trace, std::string& phase) {
    const auto& stop = trace.header().stop_requested;
    if (stop.load(std::memory_order_relaxed) != 0) return;
    phase = "layer profile";
    std::vector<LayerTime> layers = backend.profile_layers(stop);
    std::vector<BackendMetric> metrics = backend.measured_metrics();
    if (layers.empty() && metrics.empty()) return;
    send_event(wp::Layers{std::move(layers), std::move(metrics)});
}

// Every event is sent: the worker ends here, without tearing the backend down. Nothing after the last event is
// measured, and a framework's teardown can crash where its measurement did not (ONNX Runtime 1.29 freeing its
// pinned host memory at session teardown, CUDA error 800, on an H200), which would fail a complete benchmark.
[[noreturn]] void end_after_last_event() {
    std::fflush(nullptr);
    std::_Exit(0);
}

// Measured iterations expected from the warm-up's pace, with headroom: their pages are touched
// before measuring so the loop takes no page faults.
std::int64_t expected_iterations(const WarmupResult& warmup, const LoopSettings& loop) {
    if (warmup.iterations == 0 || warmup.elapsed_ns <= 0) return loop.min_iterations;
    const double per_iteration = static_cast<double>(warmup.elapsed_ns) / static_cast<double>(warmup.iterations);
    const double expected = 1.5 * static_cast<double>(planned_measure_ns(loop)) / std::max(per_iteration, 1.0);
    return std::max(loop.min_iterations, static_cast<std::int64_t>(std::min(expected, 1e12)));
}

// Records from a backend's own loop go into the shared trace exactly as the harness's loop writes them.
class TraceSinkAdapter final : public IterationSink {
public:
    explicit TraceSinkAdapter(TraceBuffer& trace) : trace_(trace) {}
    bool add(const IterationRecord& record) override {
        const std::int64_t i = trace_.header().published.load(std::memory_order_relaxed);
        if (i >= trace_.capacity()) return false;
        trace_.records()[i] = record;
        trace_.header().published.store(i + 1, std::memory_order_release);
        return i + 1 < trace_.capacity();
    }
    bool stop_requested() const override { return trace_.header().stop_requested.load(std::memory_order_relaxed) != 0; }

private:
    TraceBuffer& trace_;
};

// The orchestrator kills a worker past its timeout, but a stopped (SIGSTOP, Ctrl-Z) orchestrator
// cannot: the worker then ends itself and its group a little later than the orchestrator would have,
// so that the orchestrator, when it can act, always acts first and says why.
constexpr std::int64_t kOwnDeadlineMarginNs = 1'000'000'000;

void keep_own_deadline(std::int64_t timeout_ns) {
    if (timeout_ns <= 0) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns + kOwnDeadlineMarginNs);
    std::thread([deadline] {
        std::this_thread::sleep_until(deadline);
        kill(getpgrp() == getpid() ? -getpid() : getpid(), SIGKILL);
    }).detach();
}

int run_external_loop(Backend& backend, const LoopSettings& loop, TraceBuffer& trace, std::string& phase) {
    phase = "external loop";
    TraceSinkAdapter sink(trace);
    OwnLoopReport report = backend.run_own_loop(loop, sink);
    const auto records = trace.published();
    const std::int64_t wall_ns =
        records.empty() ? 0 : records.back().start_ns + records.back().e2e_ns - records.front().start_ns;
    send_event(wp::WarmupDone{report.warmup_iterations, report.warmup_ns});
    send_event(wp::Measured{static_cast<std::int64_t>(records.size()), wall_ns, sink.stop_requested()});
    send_layer_times(backend, trace, phase);
    end_after_last_event();
}

// Another instance of the cell's backend for a load scenario (runner/load/scenario_run), made as the first was.
std::unique_ptr<Backend> make_instance(const BackendRegistry& registry, const BenchmarkSpec& spec,
                                       const std::string& model_path, std::int64_t batch_size) {
    auto backend = registry.create(spec.backend);
    BenchmarkSpec cell = spec;
    cell.batch_size = batch_size;
    backend->load(model_path, cell);
    backend->prepare(InputFeed(cell, backend->inputs()).first());
    return backend;
}

// A scenario other than single_stream: the primary's warm-up (its pace sizes the run), the other
// instances, then the scenario's run on the query engine.
int run_scenario_cell(Backend& backend, const BackendRegistry& registry, const BenchmarkSpec& spec,
                      const std::string& model_path, const LoopSettings& loop, TraceBuffer& trace, std::string& phase) {
    const auto& stop = trace.header().stop_requested;
    phase = "warm-up";
    const WarmupResult warmup = run_warmup(backend, loop, stop);
    phase = "load instances";
    const ScenarioInstances instances(
        backend, spec, [&](std::int64_t batch) { return make_instance(registry, spec, model_path, batch); });
    for (const std::string& note : instances.notes()) std::fprintf(stderr, "inferbench worker: %s\n", note.c_str());
    phase = "warm-up";
    const WarmupResult others = instances.warm_up_others(loop.warmup_iterations, stop);
    send_event(wp::WarmupDone{warmup.iterations + others.iterations, warmup.elapsed_ns + others.elapsed_ns});
    const double server_queries = spec.scenario.scenario == Scenario::server
                                      ? spec.scenario.target_qps * static_cast<double>(loop.duration_ns) * 1.1e-9
                                      : 0.0;
    trace.prefault(std::max(expected_iterations(warmup, loop), static_cast<std::int64_t>(std::min(server_queries, 1e12))));
    phase = "measure";
    RealClock clock;
    const double pace = warmup.iterations > 0 ? static_cast<double>(warmup.elapsed_ns) * 1e-9 / static_cast<double>(warmup.iterations) : 0.0;
    ScenarioOutcome outcome = run_scenario(instances, spec, loop, pace, TraceSink{trace.records(), &trace.header().published},
                                           trace.capacity(), stop, clock);
    send_event(wp::Measured{outcome.measured.iterations, outcome.measured.wall_ns, outcome.measured.stopped,
                            outcome.measured.stop.convergence, outcome.measured.stop.reason, std::move(outcome.metrics),
                            std::move(outcome.series)});
    send_layer_times(backend, trace, phase);
    end_after_last_event();
}

// Between a generative cell's measured generations, untimed: the one just measured is kept, and once enough
// steps are kept they go to the orchestrator in a Generated event (the worker's memory stays bounded); then the
// cell's own conditions (the L2 flush).
class GenerationFlush final : public BetweenIterations {
public:
    static constexpr std::size_t kStepsPerEvent = 16384;

    GenerationFlush(GenerationIterations& generations, BetweenIterations* then) : generations_(generations), then_(then) {}
    void run() override {
        generations_.collect();
        send(kStepsPerEvent);
        if (then_) then_->run();
    }
    // After the loop: the last generation and everything still kept.
    void finish() {
        generations_.collect();
        send(0);
    }

private:
    void send(std::size_t min_steps) {
        if (auto batch = generations_.take(min_steps))
            send_event(wp::Generated{std::move(batch->generations), std::move(batch->first_tokens)});
    }
    GenerationIterations& generations_;
    BetweenIterations* then_;
};

// A generative cell (core/generation): the decoder's prompts prepared once, then one generation per iteration
// through the harness's own warm-up and measured loop; its steps go to the orchestrator in a Generated event.
int run_generation_cell(Backend& backend, const BenchmarkSpec& spec, std::int64_t load_ns,
                        std::vector<BackendMetric> metrics, CudaConditions& conditions, TraceBuffer& trace,
                        std::string& phase) {
    phase = "prepare";
    const DecoderInfo info = backend.decoder_info();
    if (const auto problem = generation_problem(spec, info)) throw UserError(*problem);
    const GenerationRequest request = generation_request(spec, info);
    GenerationIterations generations(backend, request, info);
    generations.prepare({});
    for (BackendMetric& metric : backend.prepared_metrics()) metrics.push_back(std::move(metric));
    for (BackendMetric& metric : decoder_metrics(info)) metrics.push_back(std::move(metric));
    phase = "measure conditions";
    for (auto& metric : conditions.after_prepare()) metrics.push_back(std::move(metric));
    send_event(wp::Loaded{load_ns, backend.version(), generations.inputs(), std::move(metrics)});

    const auto& stop = trace.header().stop_requested;
    generations.stop_when(&stop);
    const LoopSettings loop =
        within_capacity(spec.loop, !trace.is_ring()               ? trace.capacity()
                                   : spec.loop.max_iterations > 0 ? spec.loop.max_iterations
                                                                  : std::numeric_limits<std::int64_t>::max());
    phase = "warm-up";
    const WarmupResult warmup = run_warmup(generations, loop, stop, conditions.between());
    send_event(wp::WarmupDone{warmup.iterations, warmup.elapsed_ns});
    trace.prefault(expected_iterations(warmup, loop));
    phase = "measure";
    generations.start_recording();
    TraceSink sink{trace.records(), &trace.header().published};
    if (trace.is_ring()) {
        sink.consumed = &trace.header().consumed;
        sink.capacity = trace.capacity();
    }
    GenerationFlush flush(generations, conditions.between());
    const MeasureResult measured = run_measured(generations, loop, sink, stop, &flush);
    flush.finish();
    send_event(wp::Measured{measured.iterations, measured.wall_ns, measured.stopped, measured.stop.convergence,
                            measured.stop.reason});
    send_layer_times(backend, trace, phase);
    end_after_last_event();
}

// An image pipeline cell (runner/worker/pipeline_cell): its images and first batch prepared, then whole batches
// through the warm-up and the measured loop; their stages go to the orchestrator in PipelineStages events.
int run_pipeline_cell(Backend& backend, const BenchmarkSpec& spec, const std::string& model_path, std::int64_t load_ns,
                      std::vector<BackendMetric> metrics, CudaConditions& conditions, TraceBuffer& trace,
                      std::string& phase) {
    std::unique_ptr<pipeline::GpuStages> gpu;
    if (spec.pipeline.preprocess == StagePlace::gpu) {
        phase = "GPU stages";
        pipeline::GpuStagesOpening opening = pipeline::GpuStages::open({spec.device.index, {}, {}});
        if (!opening.stages) {
            send_event(wp::Skipped{"GPU pre-processing: " + opening.unavailable});
            end_after_last_event();
        }
        gpu = std::move(opening.stages);
    }
    phase = "pipeline images";
    PipelineCell cell(backend, spec, model_path, std::move(gpu));
    for (BackendMetric& metric : cell.metrics()) metrics.push_back(std::move(metric));
    for (BackendMetric& metric : backend.prepared_metrics()) metrics.push_back(std::move(metric));
    phase = "measure conditions";
    for (auto& metric : conditions.after_prepare()) metrics.push_back(std::move(metric));
    send_event(wp::Loaded{load_ns, backend.version(), backend.inputs(), std::move(metrics)});

    const auto& stop = trace.header().stop_requested;
    const LoopSettings loop =
        within_capacity(spec.loop, !trace.is_ring()               ? trace.capacity()
                                   : spec.loop.max_iterations > 0 ? spec.loop.max_iterations
                                                                  : std::numeric_limits<std::int64_t>::max());
    phase = "warm-up";
    const WarmupResult warmup = cell.warm_up(loop, stop);
    send_event(wp::WarmupDone{warmup.iterations, warmup.elapsed_ns});
    trace.prefault(expected_iterations(warmup, loop));
    phase = "measure";
    TraceSink sink{trace.records(), &trace.header().published};
    if (trace.is_ring()) {
        sink.consumed = &trace.header().consumed;
        sink.capacity = trace.capacity();
    }
    const MeasureResult measured = cell.measure(loop, sink, stop, send_event);
    send_event(wp::Measured{measured.iterations, measured.wall_ns, measured.stopped, measured.stop.convergence,
                            measured.stop.reason});
    send_layer_times(backend, trace, phase);
    end_after_last_event();
}

int run_benchmark(const BenchmarkSpec& spec, const std::string& model_path, TraceBuffer& trace) {
    std::string phase = "load";
    try {
        // Before anything can create the GPU's context: the sync mode applies to the context's creation.
        phase = "measure conditions";
        CudaConditions conditions(spec);
        phase = "load";
        const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
        auto backend = registry.create(spec.backend);
        if (backend->capabilities().serves_endpoint) {
            run_serving_cell(spec, model_path, trace, phase, send_event);
            end_after_last_event();
        }
        phase = "model conversion";
        ConvertedModel converted = backend->convert_model(model_path, spec);
        if (!converted.skip_reason.empty()) {
            send_event(wp::Skipped{std::move(converted.skip_reason)});
            return 0;
        }
        phase = "load";
        const std::int64_t load_begin = monotonic_ns();
        backend->load(converted.model_path, spec);
        // A compile made while converting (torch-aoti's package) is part of the load.
        const std::int64_t load_ns = converted.load_ns + (monotonic_ns() - load_begin);
        if (spec.generation.active())
            return run_generation_cell(*backend, spec, load_ns, std::move(converted.metrics), conditions, trace, phase);
        if (spec.pipeline.active())
            return run_pipeline_cell(*backend, spec, converted.model_path, load_ns, std::move(converted.metrics),
                                     conditions, trace, phase);

        phase = "prepare";
        const auto input_infos = backend->inputs();
        // A backend that runs its own loop hands the plan's input files to its tool itself and says what it fed
        // (in its prepared_metrics); the harness feeds the loops it drives.
        const bool own_loop = backend->capabilities().runs_own_loop;
        InputFeed feed(spec, input_infos, own_loop ? InputFeed::Source::random : InputFeed::Source::plan);
        backend->prepare(feed.first());
        std::vector<BackendMetric> metrics = std::move(converted.metrics);
        for (BackendMetric& metric : backend->prepared_metrics()) metrics.push_back(std::move(metric));
        phase = "measure conditions";
        for (auto& metric : conditions.after_prepare()) metrics.push_back(std::move(metric));
        // A load scenario's instances run at once: each feeds its first sample, none cycles.
        BetweenIterations* const between = spec.scenario.scenario == Scenario::single_stream
                                                ? feed.cycle_on(*backend, conditions.between())
                                                : conditions.between();
        for (auto& metric : feed.metrics()) metrics.push_back(std::move(metric));
        send_event(wp::Loaded{load_ns, backend->version(), input_infos, std::move(metrics)});

        // A ring that the orchestrator drains bounds nothing: the plan's max_iterations stands (0: no limit).
        const LoopSettings loop =
            within_capacity(spec.loop, !trace.is_ring()               ? trace.capacity()
                                       : spec.loop.max_iterations > 0 ? spec.loop.max_iterations
                                                                      : std::numeric_limits<std::int64_t>::max());
        if (own_loop) return run_external_loop(*backend, loop, trace, phase);
        if (spec.scenario.scenario != Scenario::single_stream)
            return run_scenario_cell(*backend, registry, spec, converted.model_path, loop, trace, phase);

        phase = "warm-up";
        const WarmupResult warmup = run_warmup(*backend, loop, trace.header().stop_requested, between);
        send_event(wp::WarmupDone{warmup.iterations, warmup.elapsed_ns});
        trace.prefault(expected_iterations(warmup, loop));

        phase = "measure";
        TraceSink sink{trace.records(), &trace.header().published};
        if (trace.is_ring()) {
            sink.consumed = &trace.header().consumed;
            sink.capacity = trace.capacity();
        }
        const MeasureResult measured =
            run_measured(*backend, loop, sink, trace.header().stop_requested, between);
        send_event(wp::Measured{measured.iterations, measured.wall_ns, measured.stopped, measured.stop.convergence,
                                measured.stop.reason});
        send_layer_times(*backend, trace, phase);
        end_after_last_event();
    } catch (const std::exception& e) {
        send_event(wp::Error{phase, e.what()});
        std::fprintf(stderr, "inferbench worker: %s failed: %s\n", phase.c_str(), e.what());
        return wp::kExitBenchmarkError;
    }
}

}  // namespace

int worker_main() {
    install_crash_report();
    wp::Request request;
    try {
        const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
        request = wp::request_from_json(nlohmann::json::parse(text));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "inferbench worker: bad request (this command is started by inferbench run): %s\n",
                     e.what());
        return wp::kExitProtocolError;
    }
    keep_own_deadline(request.spec.timeout_ns);
    try {
        TraceBuffer trace = TraceBuffer::attach(wp::kTraceFd);
        return run_benchmark(request.spec, request.model_path, trace);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "inferbench worker: %s\n", e.what());
        return wp::kExitProtocolError;
    }
}

}  // namespace inferbench::runner
