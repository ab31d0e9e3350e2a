// Iterations flagged as throttled against hand-made telemetry: which samples cover an iteration, the
// edges of the sampled span, gaps in it, and what makes a sample throttled.
#include "analysis/throttle_flags.hpp"

#include <gtest/gtest.h>

namespace inferbench::analysis {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint64_t kPowerCap = clock_event::kSwPowerCap;

GpuSample sample(std::int64_t t_ms, std::optional<std::uint64_t> reasons, std::optional<double> sm_mhz = std::nullopt) {
    GpuSample s;
    s.t_ns = t_ms * kMs;
    s.clock_event_reasons = reasons;
    s.sm_clock_mhz = sm_mhz;
    return s;
}

IterationRecord iteration(std::int64_t start_ms, std::int64_t e2e_ms) {
    IterationRecord it;
    it.start_ns = start_ms * kMs;
    it.e2e_ns = e2e_ms * kMs;
    return it;
}

using S = IterationState;

TEST(ThrottleFlags, AnIterationBetweenTwoSamplesIsJudgedByBoth) {
    // Samples every 100 ms; the one at 200 ms shows the power cap.
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, 0), sample(200, kPowerCap), sample(300, 0),
                                        sample(400, 0)};
    const std::vector<IterationRecord> its = {
        iteration(10, 20),   // between 0 and 100: both clear
        iteration(120, 30),  // between 100 and 200: the sample after it is throttled
        iteration(210, 30),  // between 200 and 300: the sample before it is throttled
        iteration(310, 30),  // between 300 and 400: clear
    };
    const auto flags = flag_iterations(its, gpu, {});
    EXPECT_EQ(flags.states, (std::vector<S>{S::clear, S::flagged, S::flagged, S::clear}));
    EXPECT_EQ(flags.flagged, 2);
    EXPECT_EQ(flags.clear, 2);
    EXPECT_EQ(flags.unknown, 0);
    EXPECT_EQ(flags.reasons, kPowerCap);
    EXPECT_FALSE(flags.clock_below_floor);
}

TEST(ThrottleFlags, ALongIterationIsJudgedByEverySampleDuringIt) {
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, 0), sample(200, kPowerCap), sample(300, 0),
                                        sample(400, 0)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(50, 300)}, gpu, {}).states, std::vector<S>{S::flagged});
    const std::vector<GpuSample> calm = {sample(0, 0), sample(100, 0), sample(200, 0), sample(300, 0), sample(400, 0)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(50, 300)}, calm, {}).states, std::vector<S>{S::clear});
}

TEST(ThrottleFlags, EdgesOnSampleTimesIncludeTheSampleThere) {
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, kPowerCap), sample(200, 0), sample(300, 0)};
    // Ends exactly at the throttled sample, starts exactly at it, or ends just before it.
    const std::vector<IterationRecord> its = {iteration(50, 50), iteration(100, 20), iteration(200, 50),
                                              iteration(210, 90)};
    EXPECT_EQ(flag_iterations(its, gpu, {}).states, (std::vector<S>{S::flagged, S::flagged, S::clear, S::clear}));
}

TEST(ThrottleFlags, OutsideTheSampledSpanIsNotKnown) {
    const std::vector<GpuSample> gpu = {sample(100, 0), sample(200, 0)};
    const std::vector<IterationRecord> its = {iteration(50, 20), iteration(90, 20), iteration(150, 20),
                                              iteration(190, 20), iteration(250, 10)};
    const auto flags = flag_iterations(its, gpu, {});
    EXPECT_EQ(flags.states, (std::vector<S>{S::unknown, S::unknown, S::clear, S::unknown, S::unknown}));
    EXPECT_EQ(flags.unknown, 4);
}

TEST(ThrottleFlags, AGapWiderThanTheLimitDoesNotCover) {
    const std::int64_t gap_ms = kMaxSampleGapNs / kMs;
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, 0), sample(100 + gap_ms + 1, 0),
                                        sample(200 + gap_ms, 0)};
    const std::vector<IterationRecord> its = {iteration(10, 10), iteration(1000, 10), iteration(150 + gap_ms, 10)};
    EXPECT_EQ(flag_iterations(its, gpu, {}).states, (std::vector<S>{S::clear, S::unknown, S::clear}));
    // A gap of exactly the limit still covers.
    const std::vector<GpuSample> at_limit = {sample(0, 0), sample(gap_ms, 0)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(1000, 10)}, at_limit, {}).states, std::vector<S>{S::clear});
}

