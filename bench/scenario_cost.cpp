// The load scenarios' own cost, beside MLPerf LoadGen's on this machine: the server scenario on the null
// backend (nothing to infer, so every microsecond of latency, from a query's scheduled arrival to its
// completion, is the harness's) at 100k and 300k queries per second, judged as `summary` judges a stored
// run (LoadGen's p99, early stopping, every scheduled query issued); and single_stream's closed loop, in
// queries per second. Targets (2 cores): 100k QPS VALID with p99 <= 10 us, 300k QPS VALID with p99 <= 100 us.
// The queries run in this process as they run in a worker (runner/load/load_engine on the real clock, the
// records written to a prefaulted trace buffer); the load average is printed, as the host may be shared,
// and so is how often the kernel preempted the serving threads: queries arriving while they are off their
// CPUs wait for them, which no harness can hide.
//
// Before each server run, the machine alone is measured for as long (see machine_floor): on a VM whose vCPUs
// are stalled together more than 1% of the time, no harness reaches a p99 below those stalls.
//
//   build/release/bench/scenario_cost [SECONDS=5] [REPEATS=3] [STREAMS=1,2]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/null/null_backend.hpp"
#include "core/statistics/scenario_verdict.hpp"
#include "core/clock.hpp"
#include "runner/load/load_engine.hpp"
#include "runner/worker/measure_loop.hpp"
#include "runner/load/query_schedule.hpp"
#include "runner/wire/trace_buffer.hpp"

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

// Times the kernel took one of this process's threads off its CPU for another task (involuntary context
// switches): on a shared host, each such pause delays every query that arrives during it. Stalls of the
// hypervisor's do not count here: the machine floor below shows them.
long preemptions() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_nivcsw;
}

// The machine's own stalls, measured with no harness: `threads` threads each read the clock in a tight loop for
// `seconds`, and every gap over kStallNs is a time that thread was off its CPU (the kernel, another task, or
// the hypervisor running another guest on its vCPU). A query served by those threads can start only when one
// of them runs, so the stalls of all at once are a floor under any harness's latency.
constexpr std::int64_t kStallNs = 2'000;

struct Stall {
    std::int64_t begin = 0, end = 0;
};

std::vector<Stall> stalls_of_one(std::int64_t until_ns) {
    std::vector<Stall> stalls;
    stalls.reserve(1 << 16);
    std::int64_t last = monotonic_ns();
    for (std::int64_t t = last; t < until_ns; t = monotonic_ns()) {
        if (t - last > kStallNs) stalls.push_back({last, t});
        last = t;
    }
    return stalls;
}

// The times every one of the threads was stalled (their stalls' intersection), in time order.
std::vector<Stall> all_stalled(const std::vector<std::vector<Stall>>& per_thread) {
    std::vector<Stall> common = per_thread.front();
    for (std::size_t k = 1; k < per_thread.size(); ++k) {
        std::vector<Stall> next;
        std::size_t i = 0, j = 0;
        const auto& other = per_thread[k];
        while (i < common.size() && j < other.size()) {
            const std::int64_t begin = std::max(common[i].begin, other[j].begin);
            const std::int64_t end = std::min(common[i].end, other[j].end);
            if (end > begin) next.push_back({begin, end});
            (common[i].end < other[j].end ? i : j) += 1;
        }
        common = std::move(next);
    }
    return common;
}

struct MachineFloor {
    double stalled_share = 0;  // of the time, every thread off its CPU at once
    std::int64_t longest_ns = 0;
    std::int64_t p99_ns = 0;  // of a harness that costs nothing: Poisson arrivals wait out a stall they fall in
};

MachineFloor machine_floor(double qps, std::int64_t seconds, int threads) {
    const std::int64_t begin = monotonic_ns() + 1'000'000, end = begin + seconds * 1'000'000'000;
    std::vector<std::vector<Stall>> per_thread(static_cast<std::size_t>(threads));
    std::vector<std::thread> running;
    for (int k = 0; k < threads; ++k)
        running.emplace_back([&, k] {
            while (monotonic_ns() < begin) {
            }
            per_thread[static_cast<std::size_t>(k)] = stalls_of_one(end);
        });
    for (std::thread& t : running) t.join();
    const std::vector<Stall> common = all_stalled(per_thread);
    MachineFloor floor;
    std::int64_t stalled = 0;
    for (const Stall& s : common) {
        stalled += s.end - s.begin;
        floor.longest_ns = std::max(floor.longest_ns, s.end - s.begin);
    }
    floor.stalled_share = static_cast<double>(stalled) / static_cast<double>(end - begin);
    std::vector<std::int64_t> waits;
    std::size_t next = 0;
    for (const std::int64_t offset : runner::poisson_schedule(qps, end - begin, 1, 100'000'000, 7)) {
        if (offset >= end - begin) break;
        const std::int64_t at = begin + offset;
        while (next < common.size() && common[next].end <= at) ++next;
        waits.push_back(next < common.size() && common[next].begin <= at ? common[next].end - at : 0);
    }
    std::sort(waits.begin(), waits.end());
    if (!waits.empty()) floor.p99_ns = early_stopping::loadgen_percentile(waits, 0.99);
    return floor;
}

