// The decode ceiling and the TTFT floor of synthetic generative benchmarks under hand-made roofs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/generation_bounds.hpp"
#include "analysis/roofline_placement.hpp"
#include "common/generation_fixture.hpp"
#include "core/temp_dir.hpp"
#include "devices/cpu_peaks.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;
using testing::GenerationPlan;

constexpr GenerationPlan kPlan{.batch = 2, .input_tokens = 16, .output_tokens = 5, .generations = 4,
                               .ttft_ns = 10'000'000, .step_ns = 2'000'000, .kv_bytes_per_token = 1024};

GenerationMetrics metrics_of(const GenerationPlan& plan, double bytes_per_weight = 2.0) {
    auto measured = testing::generative_benchmark(plan);
    measured.metrics = testing::decoder_metric_rows(testing::small_decoder_shape(), bytes_per_weight,
                                                    plan.kv_bytes_per_token);
    return generation_metrics(measured);
}

devices::DeviceRoofs gpu_roofs() {
    devices::DeviceRoofs roofs;
    roofs.key = "test-gpu";
    roofs.name = "Test GPU";
    roofs.memory = {{"DRAM", 100e9, devices::RoofOrigin::datasheet, "datasheet"},
                    {"DRAM", 80e9, devices::RoofOrigin::measured, "probe dram_copy"}};
    roofs.compute = {{devices::Precision::fp16, 100e12, devices::RoofOrigin::datasheet, "tensor cores, dense"}};
    return roofs;
}

TEST(GenerationBounds, DecodeCeilingIsBandwidthOverWeightAndKvBytes) {
    const auto m = metrics_of(kPlan);
    const auto shape = testing::small_decoder_shape();
    const auto b = generation_bounds(m, gpu_roofs(), "fp16");
    ASSERT_TRUE(b);
    const double weights = 2.0 * static_cast<double>(parameters_read_per_step(shape));
    EXPECT_DOUBLE_EQ(b->weight_bytes_per_step, weights);
    // Decode steps 1..4 hold 2 x (16 + s) tokens of 1024 B: a mean of 2 x 18.5 x 1024.
    EXPECT_DOUBLE_EQ(b->kv_bytes_per_step, 2 * 18.5 * 1024);
    EXPECT_DOUBLE_EQ(b->kv_share, b->kv_bytes_per_step / (weights + b->kv_bytes_per_step));
    ASSERT_EQ(b->decode.size(), 2U);
    const DecodeCeiling* datasheet = b->decode_ceiling(false);
    ASSERT_TRUE(datasheet);
    EXPECT_DOUBLE_EQ(datasheet->steps_per_s, 100e9 / b->bytes_per_step);
    EXPECT_DOUBLE_EQ(*datasheet->fraction, (4 / 0.008) / datasheet->steps_per_s);  // 4 decode steps in 8 ms
    EXPECT_EQ(b->best_decode()->what, "probe dram_copy");
    EXPECT_DOUBLE_EQ(b->best_decode()->steps_per_s, 80e9 / b->bytes_per_step);
}

TEST(GenerationBounds, AStepThatFitsTheCpusLastLevelCacheIsNotHeldToDram) {
    const auto m = metrics_of(kPlan);
    devices::DeviceRoofs roofs = gpu_roofs();
    roofs.name = "Test CPU";
    const auto unbounded = generation_bounds(m, roofs, "fp16");
    ASSERT_TRUE(unbounded);
    EXPECT_FALSE(unbounded->fits_last_level_cache) << "no cache size stored: DRAM's ceiling stands";
    roofs.last_level_cache_bytes = unbounded->bytes_per_step * 2;
    const auto b = generation_bounds(m, roofs, "fp16");
    EXPECT_TRUE(b->fits_last_level_cache);
    EXPECT_TRUE(b->decode.empty()) << "no ceiling a table or figure could show as one";
    EXPECT_THAT(::testing::PrintToString(b->notes), HasSubstr("last-level cache, so DRAM's bandwidth does not bound"));
    roofs.last_level_cache_bytes = unbounded->bytes_per_step / 2;
    EXPECT_FALSE(generation_bounds(m, roofs, "fp16")->fits_last_level_cache);
}

TEST(GenerationBounds, TtftFloorIsPrefillFlopsOverThePeak) {
    const auto m = metrics_of(kPlan);
    const auto b = generation_bounds(m, gpu_roofs(), "fp16");
    ASSERT_TRUE(b && b->prefill_flops);
    EXPECT_DOUBLE_EQ(*b->prefill_flops, 2 * forward_flops(testing::small_decoder_shape(), 16, 0));
    ASSERT_EQ(b->prefill.size(), 1U);
    EXPECT_DOUBLE_EQ(b->prefill[0].ttft_ns, *b->prefill_flops / 100e12 * 1e9);
    EXPECT_DOUBLE_EQ(b->prefill[0].fraction, b->prefill[0].ttft_ns / 10e6);
    // No fp32 roof on this device: the floor is unknown, and said so.
    const auto fp32 = generation_bounds(m, gpu_roofs(), "fp32");
    EXPECT_TRUE(fp32->prefill.empty());
    EXPECT_THAT(::testing::PrintToString(fp32->notes), HasSubstr("TTFT floor unknown"));
}

