// Confidence intervals of one benchmark from its iterations and samples, and a cell's repeats combined
// into one row, against values computed by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/intervals.hpp"
#include "analysis/repeats.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;

constexpr double kMs = 1e6;

TEST(Intervals, OneBenchmarkFromItsIterations) {
    // Six iterations of 1..6 ms started every 10 ms: the mean's interval is the t interval of six values
    // (3.5 +- 1.963314 ms). Cycle times 10, 10, 10, 10, 10 and the last one's 6 ms: mean 9.3333, s 1.632993,
    // half-width 2.570582 x 1.632993 / sqrt(6) = 1.713721 ms; at batch 2 the throughput's interval is
    // 2 / 11.047055 ms .. 2 / 7.619612 ms = 181.0437 .. 262.4806 inferences/s.
    std::vector<IterationRecord> iterations;
    for (int i = 0; i < 6; ++i) iterations.push_back({i * 10 * static_cast<std::int64_t>(kMs), (i + 1) * static_cast<std::int64_t>(kMs)});
    const auto ci = iteration_intervals(iterations, 2);
    ASSERT_TRUE(ci.mean);
    EXPECT_NEAR(ci.mean->low, 3.5 * kMs - 1.963314 * kMs, 1);
    EXPECT_NEAR(ci.mean->high, 3.5 * kMs + 1.963314 * kMs, 1);
    ASSERT_TRUE(ci.throughput);
    EXPECT_NEAR(ci.throughput->low, 181.0437, 1e-3);
    EXPECT_NEAR(ci.throughput->high, 262.4806, 1e-3);
    // Six values bound no percentile at 95% (the median needs P(B <= 0) = 1/64 <= 0.025: ranks 1 and 6).
    ASSERT_TRUE(ci.p50);
    EXPECT_EQ(ci.p50->low, 1 * kMs);
    EXPECT_EQ(ci.p50->high, 6 * kMs);
    EXPECT_FALSE(ci.p99);
    EXPECT_THAT(ci.method, HasSubstr("batch means"));
}

