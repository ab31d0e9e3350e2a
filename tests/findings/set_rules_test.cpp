// Rules across benchmarks on small stored runs: a lower precision that is not faster, where batching
// stops paying, and the winner of each objective with its margin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "findings/findings.hpp"
#include "findings/rules.hpp"
#include "findings_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;

// `count` iterations of about `ns` (0.5% jitter), at `batch`.
StoredBenchmark timed(std::string precision, double ns, std::int64_t batch = 1, std::string backend = "tensorrt") {
    auto b = benchmark("cuda:0", std::move(precision), batch, std::move(backend));
    b.iterations = iterations(100, [ns](int i) { return ns * (1 + 0.005 * jitter(i)); });
    return b;
}

TEST(PrecisionAnomalies, Int8SlowerThanFp16FiresAndSaysTheCauseWasNotMeasured) {
    const StoredRun run({timed("fp16", 1'000'000), timed("int8", 1'100'000)});
    const auto found = precision_anomalies(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("precision.int8_not_faster_than_fp16"));
    EXPECT_EQ(found[0].severity, Severity::problem);
    EXPECT_THAT(found[0].statement, HasSubstr("(+10.0%, beyond the noise (0.06%))"));
    EXPECT_THAT(found[0].statement, HasSubstr("probable cause not measured: no per-layer profile stored"));
    EXPECT_THAT(found[0].benchmarks, ElementsAre(run.at(1).id(), run.at(0).id()));
}

TEST(PrecisionAnomalies, TheLayerProfileNamesReformatLayersAsTheCause) {
    auto int8 = timed("int8", 1'000'000);
    int8.layers = {{"conv1", "Conv", "TensorRT", 1, 600'000}, {"reformat_1", "Reformat", "TensorRT", 1, 400'000}};
    const StoredRun run({timed("fp16", 1'000'000), int8});
    const auto found = precision_anomalies(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("precision.int8_not_faster_than_fp16"));
    EXPECT_EQ(found[0].severity, Severity::warning);  // as fast, not slower
    EXPECT_THAT(found[0].statement, HasSubstr("probable cause: 40% of the profiled time is in reformat/quantize layers"));
    EXPECT_THAT(found[0].evidence.layers, ElementsAre("reformat_1 (Reformat, 40.0%)"));
}

