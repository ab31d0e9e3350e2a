// The same zoo decoder on every engine built here, through the real CLI: llama-tiny's seeded weights written in the
// form each engine reads (GGUF, ONNX with past key/values), run at fp32 with greedy sampling; every engine's tokens
// for every sequence equal the plain double-precision reference's, and every metric is stored.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/llama_reference.hpp"
#include "core/generation.hpp"
#include "core/metrics/decoder_metrics.hpp"
#include "e2e/cli_harness.hpp"
#include "models/decoder_models.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

std::string engines() {
    std::string list;
    for (const char* engine : {INFERBENCH_GENERATION_ENGINES}) list += std::string(list.empty() ? "" : ",") + engine;
    return list;
}

TEST(GenerationEngines, EveryEngineGivesTheReferencesGreedyTokens) {
    constexpr std::int64_t kBatch = 2, kInput = 16, kOutput = 8;
    ScratchDir dir;
    const auto run = dir.run("run --model llama-tiny --backend " + engines() +
                             " --batch 2 --input-tokens 16 --output-tokens 8 --set warmup=0s --set warmup_iterations=1 "
                             "--duration 200ms --min-iterations 3 --db r.db --set model_cache=cache --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;

    const DecoderShape& shape = models::find_decoder_model("llama-tiny")->shape;
    const auto prompts = generation_prompts(kBatch, kInput, shape.vocab, 42);
    const testing::LlamaReference reference(shape, 42);
    std::vector<testing::ReferenceGeneration> expected;
    for (std::int64_t b = 0; b < kBatch; ++b)
        expected.push_back(reference.greedy(std::span(prompts).subspan(static_cast<std::size_t>(b * kInput), kInput), kOutput));

    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), std::size({INFERBENCH_GENERATION_ENGINES}));
    for (const auto& b : benchmarks) {
        SCOPED_TRACE(b.backend);
        ASSERT_EQ(b.status, BenchmarkStatus::ok) << b.reason;
        const auto tokens = store.generated_tokens(b.benchmark_id);
        ASSERT_EQ(tokens.size(), static_cast<std::size_t>(kBatch));
        for (std::size_t seq = 0; seq < tokens.size(); ++seq) {
            EXPECT_EQ(tokens[seq], expected[seq].tokens) << "sequence " << seq;
            // Logits are of order 1; float32 accumulation errs by about 1e-5 over these sums.
            EXPECT_GT(expected[seq].smallest_margin, 1e-4) << "a clear choice at every step";
        }
        const auto generations = store.generations(b.benchmark_id);
        EXPECT_EQ(generations.size(), store.iterations(b.benchmark_id).size());
        ASSERT_GE(generations.size(), 3u);
        for (const auto& g : generations) EXPECT_EQ(g.steps.size(), static_cast<std::size_t>(kOutput));
        std::map<std::string, double> metrics;
        for (const auto& m : store.metrics(b.benchmark_id)) metrics[m.name] = m.value;
        EXPECT_EQ(metrics[std::string(decoder_metrics::kParameters)], static_cast<double>(parameter_count(shape)));
        EXPECT_GT(metrics[std::string(decoder_metrics::kWeightBytes)], 0);
        EXPECT_GT(metrics[std::string(decoder_metrics::kKvBytesPerToken)], 0);
    }
}

}  // namespace
}  // namespace inferbench