TEST(ThrottleFlags, AThrottledSampleDuringAnUncoveredIterationStillFlagsIt) {
    // Nothing after the iteration's end, but a sample during it shows the power cap.
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, kPowerCap)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(50, 500)}, gpu, {}).states, std::vector<S>{S::flagged});
    // The throttled sample before an uncovered iteration does not reach it.
    const std::vector<GpuSample> before = {sample(0, kPowerCap), sample(100, 0)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(150, 10)}, before, {}).states, std::vector<S>{S::unknown});
}

TEST(ThrottleFlags, SamplesWithoutReadingsAreSkipped) {
    // The middle sample read nothing: its neighbours cover the iteration.
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, std::nullopt), sample(200, 0)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(90, 20)}, gpu, {}).states, std::vector<S>{S::clear});
    // No readings at all: nothing is known.
    const std::vector<GpuSample> blind = {sample(0, std::nullopt), sample(100, std::nullopt)};
    EXPECT_EQ(flag_iterations(std::vector{iteration(10, 10)}, blind, {}).states, std::vector<S>{S::unknown});
    EXPECT_EQ(flag_iterations(std::vector{iteration(10, 10)}, std::vector<GpuSample>{}, {}).unknown, 1);
}

TEST(ThrottleFlags, TheClockBelowTheFloorFlagsUnlessTheGpuWasIdle) {
    const ThrottleCriteria floor{0.75 * 1980};  // 1485 MHz
    EXPECT_EQ(sample_throttled(sample(0, std::nullopt, 1400), floor), true);
    EXPECT_EQ(sample_throttled(sample(0, std::nullopt, 1485), floor), false) << "at the floor is not below it";
    EXPECT_EQ(sample_throttled(sample(0, clock_event::kGpuIdle, 345), floor), false) << "idle clocks are not throttling";
    EXPECT_EQ(sample_throttled(sample(0, std::nullopt, 1400), {}), std::nullopt) << "no floor, no reasons: no reading";
    EXPECT_EQ(sample_throttled(sample(0, 0, 1400), {}), false) << "reasons read, clock not judged";
    // Reasons that do not throttle: idle and the clock settings.
    EXPECT_EQ(sample_throttled(sample(0, clock_event::kApplicationsClocksSetting | clock_event::kDisplayClockSetting), {}),
              false);
    for (const std::uint64_t bit : {clock_event::kSwPowerCap, clock_event::kHwSlowdown, clock_event::kSyncBoost,
                                    clock_event::kSwThermalSlowdown, clock_event::kHwThermalSlowdown,
                                    clock_event::kHwPowerBrakeSlowdown})
        EXPECT_EQ(sample_throttled(sample(0, bit), {}), true) << bit;

    const std::vector<GpuSample> gpu = {sample(0, 0, 1980), sample(100, 0, 1300), sample(200, 0, 1980),
                                        sample(300, 0, 1980)};
    const auto flags = flag_iterations(std::vector{iteration(50, 10), iteration(250, 10)}, gpu, floor);
    EXPECT_EQ(flags.states, (std::vector<S>{S::flagged, S::clear}));
    EXPECT_TRUE(flags.clock_below_floor);
    EXPECT_EQ(flags.reasons, 0u);
}

TEST(ThrottleFlags, IterationsOutOfOrderKeepTheirPlaces) {
    const std::vector<GpuSample> gpu = {sample(0, 0), sample(100, kPowerCap), sample(200, 0), sample(300, 0),
                                        sample(400, 0)};
    const std::vector<IterationRecord> its = {iteration(310, 10), iteration(110, 10), iteration(10, 10)};
    EXPECT_EQ(flag_iterations(its, gpu, {}).states, (std::vector<S>{S::clear, S::flagged, S::flagged}));
}

}  // namespace
}  // namespace inferbench::analysis