TEST(Intervals, AnIntervalReachingBelowTheFastestIterationIsCutThere) {
    // 29 iterations of 1 us and one of 1 ms: mean 34.3 us, s 182.4 us, t(0.975, 29) 2.045 / sqrt(30):
    // +- 68.106 us, which would reach -33.8 us.
    std::vector<IterationRecord> iterations;
    for (int i = 0; i < 30; ++i) iterations.push_back({i * 2'000'000, i == 7 ? 1'000'000 : 1'000});
    const auto ci = iteration_intervals(iterations, 1);
    ASSERT_TRUE(ci.mean);
    EXPECT_EQ(ci.mean->low, 1'000);
    EXPECT_NEAR(ci.mean->high, 34'300 + 68'106, 10);
}

TEST(Intervals, EnergyPerInferenceAddsThePowerAndThroughputUncertainties) {
    // Power 100, 110, 90, 100, 100, 100 W: s = 6.324555, half-width 6.637214 W: 6.637% of the mean;
    // throughput 100 in 90..110: 10%. 2 J per inference +- 2 x hypot(0.06637, 0.1) = 0.240044 J.
    std::vector<GpuSample> gpu;
    for (const double watts : {100.0, 110.0, 90.0, 100.0, 100.0, 100.0}) {
        GpuSample s;
        s.t_ns = static_cast<std::int64_t>(gpu.size()) * 100'000'000;
        s.power_w = watts;
        gpu.push_back(s);
    }
    GpuSample warmup;
    warmup.phase = SamplePhase::warmup;
    warmup.power_w = 500;  // outside the measured phase: not counted
    gpu.push_back(warmup);
    const auto ci = energy_interval(2.0, gpu, Interval{90, 110}, 100);
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, 2 - 0.240044, 1e-5);
    EXPECT_NEAR(ci->high, 2 + 0.240044, 1e-5);
    EXPECT_FALSE(energy_interval(2.0, gpu, std::nullopt, 100));
    gpu[1].gpu_index = 1;  // samples of two GPUs: their sum was never sampled
    EXPECT_FALSE(energy_interval(2.0, gpu, Interval{90, 110}, 100));
}

BenchmarkSummary repeat(std::int64_t index, double mean_ms, double p99_ms, double throughput, double joules) {
    BenchmarkSummary s;
    s.benchmark.run_id = 1;
    s.benchmark.ordinal = 0;
    s.benchmark.repeat = index;
    s.benchmark.status = BenchmarkStatus::ok;
    s.e2e.count = 100;
    s.e2e.mean = mean_ms * kMs;
    s.e2e.p50 = (mean_ms - 1) * kMs;
    s.e2e.p99 = p99_ms * kMs;
    s.e2e.min = (mean_ms - 8) * kMs;
    s.e2e.max = (p99_ms + 1) * kMs;
    s.throughput_per_s = throughput;
    s.telemetry.joules_per_inference = joules;
    s.telemetry.max_temperature_c = 50 + static_cast<double>(index);
    s.ci.mean = Interval{0, 1};  // its own, replaced by the repeats'
    return s;
}

TEST(Repeats, ThreeRepeatsAreTheirMeansWithStudentTIntervals) {
    // Means 10, 12, 14 ms: 12 ms +- t(0.975, 2) x 2 / sqrt(3) = 4.968275 ms; the CV of the means 2 / 12.
    // Throughputs 100, 90, 80: 90 +- 4.302653 x 10 / sqrt(3) = 24.841379. p99 20, 22, 30: 24.
    const std::vector<BenchmarkSummary> repeats = {repeat(0, 10, 20, 100, 1.0), repeat(1, 12, 22, 90, 1.2),
                                                   repeat(2, 14, 30, 80, 1.4)};
    const BenchmarkSummary row = combine_repeats(repeats);
    EXPECT_EQ(row.repeats, 3);
    EXPECT_EQ(row.benchmark.status, BenchmarkStatus::ok);
    EXPECT_EQ(row.e2e.count, 300);
    EXPECT_DOUBLE_EQ(row.e2e.mean, 12 * kMs);
    EXPECT_DOUBLE_EQ(row.e2e.p99, 24 * kMs);
    EXPECT_DOUBLE_EQ(row.e2e.min, 2 * kMs);
    EXPECT_DOUBLE_EQ(row.e2e.max, 31 * kMs);
    ASSERT_TRUE(row.ci.mean);
    EXPECT_NEAR(row.ci.mean->low, (12 - 4.968275) * kMs, 1);
    EXPECT_NEAR(row.ci.mean->high, (12 + 4.968275) * kMs, 1);
    ASSERT_TRUE(row.cv_of_means_pct);
    EXPECT_NEAR(*row.cv_of_means_pct, 100.0 * 2 / 12, 1e-9);
    EXPECT_DOUBLE_EQ(row.throughput_per_s, 90);
    ASSERT_TRUE(row.ci.throughput);
    EXPECT_NEAR(row.ci.throughput->high, 90 + 24.841379, 1e-5);
    ASSERT_TRUE(row.ci.joules_per_inference);
    EXPECT_NEAR(*row.telemetry.joules_per_inference, 1.2, 1e-12);
    EXPECT_NEAR(row.ci.joules_per_inference->low, 1.2 - 4.302653 * 0.2 / std::sqrt(3.0), 1e-5);
    EXPECT_EQ(row.telemetry.max_temperature_c, 52);  // the hottest repeat
    EXPECT_EQ(row.ci.method, "Student t over 3 repeats");
}

TEST(Repeats, ARepeatThatDidNotMeasureIsNamedAndLeftOut) {
    std::vector<BenchmarkSummary> repeats = {repeat(0, 10, 20, 100, 1.0), repeat(1, 99, 99, 1, 9),
                                             repeat(2, 14, 30, 80, 1.4)};
    repeats[1].benchmark.status = BenchmarkStatus::failed;
    repeats[1].benchmark.reason = "measure failed: boom";
    const BenchmarkSummary row = combine_repeats(repeats);
    EXPECT_EQ(row.repeats, 2);
    EXPECT_EQ(row.benchmark.status, BenchmarkStatus::failed);
    EXPECT_EQ(row.benchmark.reason, "repeat 2 of 3 failed: measure failed: boom; figures from the 2 repeats that measured");
    EXPECT_DOUBLE_EQ(row.e2e.mean, 12 * kMs);
    // Two means, 10 and 14: 12 +- t(0.975, 1) x 2.828427 / sqrt(2) = 12 +- 25.412409; below the fastest
    // iteration (2 ms) no mean of them lies, so the interval is cut there.
    EXPECT_NEAR(row.ci.mean->high, (12 + 25.412409) * kMs, 10);
    EXPECT_EQ(row.ci.mean->low, 2 * kMs);
}

TEST(Repeats, ACellConvergesOnlyWhereEveryRepeatDid) {
    std::vector<BenchmarkSummary> repeats = {repeat(0, 10, 20, 100, 1.0), repeat(1, 12, 22, 90, 1.2)};
    for (auto& r : repeats) r.benchmark.convergence = Convergence::converged;
    EXPECT_EQ(combine_repeats(repeats).benchmark.convergence, Convergence::converged);
    EXPECT_EQ(combine_repeats(repeats).benchmark.stop_reason, "all 2 repeats converged");
    repeats[1].benchmark.convergence = Convergence::not_converged;
    repeats[1].warnings = {"did not converge: stdrel: ..."};
    const BenchmarkSummary row = combine_repeats(repeats);
    EXPECT_EQ(row.benchmark.convergence, Convergence::not_converged);
    EXPECT_EQ(row.benchmark.stop_reason, "1 of 2 repeats did not converge");
    EXPECT_EQ(row.warnings, std::vector<std::string>{"repeat 2: did not converge: stdrel: ..."});
}

// What each repeat judged of its own run is counted over them all, never taken from the first alone:
// throttle flags and the samples summed, energy net of idle averaged, a scenario VALID only where every
// repeat was, LoadGen's per-run estimates dropped.
TEST(Repeats, ThrottleFlagsSamplesAndVerdictsCoverEveryRepeat) {
    std::vector<BenchmarkSummary> repeats = {repeat(0, 10, 20, 100, 1.0), repeat(1, 12, 22, 90, 1.2)};
    for (std::size_t i = 0; i < repeats.size(); ++i) {
        auto& r = repeats[i];
        r.samples = 100;
        r.telemetry.joules_per_inference_net = 0.5 + 0.1 * static_cast<double>(i);
        r.throttle = ThrottleSummary{};
        r.throttle->iterations = 100;
        r.throttle->flagged = i == 0 ? 0 : 30;
        r.throttle->unknown = 5;
        r.scenario.label = "server 400 qps";
        r.scenario.completed_qps = 390 + 10 * static_cast<double>(i);
        r.scenario.verdict.valid = i == 0;
        if (i == 1) r.scenario.verdict.reasons = {"p99 above the bound"};
        r.scenario.verdict.estimate = early_stopping::PercentileEstimate{};
    }
    const BenchmarkSummary row = combine_repeats(repeats);
    EXPECT_EQ(row.samples, 200);
    ASSERT_TRUE(row.throttle);
    EXPECT_EQ(row.throttle->iterations, 200);
    EXPECT_EQ(row.throttle->flagged, 30);
    EXPECT_EQ(row.throttle->unknown, 10);
    EXPECT_NEAR(*row.telemetry.joules_per_inference_net, 0.55, 1e-12);
    EXPECT_EQ(row.scenario.verdict.valid, false);
    EXPECT_EQ(row.scenario.verdict.reasons, std::vector<std::string>{"repeat 2: p99 above the bound"});
    EXPECT_FALSE(row.scenario.verdict.estimate);
    EXPECT_DOUBLE_EQ(row.scenario.completed_qps.value_or(0), 395);
    repeats[1].scenario.verdict = {};  // repeat 2 judged nothing: VALID cannot be claimed for the cell
    repeats[0].scenario.verdict.valid = true;
    EXPECT_FALSE(combine_repeats(repeats).scenario.verdict.valid);
    repeats[0].throttle.reset();  // one repeat not judged: no share for the cell
    EXPECT_FALSE(combine_repeats(repeats).throttle);
}

TEST(Repeats, CellsAreCombinedAndSingleRunsKeptAsTheyAre) {
    std::vector<BenchmarkSummary> stored = {repeat(0, 10, 20, 100, 1), repeat(1, 12, 22, 90, 1)};
    BenchmarkSummary other = repeat(0, 5, 6, 200, 1);
    other.benchmark.ordinal = 1;
    stored.push_back(other);
    const auto rows = combine_cells(stored);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].repeats, 2);
    EXPECT_EQ(rows[1].repeats, 1);
    ASSERT_TRUE(rows[1].ci.mean);
    EXPECT_EQ(*rows[1].ci.mean, (Interval{0, 1})) << "a single run keeps its own interval";
}

}  // namespace
}  // namespace inferbench::analysis