TEST(PrecisionAnomalies, ALowerPrecisionFasterBeyondNoiseStaysSilent) {
    const StoredRun run({timed("fp32", 2'000'000), timed("fp16", 1'000'000), timed("int8", 700'000)});
    EXPECT_THAT(precision_anomalies(run.evidence()), IsEmpty());
}

TEST(BatchScaling, ThroughputLevellingOffFiresThePlateauWithTheBestBatches) {
    // batch 1: 1 ms (1000/s), batch 4: 2 ms (2000/s), batch 8: 3.9 ms (2051/s, +2.6%).
    const StoredRun run({timed("fp16", 1'000'000, 1), timed("fp16", 2'000'000, 4), timed("fp16", 3'900'000, 8)});
    const auto found = batch_scaling(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("batch.plateau"));
    EXPECT_THAT(found[0].statement, HasSubstr("throughput stops growing at batch 4"));
    EXPECT_THAT(found[0].statement, HasSubstr("latency grows about linearly with the batch from batch 4 on"));
    EXPECT_THAT(found[0].statement, HasSubstr("best batch for throughput: batch 8"));
    EXPECT_THAT(found[0].statement, HasSubstr("inferences per joule not measured"));
}

StoredBenchmark noisy(double ns, std::int64_t batch, double spread, int count = 10) {
    auto b = benchmark("cuda:0", "fp16", batch, "tensorrt");
    b.iterations = iterations(count, [=](int i) { return ns * (1 + spread * ((i % 2) * 2 - 1)); });
    return b;
}

TEST(BatchScaling, AGainWithinTheNoiseIsNoGrowth) {
    // batch 8 gives +8% throughput over batch 4, more than the 5% of a plateau, but ten latencies spread by
    // 20% bound each mean only to +-15% (t(9) x 0.21 / sqrt(10)), +-21% for the ratio: the gain is within the
    // noise, so throughput is not shown to grow past batch 4.
    const StoredRun run({noisy(1'000'000, 1, 0.2), noisy(2'000'000, 4, 0.2), noisy(3'700'000, 8, 0.2)});
    const auto found = batch_scaling(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("batch.plateau"));
    EXPECT_THAT(found[0].statement, HasSubstr("throughput stops growing at batch 4"));
    EXPECT_THAT(found[0].statement, HasSubstr("within the noise"));
    // The same figures measured steadily: batch 8's +8% is growth.
    const StoredRun steady({noisy(1'000'000, 1, 0.001), noisy(2'000'000, 4, 0.001), noisy(3'700'000, 8, 0.001)});
    EXPECT_THAT(ids(batch_scaling(steady.evidence())), ElementsAre("batch.still_scaling"));
    // And as noisy, but over 1000 iterations each: their batch means bound each mean to well under 1%, so a
    // spread of single latencies wider than the gain does not hide it.
    const StoredRun many({noisy(1'000'000, 1, 0.2, 1000), noisy(2'000'000, 4, 0.2, 1000), noisy(3'700'000, 8, 0.2, 1000)});
    EXPECT_THAT(ids(batch_scaling(many.evidence())), ElementsAre("batch.still_scaling"));
    const auto grown = batch_scaling(steady.evidence());
    ASSERT_THAT(ids(grown), ElementsAre("batch.still_scaling"));
    EXPECT_THAT(grown[0].statement, HasSubstr("beyond the noise"));
}

StoredBenchmark repeat_of(std::int64_t repeat, double ns, double spread, int count) {
    auto b = noisy(ns, 32, spread, count);
    b.record.repeat = repeat;
    return b;
}

TEST(RepeatSpread, RepeatsThatDifferBeyondTheirOwnIntervalsSaySo) {
    // The H200's five repeats of ResNet-50 fp16 b32: each run's mean is bound to about +-0.1%, the means
    // spread 6.8% (two levels, one repeat slowed by other work on the GPU).
    const double means[] = {3'919'000, 3'799'000, 3'776'000, 4'034'000, 3'795'000};
    std::vector<StoredBenchmark> cells;
    for (std::int64_t r = 0; r < 5; ++r) cells.push_back(repeat_of(r, means[r], 0.002, 800));
    const StoredRun run(std::move(cells));
    const auto found = repeat_spread(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("repeats.spread"));
    EXPECT_EQ(found[0].severity, Severity::warning);
    EXPECT_EQ(found[0].benchmarks.size(), 5u);
    EXPECT_THAT(found[0].statement, HasSubstr("its 5 repeats differ beyond their own intervals: means 3.78 ms to 4.03 ms"));
    EXPECT_THAT(found[0].statement, HasSubstr("(+6.8%, CV of the means 2.9%)"));
    // Student t over the five means: 2.776 x 0.1103 ms / sqrt(5) = 0.137 ms, 3.5% of 3.865 ms.
    EXPECT_THAT(found[0].statement, HasSubstr("over the repeats the interval is ±3.5%"));
    EXPECT_THAT(found[0].statement, HasSubstr("each run's 95% interval of its mean is ±0.0023%."));
}

TEST(RepeatSpread, RepeatsWithinTheirNoiseAndSingleRunsSayNothing) {
    // 3% apart, but ten latencies spread by 20% bound each mean only to about +-15%.
    const StoredRun noisy_repeats({repeat_of(0, 1'000'000, 0.2, 10), repeat_of(1, 1'030'000, 0.2, 10)});
    EXPECT_TRUE(repeat_spread(noisy_repeats.evidence()).empty());
    // Two cells measured once each: nothing to compare a cell with.
    const StoredRun single({noisy(1'000'000, 1, 0.001, 100), noisy(2'000'000, 4, 0.001, 100)});
    EXPECT_TRUE(repeat_spread(single.evidence()).empty());
}

TEST(Comparisons, ACellsRepeatsAreOneRowWithTheIntervalOverThem) {
    // Two cells, two repeats each, every run steady (its own interval about +-0.1%). Their first repeats alone
    // (1.00 vs 1.03 ms) would differ beyond that noise; over the repeats, tensorrt's means 1.00 and 1.05 ms
    // bound its mean of 1.025 ms only to about +-31% (Student t, 1 degree of freedom), so the 1% margin
    // between the cells is within the noise.
    const auto cell = [](std::string backend, std::int64_t repeat, double ns) {
        auto b = noisy(ns, 1, 0.001, 200);
        b.record.backend = std::move(backend);
        b.record.repeat = repeat;
        return b;
    };
    const StoredRun run({cell("tensorrt", 0, 1'000'000), cell("tensorrt", 1, 1'050'000),
                         cell("onnxruntime", 0, 1'030'000), cell("onnxruntime", 1, 1'040'000)});
    const auto found = comparisons(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("compare.winners"));
    EXPECT_THAT(found[0].statement, HasSubstr("2 benchmarks"));
    EXPECT_THAT(found[0].statement, HasSubstr("latency: #1 tensorrt"));
    EXPECT_THAT(found[0].statement, HasSubstr("within the noise"));
    EXPECT_THAT(found[0].statement, Not(HasSubstr("beyond the noise")));
}

TEST(PrecisionAnomalies, HostDispatchTimesNameCountsNotShares) {
    auto int8 = timed("int8", 1'100'000, 1, "onnxruntime");
    int8.layers = {{"conv1_quant", "QuantizeLinear", "CUDAExecutionProvider", 1, 6'000, true},
                   {"conv1", "QLinearConv", "CUDAExecutionProvider", 1, 4'000, true},
                   {"nms", "NonMaxSuppression", "CPUExecutionProvider", 1, 400'000}};
    const StoredRun run({timed("fp16", 1'000'000, 1, "onnxruntime"), int8});
    const auto found = precision_anomalies(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("precision.int8_not_faster_than_fp16"));
    EXPECT_THAT(found[0].statement,
                HasSubstr("possible causes: 1 nodes fell back to the CPU; 1 reformat/quantize layers "
                          "ran; per-layer GPU times not measured"));
    EXPECT_THAT(found[0].statement, Not(HasSubstr("% of the profiled time")));
    EXPECT_THAT(found[0].try_next, HasSubstr("ONNX Runtime's CUDA provider runs a QDQ model's Conv, MatMul and Gemm as "
                                             "dequantize, float kernel, quantize"));
}

TEST(BatchScaling, ThroughputStillGrowingSaysSoAndOneBatchSizeSaysNothing) {
    const StoredRun growing({timed("fp16", 1'000'000, 1), timed("fp16", 1'200'000, 8)});
    EXPECT_THAT(ids(batch_scaling(growing.evidence())), ElementsAre("batch.still_scaling"));
    const StoredRun single({timed("fp16", 1'000'000, 1), timed("fp32", 2'000'000, 1)});
    EXPECT_THAT(batch_scaling(single.evidence()), IsEmpty());
}

TEST(Comparisons, TheWinnerOfEachObjectiveWithItsMarginBeyondOrWithinNoise) {
    const StoredRun run({timed("fp16", 1'000'000, 1, "tensorrt"), timed("fp16", 1'500'000, 1, "onnxruntime")});
    const auto found = comparisons(run.evidence());
    ASSERT_THAT(ids(found), ElementsAre("compare.winners"));
    EXPECT_THAT(found[0].statement, HasSubstr("50.0% ahead of #2 onnxruntime fp16 cuda:0 b1 (1.50 ms"));
    EXPECT_THAT(found[0].statement, HasSubstr("beyond the noise"));
    const StoredRun close({timed("fp16", 1'000'000, 1, "tensorrt"), timed("fp16", 1'000'200, 1, "onnxruntime")});
    EXPECT_THAT(comparisons(close.evidence())[0].statement, HasSubstr("within the noise"));
}

TEST(Comparisons, ASingleBenchmarkPerModelAndBatchSaysNothing) {
    const StoredRun run({timed("fp16", 1'000'000, 1), timed("fp16", 2'000'000, 8)});
    EXPECT_THAT(comparisons(run.evidence()), IsEmpty());
}

TEST(Explain, ProblemsComeFirst) {
    auto capped = timed("fp16", 1'000'000);
    capped.gpu = {gpu_sample(kT0, 1500, clock_event::kSwPowerCap),
                  gpu_sample(kT0 + 200'000'000, 1500, clock_event::kSwPowerCap)};
    const StoredRun run({capped, timed("int8", 1'200'000)});
    const auto found = explain(run.evidence());
    ASSERT_FALSE(found.empty());
    EXPECT_EQ(found.front().severity, Severity::problem);
    EXPECT_EQ(found.front().id, "precision.int8_not_faster_than_fp16");
    for (std::size_t i = 1; i < found.size(); ++i) EXPECT_LE(found[i].severity, found[i - 1].severity);
    const auto json = to_json(found.front());
    EXPECT_EQ(json["severity"], "problem");
    EXPECT_EQ(json["benchmarks"].size(), 2U);
}

}  // namespace
}  // namespace inferbench::findings
