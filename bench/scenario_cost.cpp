// The load scenarios' own cost, beside MLPerf LoadGen's on this machine: the server scenario on the null
// backend (nothing to infer, so every microsecond of latency, from a query's scheduled arrival to its
// completion, is the harness's) at 100k and 300k queries per second, judged as `summary` judges a stored
// run (LoadGen's p99, early stopping, every scheduled query issued); and single_stream's closed loop, in
// queries per second. Targets (2 cores): 100k QPS VALID with p99 <= 10 us, 300k QPS VALID with p99 <= 100 us.
// The queries run in this process as they run in a worker (runner/load_engine on the real clock, the
// records written to a prefaulted trace buffer); the load average is printed, as the host may be shared,
// and so is how often the kernel preempted the measuring thread: queries arriving while it is off its CPU
// wait for it, which no harness can hide.
//
//   build/release/bench/scenario_cost [SECONDS=5] [REPEATS=3]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/null/null_backend.hpp"
#include "core/scenario_verdict.hpp"
#include "runner/load_engine.hpp"
#include "runner/measure_loop.hpp"
#include "runner/query_schedule.hpp"
#include "runner/trace_buffer.hpp"

namespace inferbench {
namespace {

// MLPerf LoadGen's null system under test, measured on this machine earlier (the same 2-core VM).
struct LoadGenFigure {
    double qps;
    std::int64_t bound_ns;
    const char* loadgen;
};
constexpr LoadGenFigure kServer[] = {{100'000, 10'000, "p99 98 us"}, {300'000, 100'000, "p99 956 us"}};
constexpr const char* kLoadGenSingleStream = "0.78-0.83 M queries/s";

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

// Times the kernel took this thread off its CPU for another task during the run (involuntary context
// switches): on a shared host, each such pause delays every query that arrives during it.
long preemptions() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_nivcsw;
}

struct ServerRun {
    long preempted = 0;
    std::int64_t scheduled = 0, completed = 0;
    std::int64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
    std::string verdict, reasons;
};

ServerRun run_server(double qps, std::int64_t bound_ns, std::int64_t seconds) {
    const std::int64_t duration = seconds * 1'000'000'000;
    auto backend = make_null_backend();
    const std::vector<StreamInstances> streams = {{{backend.get(), 1}}};
    LoadPlan plan;
    plan.schedule_ns = poisson_schedule(qps, duration, 1, 100'000'000, 42);
    plan.fall_behind_ns = 1'000'000'000;
    const auto capacity = static_cast<std::int64_t>(plan.schedule_ns.size());
    TraceBuffer trace = TraceBuffer::create(capacity);
    trace.prefault(capacity);
    RealClock clock;
    const long preempted_before = preemptions();
    const LoadResult result = run_load(streams, plan, {trace.records(), &trace.header().published}, capacity,
                                       trace.header().stop_requested, clock);
    const long preempted = preemptions() - preempted_before;
    std::vector<std::int64_t> latencies;
    for (const IterationRecord& r : trace.published()) latencies.push_back(r.e2e_ns);
    std::sort(latencies.begin(), latencies.end());
    ScenarioSettings settings;
    settings.scenario = Scenario::server;
    settings.latency_bound_ns = bound_ns;
    ScenarioFacts facts{result.scheduled, result.issued, result.fell_behind, plan.schedule_ns.back(), duration, 0};
    const ScenarioVerdict verdict = judge_scenario(settings, latencies, facts);
    ServerRun run;
    run.preempted = preempted;
    run.scheduled = result.scheduled;
    run.completed = result.completed;
    if (!latencies.empty()) {
        run.p50_ns = early_stopping::loadgen_percentile(latencies, 0.5);
        run.p99_ns = verdict.percentile_ns;
        run.max_ns = latencies.back();
    }
    run.verdict = verdict_word(verdict);
    for (const auto& reason : verdict.reasons) run.reasons += (run.reasons.empty() ? "" : "; ") + reason;
    return run;
}

// The closed loop's rate over 10 million queries (0.56 GB of records, prefaulted as the worker does).
double single_stream_qps() {
    auto backend = make_null_backend();
    const std::int64_t capacity = 10'000'000;
    TraceBuffer trace = TraceBuffer::create(capacity);
    trace.prefault(capacity);
    LoopSettings loop;
    loop.duration_ns = 3'600'000'000'000;
    loop.min_iterations = 1;
    loop.max_iterations = capacity;
    const MeasureResult result =
        run_measured(*backend, loop, {trace.records(), &trace.header().published}, trace.header().stop_requested);
    return static_cast<double>(result.iterations) * 1e9 / static_cast<double>(result.wall_ns);
}

}  // namespace
}  // namespace inferbench

int main(int argc, char** argv) {
    using namespace inferbench;
    const std::int64_t seconds = argc > 1 ? std::atoll(argv[1]) : 5;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
    std::printf("scenario_cost: %lld s per run, %d runs each; %u CPUs; load average %s\n\n",
                static_cast<long long>(seconds), repeats, std::thread::hardware_concurrency(), load_average().c_str());
    std::printf("%-31s %-3s %10s %10s %9s %10s %10s %9s  %-8s %-22s\n", "scenario", "run", "scheduled", "completed",
                "p50", "p99", "max", "preempted", "result", "LoadGen null SUT here");
    for (const auto& figure : kServer) {
        for (int r = 1; r <= repeats; ++r) {
            const ServerRun run = run_server(figure.qps, figure.bound_ns, seconds);
            const std::string name = "server " + std::to_string(static_cast<long long>(figure.qps / 1000)) +
                                     "k qps, p99 <= " + std::to_string(figure.bound_ns / 1000) + " us";
            std::printf("%-31s %-3d %10lld %10lld %6.1f us %7.1f us %7.0f us %9ld  %-8s %-22s\n", name.c_str(), r,
                        static_cast<long long>(run.scheduled), static_cast<long long>(run.completed),
                        static_cast<double>(run.p50_ns) / 1e3, static_cast<double>(run.p99_ns) / 1e3,
                        static_cast<double>(run.max_ns) / 1e3, run.preempted, run.verdict.c_str(), figure.loadgen);
            if (!run.reasons.empty()) std::printf("    %s\n", run.reasons.c_str());
        }
    }
    std::printf("\n%-31s %-3s %14s  %-22s\n", "scenario", "run", "queries/s", "LoadGen null SUT here");
    for (int r = 1; r <= repeats; ++r)
        std::printf("%-31s %-3d %10.2f M/s  %-22s\n", "single_stream", r, single_stream_qps() / 1e6,
                    kLoadGenSingleStream);
    std::printf("\nload average at the end: %s\n", load_average().c_str());
    return 0;
}
