// A benchmark summarized under its measure conditions: each throttle policy over hand-made iterations
// and telemetry, throughput with the L2 flush, energy net of idle power, the notes a cooldown leaves,
// and the run's GPU facts read from its environment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/summary.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMs = 1'000'000;

// Ten iterations, one every 10 ms: numbers 1, 2 and 3 take 9 ms, the others 5 ms. GPU 0 is sampled every
// 10 ms at 7 ms past each slot (300 W, 1980 MHz); the sample at 27 ms shows the SW power cap, which
// flags iterations 1 (its next sample), 2 (during it) and 3 (its last sample before).
store::MeasuredBenchmark measured_on(const std::string& device, MeasureConditions conditions) {
    store::MeasuredBenchmark m;
    m.record.device = device;
    m.record.batch_size = 1;
    BenchmarkSpec spec;
    spec.conditions = conditions;
    m.record.settings_json = spec_to_json(spec).dump();
    for (int k = 0; k < 10; ++k) m.iterations.push_back({k * 10 * kMs, (k >= 1 && k <= 3 ? 9 : 5) * kMs});
    m.record.measured_wall_ns = 95 * kMs;
    for (int i = -1; i <= 10; ++i) {
        GpuSample s;
        s.t_ns = (i * 10 + 7) * kMs;
        s.phase = s.t_ns < 0 ? SamplePhase::warmup : s.t_ns > 95 * kMs ? SamplePhase::teardown : SamplePhase::measure;
        s.power_w = 300;
        s.sm_clock_mhz = 1980;
        s.clock_event_reasons = i == 2 ? clock_event::kSwPowerCap : 0;
        m.gpu_samples.push_back(s);
    }
    return m;
}

MeasureConditions with_policy(ThrottlePolicy policy) {
    MeasureConditions c;
    c.throttle_policy = policy;
    return c;
}

std::map<int, GpuFacts> h200_facts() {
    GpuFacts facts;
    facts.default_clock_mhz = 1980;
    facts.idle = GpuMeans{0, 100.0, 35.0, 0.0, 30};
    return {{0, facts}};
}

