// A generative benchmark's metrics on synthetic generations with hand-computed expectations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/generation_metrics.hpp"
#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "common/generation_fixture.hpp"
#include "core/error.hpp"
#include "core/temp_dir.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;
using testing::GenerationPlan;
using testing::generative_benchmark;

std::string testing_join(const std::vector<std::string>& lines) {
    std::string all;
    for (const auto& line : lines) all += line + "\n";
    return all;
}

constexpr GenerationPlan kPlan{.batch = 2, .input_tokens = 16, .output_tokens = 5, .generations = 4,
                               .ttft_ns = 10'000'000, .step_ns = 2'000'000};

TEST(GenerationMetrics, TtftTpotAndRatesFollowTheirDefinitions) {
    const auto m = generation_metrics(generative_benchmark(kPlan));
    EXPECT_EQ(m.generations, 4);
    EXPECT_EQ(m.incomplete, 0);
    EXPECT_EQ(m.ttft.ns.count, 4);
    EXPECT_DOUBLE_EQ(m.ttft.ns.p50, 10e6);
    EXPECT_DOUBLE_EQ(m.ttft.ns.p99, 10e6);
    ASSERT_TRUE(m.tpot);
    EXPECT_DOUBLE_EQ(m.tpot->ns.p50, 2e6);  // (18 ms - 10 ms) / (5 - 1)
    ASSERT_TRUE(m.per_token);
    EXPECT_EQ(m.per_token->ns.count, 16);  // 4 decode steps of 4 generations
    EXPECT_DOUBLE_EQ(m.per_token->ns.max, 2e6);
    EXPECT_DOUBLE_EQ(m.e2e.ns.mean, 18e6);
    EXPECT_DOUBLE_EQ(m.prefill_tokens_per_s, 2.0 * 16 / 0.010);
    EXPECT_DOUBLE_EQ(*m.decode_tokens_per_s, 2.0 * 4 / 0.008);
    EXPECT_DOUBLE_EQ(*m.decode_steps_per_s, 4 / 0.008);
    EXPECT_DOUBLE_EQ(m.output_tokens_per_s, 2.0 * 5 / 0.018);
}

TEST(GenerationMetrics, PerTokenLatencyIsEachDecodeStepNotTheAverage) {
    GenerationPlan plan = kPlan;
    plan.growth_ns = 1'000'000;  // decode steps of 2, 3, 4, 5 ms
    const auto m = generation_metrics(generative_benchmark(plan));
    EXPECT_DOUBLE_EQ(m.per_token->ns.min, 2e6);
    EXPECT_DOUBLE_EQ(m.per_token->ns.max, 5e6);
    EXPECT_DOUBLE_EQ(m.tpot->ns.min, 3.5e6);  // 14 ms over 4 steps: every generation's the same
    EXPECT_DOUBLE_EQ(m.tpot->ns.max, 3.5e6);
    const auto steps = step_times(generative_benchmark(plan).iterations, generative_benchmark(plan).generations, 5);
    ASSERT_EQ(steps.size(), 20U);
    EXPECT_EQ(steps[0].duration_ns, 10'000'000);
    EXPECT_EQ(steps[4].duration_ns, 5'000'000);
    EXPECT_EQ(steps[4].kv_cache_bytes, 2 * (16 + 4) * 1024);
}

TEST(GenerationMetrics, OneOutputTokenHasNoTpot) {
    GenerationPlan plan = kPlan;
    plan.output_tokens = 1;
    const auto m = generation_metrics(generative_benchmark(plan));
    EXPECT_FALSE(m.tpot);
    EXPECT_FALSE(m.per_token);
    EXPECT_FALSE(m.decode_tokens_per_s);
    EXPECT_DOUBLE_EQ(m.ttft.ns.mean, 10e6);
    EXPECT_THAT(testing_join(m.notes), HasSubstr("not defined"));
}

TEST(GenerationMetrics, StoppedGenerationsAreCountedAndLeftOut) {
    auto measured = generative_benchmark(kPlan);
    measured.generations[1].steps.resize(2);
    measured.generations[1].steps[1].end_ns += 50'000'000;  // would be an outlier were it counted
    const auto m = generation_metrics(measured);
    EXPECT_EQ(m.generations, 3);
    EXPECT_EQ(m.incomplete, 1);
    EXPECT_DOUBLE_EQ(m.per_token->ns.max, 2e6);
    EXPECT_THAT(testing_join(m.notes), HasSubstr("1 of 4 generations stopped"));
}

TEST(GenerationMetrics, RefusesBenchmarksThatAreNotGenerative) {
    auto measured = generative_benchmark(kPlan);
    measured.record.input_tokens = 0;
    EXPECT_THROW(generation_metrics(measured), UserError);
    measured = generative_benchmark(kPlan);
    for (auto& g : measured.generations) g.steps.pop_back();
    EXPECT_THROW(generation_metrics(measured), UserError);
}

