// Generative cells through the real CLI on a decoder with known step times (the fake-decoder test backend): the
// plan's token axes make the cells, every generation's steps and the first generation's tokens are stored with
// the KV cache each step held, and what cannot run is recorded with its reason while the plan goes on.
#include <gtest/gtest.h>

#include "core/generation.hpp"
#include "e2e/cli_harness.hpp"
#include "models/decoder_models.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

constexpr const char* kPlan =
    "models: [llama-tiny]\nbackends: [fake-decoder]\nbatch_sizes: [1, 2]\ninput_tokens: [8, 16]\n"
    "output_tokens: [5]\nwarmup: 0s\nwarmup_iterations: 1\nduration: 100ms\nmin_iterations: 3\n";

TEST(Generation, EveryStepOfEveryGenerationIsStored) {
    ScratchDir dir;
    dir.write("plan.yaml", kPlan);
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 4u);  // batch {1, 2} x input {8, 16}
    const DecoderShape& shape = models::find_decoder_model("llama-tiny")->shape;
    const std::int64_t kv_per_token = kv_elements_per_token(shape) * 4;
    for (const auto& b : benchmarks) {
        SCOPED_TRACE(b.model + " b" + std::to_string(b.batch_size) + " in" + std::to_string(b.input_tokens));
        EXPECT_EQ(b.status, BenchmarkStatus::ok) << b.reason;
        EXPECT_EQ(b.output_tokens, 5);
        const auto iterations = store.iterations(b.benchmark_id);
        const auto generations = store.generations(b.benchmark_id);
        ASSERT_GE(iterations.size(), 3u);
        ASSERT_EQ(generations.size(), iterations.size());
        for (std::size_t g = 0; g < generations.size(); ++g) {
            const auto& steps = generations[g].steps;
            EXPECT_EQ(generations[g].iteration, static_cast<std::int64_t>(g));
            ASSERT_EQ(steps.size(), 5u);
            // The prefill ends after the iteration began; each step after the one before; the iteration ends with
            // the last.
            EXPECT_GT(steps[0].end_ns, iterations[g].start_ns);
            for (std::size_t s = 1; s < steps.size(); ++s) {
                EXPECT_GE(steps[s].end_ns - steps[s - 1].end_ns, 200'000) << "decode_us 200";
                EXPECT_EQ(steps[s].kv_cache_bytes,
                          kv_cache_bytes(b.batch_size, b.input_tokens, static_cast<std::int64_t>(s), kv_per_token));
            }
            EXPECT_LE(steps.back().end_ns, iterations[g].start_ns + iterations[g].e2e_ns);
        }
        // The tokens are the fake's function of the prompts: (last prompt token + 7 step + sequence) % vocab.
        const auto prompts = generation_prompts(b.batch_size, b.input_tokens, shape.vocab, 42);
        const auto tokens = store.generated_tokens(b.benchmark_id);
        ASSERT_EQ(tokens.size(), static_cast<std::size_t>(b.batch_size));
        for (std::size_t seq = 0; seq < tokens.size(); ++seq) {
            ASSERT_EQ(tokens[seq].size(), 5u);
            const auto last = prompts[(seq + 1) * static_cast<std::size_t>(b.input_tokens) - 1];
            for (std::size_t s = 0; s < 5; ++s)
                EXPECT_EQ(tokens[seq][s], (last + 7 * static_cast<std::int32_t>(s) + static_cast<std::int32_t>(seq)) % shape.vocab);
        }
        bool has_kv = false;
        for (const auto& m : store.metrics(b.benchmark_id)) has_kv |= m.name == "decoder_kv_bytes_per_token" && m.value == static_cast<double>(kv_per_token);
        EXPECT_TRUE(has_kv);
    }
}

TEST(Generation, OutOfMemoryAndAShortGenerationFailWithTheirReasonsAndThePlanGoesOn) {
    ScratchDir dir;
    dir.write("plan.yaml",
              "models: [llama-tiny]\nbackends: [fake-decoder]\nbatch_sizes: [1, 4]\ninput_tokens: [8]\n"
              "output_tokens: [4]\nwarmup: 0s\nduration: 50ms\nbackend_options:\n  fake-decoder: {fault: oom, fault_batch: 4}\n");
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::failed);
    EXPECT_NE(benchmarks[1].reason.find("out of memory"), std::string::npos) << benchmarks[1].reason;

    dir.write("short.yaml",
              "models: [llama-tiny]\nbackends: [fake-decoder]\nbatch_sizes: [1]\ninput_tokens: [8]\n"
              "output_tokens: [4]\nwarmup: 0s\nduration: 50ms\nbackend_options:\n  fake-decoder: {fault: short}\n");
    const auto short_run = dir.run("run short.yaml --db s.db --quiet");
    EXPECT_EQ(short_run.exit_code, 1);
    auto short_store = store::ResultsStore::open(dir.file("s.db"), store::ResultsStore::Access::read);
    const auto failed = short_store.benchmarks().at(0);
    EXPECT_EQ(failed.status, BenchmarkStatus::failed);
    EXPECT_NE(failed.reason.find("handed over 3 steps of a generation of 4 tokens"), std::string::npos) << failed.reason;
}

TEST(Generation, AContextLongerThanTheModelsFailsSayingSo) {
    ScratchDir dir;
    dir.write("plan.yaml",
              "models: [llama-tiny]\nbackends: [fake-decoder]\nbatch_sizes: [1]\ninput_tokens: [4000]\n"
              "output_tokens: [200]\nwarmup: 0s\nduration: 50ms\n");
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    EXPECT_EQ(run.exit_code, 1);
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto b = store.benchmarks().at(0);
    EXPECT_EQ(b.status, BenchmarkStatus::failed);
    EXPECT_NE(b.reason.find("4200 tokens is longer than the model's context of 4096"), std::string::npos) << b.reason;
}

TEST(Generation, TokenAxesApplyToDecodersOnlyAndOtherScenariosAreRefused) {
    ScratchDir dir;
    const auto dry = dir.run(
        "run --model llama-tiny,null --backend fake-decoder,null --batch 1 --input-tokens 8,32 --output-tokens 4 "
        "--dry-run");
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_NE(dry.out.find("llama-tiny fake-decoder cpu fp32 b1 in8 out4"), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find("llama-tiny fake-decoder cpu fp32 b1 in32 out4"), std::string::npos) << dry.out;
    EXPECT_EQ(dry.out.find("null null cpu fp32 b1 in"), std::string::npos) << dry.out;
    dir.write("server.yaml",
              "models: [llama-tiny]\nbackends: [fake-decoder]\nbatch_sizes: [1]\ninput_tokens: [8]\noutput_tokens: [4]\n"
              "scenario: server\ntarget_qps: 10\nduration: 100ms\n");
    const auto server = dir.run("run server.yaml --db r.db --quiet");
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto b = store.benchmarks().at(0);
    EXPECT_EQ(b.status, BenchmarkStatus::skipped);
    EXPECT_NE(b.reason.find("run single_stream"), std::string::npos) << b.reason;
    const auto bad = dir.run("run --model llama-tiny --backend fake-decoder --input-tokens 0 --dry-run");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("token count '0' must be a whole number from 1 to"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace inferbench