TEST(GenerationBounds, CpuWithoutMeasuredBandwidthSaysUnknown) {
    devices::DeviceRoofs cpu;
    cpu.name = "Some CPU";
    cpu.compute = {{devices::Precision::fp32, 1e11, devices::RoofOrigin::estimated, "estimated"}};
    const auto b = generation_bounds(metrics_of(kPlan), cpu, "fp32");
    ASSERT_TRUE(b);
    EXPECT_TRUE(b->decode.empty());
    EXPECT_EQ(b->best_decode(), nullptr);
    EXPECT_THAT(::testing::PrintToString(b->notes), HasSubstr("decode ceiling unknown"));
    cpu.memory = {{"DRAM", 20e9, devices::RoofOrigin::measured, "probe dram_copy"}};
    const auto probed = generation_bounds(metrics_of(kPlan), cpu, "fp32");
    ASSERT_EQ(probed->decode.size(), 1U);
    EXPECT_DOUBLE_EQ(probed->decode[0].bandwidth_bytes_per_s, 20e9);
}

TEST(GenerationBounds, QuantizedWeightsReadFewerBytes) {
    const auto fp16 = generation_bounds(metrics_of(kPlan, 2.0), gpu_roofs(), "fp16");
    const auto q4 = generation_bounds(metrics_of(kPlan, 0.5625), gpu_roofs(), "int4");
    EXPECT_DOUBLE_EQ(q4->weight_bytes_per_step, fp16->weight_bytes_per_step * 0.5625 / 2.0);
    EXPECT_GT(q4->decode_ceiling(false)->steps_per_s, fp16->decode_ceiling(false)->steps_per_s);
}

TEST(GenerationBounds, NothingWithoutDecoderFacts) {
    auto measured = testing::generative_benchmark(kPlan);
    EXPECT_FALSE(generation_bounds(generation_metrics(measured), gpu_roofs(), "fp16"));
}


// A generative benchmark stored on a CPU named "Test CPU" (not this machine's: no estimated peaks), and its summary.
struct StoredGeneration {
    TempDir dir{"generation-bounds"};
    store::ResultsStore results = store::ResultsStore::open(dir.path() / "r.db");
    std::vector<BenchmarkSummary> summaries;

    StoredGeneration() {
        store::RunRecord run;
        run.name = "t";
        run.plan_json = "{}";
        run.environment_json = R"({"cpu_model": "Test CPU"})";
        auto measured = testing::generative_benchmark(kPlan);
        measured.record.run_id = results.begin_run(run);
        measured.metrics = testing::decoder_metric_rows(testing::small_decoder_shape(), 4.0, kPlan.kv_bytes_per_token);
        results.add_benchmark(measured.record, measured.data());
        for (const auto& b : results.benchmarks()) summaries.push_back(summarize_stored(results, b, results.runs()));
    }
};

TEST(GenerationBounds, StoredCpuBenchmarkUsesTheProbedBandwidthOrSaysUnknown) {
    StoredGeneration stored;
    const auto catalog = devices::load_catalog();
    auto bounds = generation_bounds(stored.results, stored.summaries, catalog);
    ASSERT_EQ(bounds.size(), 1U);
    ASSERT_TRUE(bounds[0]);
    EXPECT_TRUE(bounds[0]->decode.empty());
    EXPECT_THAT(::testing::PrintToString(bounds[0]->notes), HasSubstr("decode ceiling unknown"));

    store::ProbeRecord probe;
    probe.device_key = devices::cpu_device_key("Test CPU");
    probe.device_name = "Test CPU";
    probe.name = "dram_copy";
    probe.value = 20;
    probe.unit = "GB/s";
    stored.results.add_probe(probe);
    bounds = generation_bounds(stored.results, stored.summaries, catalog);
    ASSERT_EQ(bounds[0]->decode.size(), 1U);
    EXPECT_DOUBLE_EQ(bounds[0]->decode[0].bandwidth_bytes_per_s, 20e9);
    EXPECT_EQ(bounds[0]->decode[0].origin, devices::RoofOrigin::measured);
}

TEST(GenerationBounds, RooflinePlacesPrefillAndDecodeApart) {
    StoredGeneration stored;
    const auto set = roofline_points(stored.results, stored.summaries, devices::load_catalog());
    ASSERT_EQ(set.points.size(), 2U);
    const RooflinePoint& prefill = set.points[0];
    const RooflinePoint& decode = set.points[1];
    EXPECT_EQ(prefill.phase, "prefill");
    EXPECT_EQ(decode.phase, "decode");
    EXPECT_EQ(prefill.label, "llama-tiny b2 fp32 prefill");
    const auto shape = testing::small_decoder_shape();
    const double weights = 4.0 * static_cast<double>(parameters_read_per_step(shape));
    EXPECT_DOUBLE_EQ(prefill.flops_per_inference, 2 * forward_flops(shape, 16, 0));
    EXPECT_DOUBLE_EQ(prefill.bytes_per_inference, weights + 2 * 16 * 1024.0);
    EXPECT_DOUBLE_EQ(prefill.throughput_per_s, 100.0);  // one prefill per 10 ms
    EXPECT_DOUBLE_EQ(decode.bytes_per_inference, weights + 2 * 18.5 * 1024);
    EXPECT_DOUBLE_EQ(decode.throughput_per_s, 500.0);   // 4 decode steps in 8 ms
    // A prompt of 16 tokens reuses each weight 32 times over the batch; a decode step twice.
    EXPECT_GT(prefill.intensity, 10 * decode.intensity);
}

}  // namespace
}  // namespace inferbench::analysis