TEST(GenerationMetrics, GpuEnergyGivesTokensPerJoule) {
    auto measured = generative_benchmark(kPlan, "cuda:0");
    const std::int64_t end = 1'000'000'000 + *measured.record.measured_wall_ns;
    GpuSample first, last;
    first.t_ns = 1'000'000'000;
    first.energy_mj = 1'000;
    first.fb_used_mib = 900;
    last.t_ns = end;
    last.energy_mj = 9'000;  // 8 J over the whole measured time
    last.fb_used_mib = 1200;
    measured.gpu_samples = {first, last};
    const auto m = generation_metrics(measured);
    ASSERT_TRUE(m.tokens_per_joule);
    EXPECT_DOUBLE_EQ(*m.energy_j, 8.0);
    EXPECT_DOUBLE_EQ(*m.tokens_per_joule, 4 * 2 * 5 / 8.0);  // 40 tokens
    EXPECT_DOUBLE_EQ(*m.joules_per_token, 8.0 / 40);
    EXPECT_EQ(m.energy_source, "GPU energy counter");
    EXPECT_DOUBLE_EQ(*m.peak_gpu_memory_mib, 1200);
    EXPECT_FALSE(m.peak_rss_mib);
}

TEST(GenerationMetrics, CpuEnergyOnlyFromRapl) {
    auto measured = generative_benchmark(kPlan, "cpu");
    CpuSample a, b;
    a.t_ns = 1'000'000'000;
    a.process_rss_mib = 300;
    b.t_ns = 1'000'000'000 + *measured.record.measured_wall_ns;
    b.process_rss_mib = 320;
    measured.cpu_samples = {a, b};
    auto m = generation_metrics(measured);
    EXPECT_FALSE(m.tokens_per_joule);
    EXPECT_THAT(testing_join(m.notes), HasSubstr("energy not measured"));
    EXPECT_DOUBLE_EQ(*m.peak_rss_mib, 320);
    measured.cpu_samples[0].cpu_package_energy_j = 100.0;
    measured.cpu_samples[1].cpu_package_energy_j = 104.0;
    m = generation_metrics(measured);
    ASSERT_TRUE(m.tokens_per_joule);
    EXPECT_DOUBLE_EQ(*m.tokens_per_joule, 40 / 4.0);
    EXPECT_EQ(m.energy_source, "CPU package (RAPL)");
}


TEST(GenerationMetrics, StoredBenchmarkSummaryCarriesThem) {
    const TempDir dir("generation-summary");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    store::RunRecord run;
    run.name = "t";
    run.plan_json = run.environment_json = "{}";
    auto measured = generative_benchmark(kPlan);
    measured.record.run_id = results.begin_run(run);
    measured.metrics = testing::decoder_metric_rows(testing::small_decoder_shape(), 2.0, kPlan.kv_bytes_per_token);
    results.add_benchmark(measured.record, measured.data());
    const auto stored = results.benchmarks(measured.record.run_id);
    ASSERT_EQ(stored.size(), 1U);
    const BenchmarkSummary summary = summarize_stored(results, stored[0], results.runs());
    ASSERT_TRUE(summary.generation);
    const auto expected = generation_metrics(measured);
    EXPECT_DOUBLE_EQ(summary.generation->ttft.ns.p50, expected.ttft.ns.p50);
    EXPECT_DOUBLE_EQ(summary.generation->tpot->ns.p99, expected.tpot->ns.p99);
    EXPECT_DOUBLE_EQ(*summary.generation->decode_tokens_per_s, *expected.decode_tokens_per_s);
    ASSERT_TRUE(summary.generation->decoder && summary.generation->decoder->shape);
    EXPECT_EQ(*summary.generation->decoder->shape, testing::small_decoder_shape());
    EXPECT_EQ(summary.generation->kv_cache_bytes.size(), 5U);
}

TEST(GenerationMetrics, RepeatsOfACellCombineAsTheirMeans) {
    GenerationPlan slow = kPlan;
    slow.ttft_ns = 20'000'000;
    slow.step_ns = 4'000'000;
    std::vector<BenchmarkSummary> repeats = {summarize_measured(generative_benchmark(kPlan)),
                                             summarize_measured(generative_benchmark(slow))};
    repeats[1].benchmark.repeat = 1;
    const BenchmarkSummary row = combine_repeats(repeats);
    ASSERT_TRUE(row.generation);
    EXPECT_EQ(row.generation->generations, 8);
    EXPECT_DOUBLE_EQ(row.generation->ttft.ns.p50, 15e6);
    EXPECT_DOUBLE_EQ(row.generation->tpot->ns.p99, 3e6);
    EXPECT_DOUBLE_EQ(*row.generation->decode_tokens_per_s, (2.0 * 4 / 0.008 + 2.0 * 4 / 0.016) / 2);
    ASSERT_TRUE(row.generation->ttft.mean_ci);
    EXPECT_LT(row.generation->ttft.mean_ci->low, 15e6);
    EXPECT_GT(row.generation->ttft.mean_ci->high, 15e6);
}

}  // namespace
}  // namespace inferbench::analysis
