// Synthetic generative benchmarks with hand-computable timings, for the tests of what is computed from them
// (analysis/generation_*, findings, summary, compare).
#pragma once

#include <cstdint>
#include <vector>

#include "core/generation.hpp"
#include "core/metrics/decoder_metrics.hpp"
#include "core/spec.hpp"
#include "store/results_store.hpp"

namespace inferbench::testing {

// `generations` generations back to back from t = 1 s: each a prefill of `ttft_ns`, then `output_tokens` - 1
// decode steps, step s taking `step_ns` + (s - 1) x `growth_ns` (a KV cache that slows each step by as much),
// a gap of 1 ms before the next generation. KV cache bytes as core/generation's kv_cache_bytes.
struct GenerationPlan {
    std::int64_t batch = 1, input_tokens = 16, output_tokens = 5;
    std::int64_t generations = 4;
    std::int64_t ttft_ns = 10'000'000;
    std::int64_t step_ns = 2'000'000;
    std::int64_t growth_ns = 0;
    std::int64_t kv_bytes_per_token = 1024;
};

inline store::MeasuredBenchmark generative_benchmark(const GenerationPlan& plan, std::string device = "cpu") {
    store::MeasuredBenchmark m;
    m.record.benchmark_id = 1;
    m.record.model = "llama-tiny";
    m.record.backend = "llamacpp";
    m.record.device = std::move(device);
    m.record.precision = "fp32";
    m.record.batch_size = plan.batch;
    m.record.status = BenchmarkStatus::ok;
    m.record.input_tokens = plan.input_tokens;
    m.record.output_tokens = plan.output_tokens;
    std::int64_t t = 1'000'000'000;
    for (std::int64_t g = 0; g < plan.generations; ++g) {
        GenerationRecord record{g, {}};
        const std::int64_t start = t;
        t += plan.ttft_ns;
        record.steps.push_back({t, kv_cache_bytes(plan.batch, plan.input_tokens, 0, plan.kv_bytes_per_token)});
        for (std::int64_t s = 1; s < plan.output_tokens; ++s) {
            t += plan.step_ns + (s - 1) * plan.growth_ns;
            record.steps.push_back({t, kv_cache_bytes(plan.batch, plan.input_tokens, s, plan.kv_bytes_per_token)});
        }
        IterationRecord it;
        it.start_ns = start;
        it.e2e_ns = t - start;
        m.iterations.push_back(it);
        m.generations.push_back(std::move(record));
        t += 1'000'000;
    }
    m.record.measured_wall_ns = t - 1'000'000'000;
    return m;
}

// A small Llama shape's stored decoder facts (core/metrics/decoder_metrics.hpp), its weights held at
// `bytes_per_weight` each; KV bytes per token as `kv_bytes_per_token` says (the fixture's steps store the same).
inline DecoderShape small_decoder_shape() {
    return {.layers = 2, .hidden = 64, .heads = 4, .kv_heads = 2, .head_dim = 16, .intermediate = 128, .vocab = 512,
            .max_context = 256};
}

inline std::vector<store::Metric> decoder_metric_rows(const DecoderShape& shape, double bytes_per_weight,
                                                      std::int64_t kv_bytes_per_token) {
    namespace dm = decoder_metrics;
    const auto count = [](std::string_view name, double value) { return store::Metric{std::string(name), value, "count"}; };
    return {count(dm::kParameters, static_cast<double>(parameter_count(shape))),
            {std::string(dm::kWeightBytes), static_cast<double>(parameter_count(shape)) * bytes_per_weight, "B"},
            count(dm::kParametersReadPerStep, static_cast<double>(parameters_read_per_step(shape))),
            {std::string(dm::kKvBytesPerToken), static_cast<double>(kv_bytes_per_token), "B"},
            count(dm::kLayers, static_cast<double>(shape.layers)),
            count(dm::kHidden, static_cast<double>(shape.hidden)),
            count(dm::kHeads, static_cast<double>(shape.heads)),
            count(dm::kKvHeads, static_cast<double>(shape.kv_heads)),
            count(dm::kHeadDim, static_cast<double>(shape.head_dim)),
            count(dm::kIntermediate, static_cast<double>(shape.intermediate)),
            count(dm::kVocab, static_cast<double>(shape.vocab)),
            {std::string(dm::kMaxContext), static_cast<double>(shape.max_context), "tokens"},
            {std::string(dm::kTiedEmbeddings), shape.tied_embeddings ? 1.0 : 0.0, "flag"}};
}

}  // namespace inferbench::testing