struct ServerRun {
    long preempted = 0;
    std::int64_t scheduled = 0, completed = 0;
    std::int64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
    std::string verdict, reasons;
};

ServerRun run_server(double qps, std::int64_t bound_ns, std::int64_t seconds, int stream_count) {
    const std::int64_t duration = seconds * 1'000'000'000;
    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<runner::StreamInstances> streams;
    for (int i = 0; i < stream_count; ++i) {
        backends.push_back(make_null_backend());
        streams.push_back({{backends.back().get(), 1}});
    }
    runner::LoadPlan plan;
    plan.schedule_ns = runner::poisson_schedule(qps, duration, 1, 100'000'000, 42);
    plan.fall_behind_ns = 1'000'000'000;
    const auto capacity = static_cast<std::int64_t>(plan.schedule_ns.size());
    runner::TraceBuffer trace = runner::TraceBuffer::create(capacity);
    trace.prefault(capacity);
    runner::RealClock clock;
    const long preempted_before = preemptions();
    const runner::LoadResult result = runner::run_load(streams, plan, {trace.records(), &trace.header().published}, capacity,
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
    runner::TraceBuffer trace = runner::TraceBuffer::create(capacity);
    trace.prefault(capacity);
    LoopSettings loop;
    loop.duration_ns = 3'600'000'000'000;
    loop.min_iterations = 1;
    loop.max_iterations = capacity;
    const runner::MeasureResult result =
        runner::run_measured(*backend, loop, {trace.records(), &trace.header().published}, trace.header().stop_requested);
    return static_cast<double>(result.iterations) * 1e9 / static_cast<double>(result.wall_ns);
}

}  // namespace
}  // namespace inferbench

int main(int argc, char** argv) {
    using namespace inferbench;
    const std::int64_t seconds = argc > 1 ? std::atoll(argv[1]) : 5;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
    // Stream counts, e.g. "1,2": each a server configuration (1: one thread serves; 2: two threads share the queue).
    std::vector<int> stream_counts;
    for (const char* p = argc > 3 ? argv[3] : "1,2"; *p != '\0';) {
        char* after = nullptr;
        const long count = std::strtol(p, &after, 10);
        if (after == p || count < 1 || count > 64) {
            std::fprintf(stderr, "scenario_cost: STREAMS is a list of counts 1..64, e.g. 1,2\n");
            return 2;
        }
        stream_counts.push_back(static_cast<int>(count));
        p = *after == ',' ? after + 1 : after;
    }
    std::printf("scenario_cost: %lld s per run, %d runs each; %u CPUs; load average %s\n\n",
                static_cast<long long>(seconds), repeats, std::thread::hardware_concurrency(), load_average().c_str());
    std::printf("each server run: STREAMS threads serve one queue; before each, the machine alone for as long: the\n"
                "share of the time as many clock-reading threads were all stalled (> %lld us) at once, the longest such\n"
                "stall, and the p99 a harness that costs nothing would show at the same rate (arrivals in a stall wait\n"
                "it out): a floor under any harness's p99 on this machine\n\n",
                static_cast<long long>(kStallNs / 1000));
    std::printf("%-31s %-7s %-3s %10s %10s %9s %10s %10s %9s  %-8s %8s %9s %10s  %-22s\n", "scenario", "streams", "run",
                "scheduled", "completed", "p50", "p99", "max", "preempted", "result", "stalled", "longest",
                "floor p99", "LoadGen null SUT here");
    for (const auto& figure : kServer) {
        for (const int streams : stream_counts) {
            for (int r = 1; r <= repeats; ++r) {
                const MachineFloor floor = machine_floor(figure.qps, seconds, streams);
                const ServerRun run = run_server(figure.qps, figure.bound_ns, seconds, streams);
                const std::string name = "server " + std::to_string(static_cast<long long>(figure.qps / 1000)) +
                                         "k qps, p99 <= " + std::to_string(figure.bound_ns / 1000) + " us";
                std::printf("%-31s %-7d %-3d %10lld %10lld %6.1f us %7.1f us %7.0f us %9ld  %-8s %7.2f%% %6.0f us "
                            "%7.1f us  %-22s\n",
                            name.c_str(), streams, r, static_cast<long long>(run.scheduled),
                            static_cast<long long>(run.completed), static_cast<double>(run.p50_ns) / 1e3,
                            static_cast<double>(run.p99_ns) / 1e3, static_cast<double>(run.max_ns) / 1e3, run.preempted,
                            run.verdict.c_str(), 100 * floor.stalled_share, static_cast<double>(floor.longest_ns) / 1e3,
                            static_cast<double>(floor.p99_ns) / 1e3, figure.loadgen);
                if (!run.reasons.empty()) std::printf("    %s\n", run.reasons.c_str());
            }
        }
    }
    std::printf("\n%-31s %-3s %14s  %-22s\n", "scenario", "run", "queries/s", "LoadGen null SUT here");
    for (int r = 1; r <= repeats; ++r)
        std::printf("%-31s %-3d %10.2f M/s  %-22s\n", "single_stream", r, single_stream_qps() / 1e6,
                    kLoadGenSingleStream);
    std::printf("\nload average at the end: %s\n", load_average().c_str());
    return 0;
}
