// A results database with generative benchmarks, written through the store's API as a run writes them: llama-tiny
// shaped decoders on an H200 (cuda:0, fp16) at batch 1 and 4 with 16 input tokens and at batch 1 with 64, and one
// on the CPU with a single output token (TPOT not defined, no bandwidth known), beside an ordinary benchmark.
// Timings from tests/common/generation_fixture.hpp: TTFT 10 ms, every decode step 2 ms.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/generation_fixture.hpp"
#include "store/results_store.hpp"

namespace inferbench::report::testing {

inline constexpr std::int64_t kGenerationKvBytesPerToken = 256;  // small_decoder_shape() at fp16
inline constexpr std::int64_t kGenerationOutputTokens = 5;
inline constexpr std::int64_t kGenerations = 4;

struct GenerativeCell {
    std::string device;
    std::int64_t batch, input_tokens, output_tokens;
};

inline const std::vector<GenerativeCell>& generative_cells() {
    static const std::vector<GenerativeCell> cells = {{"cuda:0", 1, 16, kGenerationOutputTokens},
                                                      {"cuda:0", 4, 16, kGenerationOutputTokens},
                                                      {"cuda:0", 1, 64, kGenerationOutputTokens},
                                                      {"cpu", 2, 16, 1}};
    return cells;
}

// Writes the database; returns the run id.
inline std::int64_t write_generation_fixture(const std::filesystem::path& db) {
    auto results = store::ResultsStore::open(db);
    store::RunRecord run;
    run.name = "generation";
    run.started_unix_ms = 1'700'000'000'000;
    run.host = "gpu01";
    run.environment_json = nlohmann::json{{"host", "gpu01"},
                                          {"cpu_model", "AMD EPYC 9654 96-Core Processor"},
                                          {"gpus", {{"source", "nvml"}, {"devices", {{{"index", 0}, {"name", "NVIDIA H200"}}}}}}}
                               .dump();
    const auto run_id = results.begin_run(run);
    std::int64_t ordinal = 0;
    const auto decoder = inferbench::testing::decoder_metric_rows(inferbench::testing::small_decoder_shape(), 2.0,
                                                                  kGenerationKvBytesPerToken);
    for (const auto& cell : generative_cells()) {
        inferbench::testing::GenerationPlan plan;
        plan.batch = cell.batch;
        plan.input_tokens = cell.input_tokens;
        plan.output_tokens = cell.output_tokens;
        plan.generations = kGenerations;
        plan.kv_bytes_per_token = kGenerationKvBytesPerToken;
        auto measured = inferbench::testing::generative_benchmark(plan, cell.device);
        measured.record.run_id = run_id;
        measured.record.ordinal = ordinal++;
        measured.record.precision = "fp16";
        measured.record.settings_json = "{}";
        measured.metrics = decoder;
        results.add_benchmark(measured.record, measured.data());
    }
    store::BenchmarkRecord plain;
    plain.run_id = run_id;
    plain.ordinal = ordinal;
    plain.model = "resnet50";
    plain.backend = "torch";
    plain.device = "cuda:0";
    plain.precision = "fp16";
    plain.status = BenchmarkStatus::ok;
    plain.settings_json = "{}";
    std::vector<IterationRecord> iterations;
    for (int i = 0; i < 20; ++i) iterations.push_back({2'000'000'000LL + i * 2'000'000LL, 1'500'000});
    results.add_benchmark(plain, iterations);
    results.end_run(run_id, 1'700'000'060'000, RunStatus::completed);
    return run_id;
}

}  // namespace inferbench::report::testing
