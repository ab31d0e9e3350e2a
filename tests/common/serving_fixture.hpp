// A results database with a serving sweep, written through the store's API as a run writes it: llama-tiny behind the
// `openai` backend at concurrency 1, 2, 4 and 8, 20 requests each in waves of `concurrency` requests, 10 output
// tokens a request (one chunk each), a TTFT bound of 30 ms. Up to 4 requests in flight the server keeps TTFT at
// 10 ms and TPOT at 5 ms + 0.5 ms per other request (a wave of 4 takes 68.5 ms); at 8 it queues: TTFT 40 ms and
// TPOT 12 ms (148 ms a wave), so output tokens/s falls from 584 to 541 while TTFT quadruples, and no request meets
// the bound.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/metrics/server_metrics.hpp"
#include "store/results_store.hpp"

namespace inferbench::testing {

inline constexpr std::int64_t kServingMs = 1'000'000;
inline constexpr std::int64_t kServingRequests = 20;
inline constexpr std::int64_t kServingTokens = 10;

inline std::vector<ServedRequest> sweep_requests(std::int64_t concurrency) {
    const std::int64_t ttft = concurrency <= 4 ? 10 * kServingMs : 40 * kServingMs;
    const std::int64_t tpot = concurrency <= 4 ? 5 * kServingMs + (concurrency - 1) * kServingMs / 2 : 12 * kServingMs;
    const std::int64_t wave = ttft + (kServingTokens - 1) * tpot;
    std::vector<ServedRequest> requests;
    for (std::int64_t i = 0; i < kServingRequests; ++i) {
        ServedRequest r;
        r.index = i;
        r.scheduled_ns = r.sent_ns = 5'000'000'000 + (i / concurrency) * wave;
        r.input_tokens = 32;
        r.output_tokens = kServingTokens;
        r.finish_reason = "length";
        r.server_prompt_ms = 8.0;
        r.server_generation_ms = 45.0;
        for (std::int64_t t = 0; t < kServingTokens; ++t) r.chunks.push_back({r.scheduled_ns + ttft + t * tpot, 1});
        r.end_ns = r.chunks.back().arrival_ns;
        requests.push_back(std::move(r));
    }
    return requests;
}

// Writes the database with the four cells (their server on `gpus` GPUs where given); returns the run id.
inline std::int64_t write_serving_fixture(const std::filesystem::path& db, std::optional<double> gpus = std::nullopt) {
    auto results = store::ResultsStore::open(db);
    store::RunRecord run;
    run.name = "serving";
    run.started_unix_ms = 1'700'000'000'000;
    run.host = "host01";
    run.environment_json = R"({"host": "host01"})";
    const auto run_id = results.begin_run(run);
    std::int64_t ordinal = 0;
    for (const std::int64_t concurrency : {1, 2, 4, 8}) {
        store::MeasuredBenchmark m;
        m.record.run_id = run_id;
        m.record.ordinal = ordinal++;
        m.record.model = "llama-tiny";
        m.record.backend = "openai";
        m.record.device = "cpu";
        m.record.precision = "fp32";
        m.record.status = BenchmarkStatus::ok;
        m.record.input_tokens = 32;  // as the workload planned them: a serving cell is not a generation table row
        m.record.output_tokens = kServingTokens;
        m.record.variant = "concurrency=" + std::to_string(concurrency);
        m.record.settings_json = R"({"duration_ns": 10000000000, "scenario": {"scenario": "concurrency", "concurrency": )" +
                                 std::to_string(concurrency) + "}}";
        m.served_requests = sweep_requests(concurrency);
        m.serving_workload = store::ServingWorkloadRecord{"fp", "{}", ServingSlos{.ttft_ns = 30 * kServingMs}};
        if (gpus) m.metrics.push_back({std::string(server_metrics::kGpus), *gpus, "count"});
        results.add_benchmark(m.record, m.data());
    }
    results.end_run(run_id, 1'700'000'060'000, RunStatus::completed);
    return run_id;
}

}  // namespace inferbench::testing
