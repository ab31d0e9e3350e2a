// The harness's own cost per measured iteration: the null backend does nothing, so what is measured
// is the two clock reads, the virtual call, the record written to the shared trace buffer and its
// release store. Target on a 2-core machine: <= 200 ns per iteration (>= 5 million iterations/s),
// no worse than MLPerf LoadGen's null system under test.
//
//   build/release/bench/harness_overhead [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <atomic>
#include <string>

#include "backends/null/null_backend.hpp"
#include "runner/worker/measure_loop.hpp"
#include "runner/wire/trace_buffer.hpp"

namespace inferbench {
namespace {

// One runner::run_measured() call of `state.range(0)` iterations per benchmark iteration; reports ns per
// harness iteration, with the trace pages touched beforehand as the worker does.
void BM_MeasuredLoopNullBackend(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    auto backend = make_null_backend();
    runner::TraceBuffer trace = runner::TraceBuffer::create(n);
    trace.prefault(n);
    LoopSettings loop;
    loop.duration_ns = 3'600'000'000'000;
    loop.min_iterations = 1;
    loop.max_iterations = n;
    std::int64_t total = 0;
    for (auto _ : state) {
        trace.header().published.store(0);
        const auto result = runner::run_measured(*backend, loop, {trace.records(), &trace.header().published},
                                         trace.header().stop_requested);
        total += result.iterations;
        benchmark::DoNotOptimize(trace.records());
    }
    state.SetItemsProcessed(total);
    state.counters["ns_per_iteration"] =
        benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MeasuredLoopNullBackend)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same loop consulting a stopping criterion that never finishes: stdrel with min_time 1h (each
// iteration updates its mean, variance and noise window; once past min_time its settled test adds 512
// multiply-adds every 16th iteration, not included here), entropy with max_angle -1 (each iteration
// updates the entropy; every second one fits a line through the last 299). Arg 0: fixed, for reference.
void BM_MeasuredLoopCriterion(benchmark::State& state) {
    const std::int64_t n = 1'000'000;
    auto backend = make_null_backend();
    runner::TraceBuffer trace = runner::TraceBuffer::create(n);
    trace.prefault(n);
    LoopSettings loop;
    loop.duration_ns = 3'600'000'000'000;
    loop.stop_timeout_ns = 3'600'000'000'000;
    loop.min_iterations = 1;
    loop.max_iterations = n;
    loop.stop = kAllStopCriteria[state.range(0)];
    loop.min_time_ns = 3'600'000'000'000;
    loop.max_angle_deg = -1;
    std::int64_t total = 0;
    for (auto _ : state) {
        trace.header().published.store(0);
        total += runner::run_measured(*backend, loop, {trace.records(), &trace.header().published},
                              trace.header().stop_requested)
                     .iterations;
    }
    state.SetLabel(std::string(to_string(loop.stop)));
    state.counters["iterations_per_run"] = static_cast<double>(total) / static_cast<double>(state.iterations());
    state.counters["ns_per_iteration"] =
        benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MeasuredLoopCriterion)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same without prefaulting: the first touch of each trace page costs a page fault.
void BM_MeasuredLoopColdTrace(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    auto backend = make_null_backend();
    std::int64_t total = 0;
    for (auto _ : state) {
        state.PauseTiming();
        runner::TraceBuffer trace = runner::TraceBuffer::create(n);
        LoopSettings loop;
        loop.duration_ns = 3'600'000'000'000;
        loop.max_iterations = n;
        state.ResumeTiming();
        total += runner::run_measured(*backend, loop, {trace.records(), &trace.header().published},
                              trace.header().stop_requested)
                     .iterations;
    }
    state.SetItemsProcessed(total);
    state.counters["ns_per_iteration"] =
        benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MeasuredLoopColdTrace)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace inferbench

BENCHMARK_MAIN();
