// The load a cell runs under, with MLPerf LoadGen's scenario names: one struct that travels from the plan
// (RunSettings::scenario) through each cell (BenchmarkSpec::scenario) to the worker, as LoopSettings does.
// The member initialisers are the plan's defaults (LoadGen's own where it has one).
//
// How a query maps onto the Backend interface (infer() runs the cell's batch, B samples):
//   single_stream  one query = one inference of B samples; the next is issued when it completes (closed
//                  loop, the harness's measured loop). Headline: p90 latency, LoadGen's early-stopping estimate.
//   multi_stream   one query = samples_per_query samples = samples_per_query / B inferences (B must divide
//                  it; B = samples_per_query makes it one batch); the next query is issued when the whole
//                  query completes. Headline: p99 of query latency, early-stopping estimate.
//   server         queries arrive at Poisson times at target_qps (seeded); latency runs from each query's
//                  scheduled arrival, so time spent waiting for a busy backend is counted (no coordinated
//                  omission). One query = one inference of B samples; with the batcher, one sample, and the
//                  batcher forms batches of up to B. Verdict: p99 against latency_bound.
//   offline        every sample is issued at the start; inferences of B run back to back. Headline: throughput.
//   concurrency    `concurrency` queries in flight, each client issuing its next as its last completes (like
//                  perf_analyzer's concurrency mode).
// `streams` backend instances serve the queries, each on its own thread (like trtexec --infStreams).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace inferbench {

enum class Scenario { single_stream, multi_stream, server, offline, concurrency };

inline constexpr Scenario kAllScenarios[] = {Scenario::single_stream, Scenario::multi_stream, Scenario::server,
                                             Scenario::offline, Scenario::concurrency};

std::string_view to_string(Scenario scenario);
std::optional<Scenario> parse_scenario(std::string_view text);

struct ScenarioSettings {
    Scenario scenario = Scenario::single_stream;
    double target_qps = 1.0;                    // server: mean Poisson arrival rate (LoadGen's default)
    std::int64_t latency_bound_ns = 100'000'000;  // server: the p99 bound (LoadGen's default, 100 ms)
    std::int64_t samples_per_query = 8;         // multi_stream (LoadGen's default)
    std::int64_t concurrency = 1;               // concurrency: queries in flight
    std::int64_t streams = 1;                   // backend instances, each on its own thread
    bool find_peak = false;                     // server: search the highest target_qps meeting the bound
    bool batcher = false;                       // server, concurrency: a dynamic batcher in front of the backend
    std::int64_t batcher_max_queue_delay_ns = 1'000'000;  // the longest a query waits for its batch to fill

    friend bool operator==(const ScenarioSettings&, const ScenarioSettings&) = default;
};

// find_peak's most steps (runner/load/find_peak), each a server run of the cell's duration, before the run at
// the peak found.
inline constexpr int kMaxPeakSteps = 10;

// How long the measured phase of a cell lasts at least: its duration, or find_peak's steps and final run.
std::int64_t measured_time_ns(const ScenarioSettings& settings, std::int64_t duration_ns);

// The percentile the scenario is judged by (LoadGen's target_latency_percentile): 0.90 for single_stream,
// 0.99 for multi_stream and server; nothing for offline and concurrency.
std::optional<double> target_percentile(Scenario scenario);

// Whether queries wait for the backend by design (server, offline, concurrency): their latencies then spread
// with the load, which the scenario's verdict judges, not with noise that timing warnings look for.
bool queues_by_design(Scenario scenario);

// Samples one record of the measured loop stands for (records are queries): B for a query of one batch,
// samples_per_query for multi_stream, 1 for a query the batcher batches.
std::int64_t samples_per_record(const ScenarioSettings& settings, std::int64_t batch_size);

// The inferences one multi_stream query takes: samples_per_query / batch_size (1 for other scenarios).
std::int64_t inferences_per_query(const ScenarioSettings& settings, std::int64_t batch_size);

// Whether the dynamic batcher runs: asked for, and a scenario it serves (server, concurrency).
bool uses_batcher(const ScenarioSettings& settings);

// The batch sizes the batcher runs, ascending: powers of two below B, then B. A batch of k queries runs
// on the smallest of these >= k, padded to it (a backend instance is loaded at each).
std::vector<std::int64_t> batcher_batch_sizes(std::int64_t batch_size);

// Whether a cell needs several backend instances in one process (several streams, or the batcher's
// instances at several batch sizes): the backend must say it can run them (Capabilities::concurrent_instances).
bool needs_several_instances(const ScenarioSettings& settings, std::int64_t batch_size);

}  // namespace inferbench
