// The generative benchmarks' rules on stored synthetic generations: decode against its bandwidth bound (memory-
// bound, launch-bound, bound unknown), KV-cache growth, and batch sizes that ran out of memory; each where it fires
// and where it stays silent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/generation_fixture.hpp"
#include "common/scratch_dir.hpp"
#include "devices/cpu_peaks.hpp"
#include "findings/findings.hpp"
#include "findings/findings_fixture.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using inferbench::testing::GenerationPlan;

constexpr GenerationPlan kPlan{.batch = 2, .input_tokens = 16, .output_tokens = 5, .generations = 4,
                               .ttft_ns = 10'000'000, .step_ns = 2'000'000, .kv_bytes_per_token = 1024};
constexpr double kBytesPerWeight = 4.0;

// The bytes a decode step of kPlan reads: the small decoder's weights and the KV cache of 2 x 18.5 tokens on average.
double bytes_per_step() {
    return kBytesPerWeight * static_cast<double>(parameters_read_per_step(inferbench::testing::small_decoder_shape())) +
           2 * 18.5 * 1024;
}

// The benchmarks stored as one run on a CPU named "Test CPU", with a measured DRAM bandwidth where given, read back
// as the rules read them.
class GenerationRun {
public:
    GenerationRun(std::vector<store::MeasuredBenchmark> benchmarks, std::optional<double> bandwidth_gbs,
                  std::string environment = R"({"cpu_model": "Test CPU"})") {
        auto results = store::ResultsStore::open(dir_.file("results.db"));
        store::RunRecord run;
        run.name = "generation-findings";
        run.plan_json = "{}";
        run.environment_json = std::move(environment);
        const auto run_id = results.begin_run(run);
        std::int64_t ordinal = 0;
        for (auto& b : benchmarks) {
            b.record.run_id = run_id;
            b.record.ordinal = ordinal++;
            b.record.settings_json = "{}";
            if (b.metrics.empty() && b.record.status == BenchmarkStatus::ok)
                b.metrics = inferbench::testing::decoder_metric_rows(inferbench::testing::small_decoder_shape(),
                                                                     kBytesPerWeight, kPlan.kv_bytes_per_token);
            results.add_benchmark(b.record, b.data());
        }
        if (bandwidth_gbs) {
            store::ProbeRecord probe;
            probe.device_key = devices::cpu_device_key("Test CPU");
            probe.device_name = "Test CPU";
            probe.name = "dram_copy";
            probe.value = *bandwidth_gbs;
            probe.unit = "GB/s";
            results.add_probe(probe);
        }
        const auto stored = results.benchmarks(run_id);
        evidence_ = load_evidence(results, stored, devices::load_catalog());
    }
    const std::vector<BenchmarkEvidence>& evidence() const { return evidence_; }

private:
    inferbench::testing::ScratchDir dir_;
    std::vector<BenchmarkEvidence> evidence_;
};

// The probe bandwidth at which kPlan's decode (500 steps/s) runs at `fraction` of its bound.
double bandwidth_for(double fraction) { return 500 * bytes_per_step() / fraction / 1e9; }

TEST(GenerationRules, DecodeNearTheBoundIsMemoryBoundAndSuggestsABatch) {
    const GenerationRun run({inferbench::testing::generative_benchmark(kPlan)}, bandwidth_for(0.83));
    ASSERT_EQ(run.evidence().size(), 1U);
    const auto found = explain(run.evidence());
    const auto& f = testing::only(found, "generation.decode_memory_bound");
    EXPECT_THAT(f.statement, HasSubstr("decode at 83% of the bandwidth bound"));
    EXPECT_THAT(f.statement, HasSubstr("memory-bound, as expected"));
    EXPECT_THAT(f.statement, HasSubstr("batch 8 would raise tokens/s"));
    EXPECT_THAT(testing::ids(found), Not(::testing::Contains("generation.decode_launch_bound")));
}

TEST(GenerationRules, SmallDecodeFarBelowTheBoundOnAGpuIsLaunchBound) {
    const GenerationRun run({inferbench::testing::generative_benchmark(kPlan)}, bandwidth_for(0.05));
    // The same benchmark, bounds and all, as a GPU's: only there do kernel launches make a step's time.
    std::vector<BenchmarkEvidence> on_gpu = run.evidence();
    on_gpu.at(0).summary.benchmark.device = "cuda:0";
    const auto found = explain(on_gpu);
    const auto& f = testing::only(found, "generation.decode_launch_bound");
    EXPECT_THAT(f.statement, HasSubstr("a step takes 2.000 ms"));
    EXPECT_THAT(f.statement, HasSubstr("(5% of the bound) at batch 2"));
    EXPECT_THAT(testing::ids(found), Not(::testing::Contains("generation.decode_memory_bound")));
    EXPECT_THAT(testing::ids(found), Not(::testing::Contains("generation.decode_below_bound")));
}