bool mentions(const BenchmarkSummary& s, const std::string& text) {
    return std::ranges::any_of(s.warnings, [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(ThrottlePolicy, KeepFlagsNothing) {
    const auto s = summarize_measured(measured_on("cuda:0", with_policy(ThrottlePolicy::keep)), h200_facts());
    EXPECT_FALSE(s.throttle);
    EXPECT_EQ(s.e2e.count, 10);
    EXPECT_DOUBLE_EQ(s.e2e.mean, 6.2 * kMs);
    EXPECT_FALSE(mentions(s, "ran throttled"));
}

TEST(ThrottlePolicy, FlagKeepsEveryIterationAndShowsTheShare) {
    const auto s = summarize_measured(measured_on("cuda:0", with_policy(ThrottlePolicy::flag)), h200_facts());
    ASSERT_TRUE(s.throttle);
    EXPECT_EQ(s.throttle->flagged, 3);
    EXPECT_EQ(s.throttle->unknown, 0);
    EXPECT_EQ(s.throttle->discarded, 0);
    EXPECT_DOUBLE_EQ(*s.throttle->flagged_share(), 0.3);
    EXPECT_EQ(s.e2e.count, 10);
    EXPECT_DOUBLE_EQ(s.e2e.mean, 6.2 * kMs);
    EXPECT_DOUBLE_EQ(s.throughput_per_s, 10 / 0.095);
    EXPECT_TRUE(mentions(s, "30.0% of iterations ran throttled (SW power cap); the statistics include them"));
}

TEST(ThrottlePolicy, DiscardLeavesTheFlaggedOutAndSaysHowMany) {
    const auto s = summarize_measured(measured_on("cuda:0", with_policy(ThrottlePolicy::discard)), h200_facts());
    ASSERT_TRUE(s.throttle);
    EXPECT_EQ(s.throttle->discarded, 3);
    EXPECT_EQ(s.e2e.count, 7);
    EXPECT_DOUBLE_EQ(s.e2e.mean, 5.0 * kMs);
    EXPECT_DOUBLE_EQ(s.e2e.max, 5.0 * kMs);
    // The kept iterations' share of the measured time: 95 ms x 35 / 62.
    EXPECT_NEAR(s.throughput_per_s, 7 / (0.095 * 35.0 / 62.0), 1e-6);
    EXPECT_TRUE(mentions(s, "3 of 10 iterations ran throttled (SW power cap) and are left out of the statistics"));
    // Energy still covers every measured iteration.
    EXPECT_TRUE(s.telemetry.joules_per_inference);
}

TEST(ThrottlePolicy, DiscardingEveryIterationLeavesNoStatistics) {
    auto m = measured_on("cuda:0", with_policy(ThrottlePolicy::discard));
    for (auto& sample : m.gpu_samples) sample.clock_event_reasons = clock_event::kHwThermalSlowdown;
    const auto s = summarize_measured(m, h200_facts());
    EXPECT_EQ(s.throttle->discarded, 10);
    EXPECT_EQ(s.e2e.count, 0);
    EXPECT_FALSE(has_latency(s));
    EXPECT_TRUE(mentions(s, "10 of 10 iterations ran throttled (HW thermal slowdown)"));
}

TEST(ThrottlePolicy, TheClockCriterionNeedsTheDefaultClock) {
    auto m = measured_on("cuda:0", with_policy(ThrottlePolicy::flag));
    for (auto& sample : m.gpu_samples) sample.clock_event_reasons = 0;
    m.gpu_samples[5].sm_clock_mhz = 1400;  // t = 47 ms, below 0.75 x 1980 = 1485 MHz
    const auto with_clock = summarize_measured(m, h200_facts());
    // Iterations 3 (30-39 ms) and 4 (40-45 ms), whose next sample it is, and 5 (50-55 ms), whose last before.
    EXPECT_EQ(with_clock.throttle->flagged, 3);
    EXPECT_TRUE(mentions(with_clock, "(SM clock under 1485 MHz (0.75 x 1980 MHz))"));
    const auto without = summarize_measured(m, {});
    EXPECT_EQ(without.throttle->flagged, 0);
    EXPECT_FALSE(without.throttle->default_clock_mhz);
}

TEST(ThrottlePolicy, IterationsNoSampleCoversAreCountedAsNotKnown) {
    auto m = measured_on("cuda:0", with_policy(ThrottlePolicy::flag));
    m.gpu_samples.resize(6);  // the last sample at 47 ms: iterations 5 to 9 lie beyond it
    const auto s = summarize_measured(m, h200_facts());
    EXPECT_EQ(s.throttle->unknown, 5);
    EXPECT_TRUE(mentions(s, "5 of 10 iterations not known to be throttled or not: no GPU sample covers them"));
    m.gpu_samples.clear();
    const auto blind = summarize_measured(m, h200_facts());
    EXPECT_FALSE(blind.throttle->flagged_share()) << "nothing judged: not a 0% claim";
    EXPECT_TRUE(mentions(blind, "throttling of the iterations not known"));
}

TEST(ThrottlePolicy, CpuBenchmarksAreNotFlagged) {
    const auto s = summarize_measured(measured_on("cpu", with_policy(ThrottlePolicy::discard)), h200_facts());
    EXPECT_FALSE(s.throttle);
    EXPECT_EQ(s.e2e.count, 10);
}

TEST(L2Flush, ThroughputCountsTheIterationsOwnTime) {
    MeasureConditions c = with_policy(ThrottlePolicy::keep);
    c.l2_flush = true;
    const auto s = summarize_measured(measured_on("cuda:0", c), h200_facts());
    EXPECT_DOUBLE_EQ(s.throughput_per_s, 10 / 0.062);
    EXPECT_TRUE(mentions(s, "l2_flush: throughput over the iterations' own time"));
}

TEST(NetEnergy, SubtractsTheIdlePowerOverTheSampledSpan) {
    const auto s = summarize_measured(measured_on("cuda:0", with_policy(ThrottlePolicy::keep)), h200_facts());
    // Measure samples at 7..87 ms: 300 W over 80 ms = 24 J (integrated, no counter), for 10 x 80/95 inferences.
    const double inferences = 10 * 80.0 / 95.0;
    ASSERT_TRUE(s.telemetry.joules_per_inference);
    EXPECT_NEAR(*s.telemetry.joules_per_inference, 24.0 / inferences, 1e-9);
    EXPECT_DOUBLE_EQ(*s.telemetry.idle_power_w, 100.0);
    EXPECT_NEAR(*s.telemetry.joules_per_inference_net, (24.0 - 100.0 * 0.080) / inferences, 1e-9);
}

TEST(NetEnergy, NotMeasuredWithoutABaselineOrBelowIt) {
    EXPECT_FALSE(summarize_measured(measured_on("cuda:0", {}), {}).telemetry.joules_per_inference_net);
    auto facts = h200_facts();
    facts[0].idle->power_w = 350;  // more than the measured 300 W: no net energy to claim
    const auto s = summarize_measured(measured_on("cuda:0", {}), facts);
    EXPECT_TRUE(s.telemetry.joules_per_inference);
    EXPECT_FALSE(s.telemetry.joules_per_inference_net);
}

TEST(Cooldown, ACellThatRanBeforeTheGpuWasIdleSaysSo) {
    auto m = measured_on("cuda:0", {});
    m.metrics = {{std::string(harness_metrics::kCooldownS), 120.2, "s"},
                 {std::string(harness_metrics::kCooldownReachedIdle), 0, "flag"},
                 {std::string(harness_metrics::kCooldownEndPowerW), 120, "W"},
                 {std::string(harness_metrics::kCooldownEndTemperatureC), 52, "C"}};
    const auto s = summarize_measured(m, h200_facts());
    EXPECT_TRUE(mentions(s, "cooldown: GPU 0 not back near its idle baseline after 120 s (52 °C (idle 35 °C), 120 W "
                            "(idle 100 W)); the cell ran anyway"));
    m.metrics[1].value = 1;
    EXPECT_FALSE(mentions(summarize_measured(m, h200_facts()), "cooldown"));
}

TEST(RunFacts, DefaultClocksAndTheIdleBaselineComeFromTheEnvironment) {
    const auto environment = nlohmann::json::parse(R"({
        "gpus": {"source": "nvml", "devices": [
            {"index": 0, "name": "NVIDIA H200", "default_applications_clock_mhz": 1980},
            {"index": 1, "name": "NVIDIA H200"}]},
        "idle_baseline": {"measured_ns": 3000000000, "gpus": [
            {"index": 0, "power_w": 78.5, "temperature_c": 31, "gpu_util_pct": 0, "samples": 30},
            {"index": 1, "temperature_c": 33, "samples": 30}]}})");
    const auto facts = gpu_facts(environment);
    ASSERT_EQ(facts.size(), 2u);
    EXPECT_EQ(facts.at(0).default_clock_mhz, 1980.0);
    EXPECT_EQ(facts.at(0).idle->power_w, 78.5);
    EXPECT_FALSE(facts.at(1).default_clock_mhz);
    EXPECT_FALSE(facts.at(1).idle->power_w);
    EXPECT_EQ(facts.at(1).idle->temperature_c, 33.0);
    EXPECT_TRUE(gpu_facts(nlohmann::json::parse(R"({"gpus": []})")).empty()) << "runs without these keys";
}

}  // namespace
}  // namespace inferbench::analysis