TEST(GenerationRules, SmallDecodeFarBelowTheBoundOnACpuIsBelowTheBoundNotLaunchBound) {
    const GenerationRun run({inferbench::testing::generative_benchmark(kPlan)}, bandwidth_for(0.05));
    const auto found = explain(run.evidence());
    EXPECT_THAT(testing::only(found, "generation.decode_below_bound").statement, HasSubstr("decode at 5% of the bandwidth bound"));
    EXPECT_THAT(testing::ids(found), Not(::testing::Contains("generation.decode_launch_bound")));
}

TEST(GenerationRules, DecodeThatFitsTheLastLevelCacheHasNoDramBound) {
    const GenerationRun run({inferbench::testing::generative_benchmark(kPlan)}, bandwidth_for(0.05),
                            R"({"cpu_model": "Test CPU", "cpu_last_level_cache_bytes": 1073741824})");
    const auto found = explain(run.evidence());
    for (const char* id : {"generation.decode_memory_bound", "generation.decode_below_bound",
                           "generation.decode_launch_bound"})
        EXPECT_THAT(testing::ids(found), Not(::testing::Contains(id)));
    EXPECT_THAT(testing::only(found, "generation.bound_not_measured").statement, HasSubstr("last-level cache"));
}

TEST(GenerationRules, WithoutABandwidthTheBoundIsSaidUnknown) {
    const GenerationRun run({inferbench::testing::generative_benchmark(kPlan)}, std::nullopt);
    const auto found = explain(run.evidence());
    EXPECT_THAT(testing::only(found, "generation.bound_not_measured").statement, HasSubstr("bandwidth bound is unknown"));
    EXPECT_THAT(testing::ids(found), Not(::testing::Contains("generation.decode_memory_bound")));
}

TEST(GenerationRules, KvCacheGrowthFiresOnRisingStepsOnly) {
    GenerationPlan growing = kPlan;
    growing.output_tokens = 21;
    growing.growth_ns = 50'000;  // 2 ms + 0.05 ms per step: +50% over 20 steps
    const GenerationRun run({inferbench::testing::generative_benchmark(growing)}, std::nullopt);
    const auto& f = testing::only(explain(run.evidence()), "generation.kv_cache_growth");
    // 0.05 ms per token of context is 50 ms per 1k tokens.
    EXPECT_THAT(f.statement, HasSubstr("+50.000 ms per 1k tokens of context, from 2.000 ms to 2.950 ms over 20 steps"));
    EXPECT_THAT(f.statement, HasSubstr("KV cache is"));

    GenerationPlan flat = growing;
    flat.growth_ns = 0;
    const GenerationRun steady({inferbench::testing::generative_benchmark(flat)}, std::nullopt);
    EXPECT_THAT(testing::ids(explain(steady.evidence())), Not(::testing::Contains("generation.kv_cache_growth")));
}

TEST(GenerationRules, OutOfMemoryNamesTheFailedBatchBesideTheLargestThatRan) {
    auto small = inferbench::testing::generative_benchmark(kPlan);
    GenerationPlan larger_plan = kPlan;
    larger_plan.batch = 8;
    auto larger = inferbench::testing::generative_benchmark(larger_plan);
    store::MeasuredBenchmark failed;
    failed.record = small.record;
    failed.record.batch_size = 64;
    failed.record.status = BenchmarkStatus::failed;
    failed.record.reason = "CUDA out of memory: the KV cache of 64 x 21 tokens needs 2.1 GiB";
    store::MeasuredBenchmark other_failure = failed;
    other_failure.record.batch_size = 128;
    other_failure.record.reason = "engine crashed (signal 11)";
    const GenerationRun run({small, larger, failed, other_failure}, std::nullopt);
    const auto found = explain(run.evidence());
    const auto& f = testing::only(found, "generation.out_of_memory");
    EXPECT_THAT(f.statement, HasSubstr("batch 64 ran out of memory"));
    EXPECT_THAT(f.statement, HasSubstr("batch 8 is the largest that ran"));
    EXPECT_THAT(f.statement, Not(HasSubstr("128")));
    const auto found_ids = testing::ids(found);
    EXPECT_EQ(std::count(found_ids.begin(), found_ids.end(), "generation.out_of_memory"), 1);

    const GenerationRun fine({small, larger, other_failure}, std::nullopt);
    EXPECT_THAT(testing::ids(explain(fine.evidence())), Not(::testing::Contains("generation.out_of_memory")));
}

}  // namespace
}  // namespace inferbench::findings
