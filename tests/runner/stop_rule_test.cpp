// The stopping criteria on sequences whose outcome was worked out by hand, or by a literal transcription
// of nvbench's algorithm (two-pass standard deviation over every sample, the noise window searched as a
// whole; entropy as -sum p log2 p): the iteration where each finishes is pinned. Then the measured
// loop with each rule: where it ends, and what it says.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runner/worker/measure_loop.hpp"
#include "runner/worker/stop_rule.hpp"

namespace inferbench::runner {
namespace {

// The first iteration (from 1) after which the criterion says finished; 0 if never.
template <typename Criterion>
std::int64_t first_finish(Criterion& criterion, const std::vector<std::int64_t>& latencies) {
    for (const std::int64_t latency : latencies) {
        criterion.add(latency);
        if (criterion.finished()) return criterion.iterations();
    }
    return 0;
}

// 64-bit LCG (Knuth's MMIX constants): the same sequence in C++ and in the reference.
std::vector<std::int64_t> lcg_latencies(std::size_t n, std::uint64_t seed, std::uint64_t spread) {
    std::vector<std::int64_t> out;
    std::uint64_t x = seed;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        out.push_back(1000 + static_cast<std::int64_t>((x >> 40) % spread));
    }
    return out;
}

TEST(StdrelCriterion, NoNoiseBeforeFiveIterations) {
    StdrelCriterion criterion(0.5, 0);
    for (int i = 0; i < 4; ++i) {
        criterion.add(100);
        EXPECT_FALSE(criterion.finished());
        EXPECT_TRUE(std::isnan(criterion.noise()));
    }
    criterion.add(100);
    EXPECT_EQ(criterion.noise(), 0);
    EXPECT_TRUE(criterion.finished());
    EXPECT_FALSE(criterion.settled());
}

TEST(StdrelCriterion, NoiseIsTheRelativeStandardDeviationOfTheIterations) {
    // 90 110 90 110 100: mean 100, squared deviations 4 x 100, sample variance 400 / 4 = 100, stdev 10:
    // noise 10%.
    StdrelCriterion strict(0.05, 0), loose(0.2, 0);
    for (const std::int64_t v : {90, 110, 90, 110, 100}) {
        strict.add(v);
        loose.add(v);
    }
    EXPECT_NEAR(strict.noise(), 0.1, 1e-12);
    EXPECT_FALSE(strict.finished());
    EXPECT_TRUE(loose.finished());
}

TEST(StdrelCriterion, WaitsForMoreThanMinTime) {
    // Five iterations of 100 ns sum to 500 ns: not more than min_time 500 ns; the sixth is.
    StdrelCriterion criterion(0.5, 500);
    for (int i = 0; i < 5; ++i) criterion.add(100);
    EXPECT_FALSE(criterion.finished());
    criterion.add(100);
    EXPECT_TRUE(criterion.finished());
}

TEST(StdrelCriterion, SteadyNoiseAboveTheTargetSettles) {
    // Alternating 90 and 110: the noise tends to 10%, far above 0.5%. The settled test first runs at
    // iteration 80 (76 noise values, more than 64, and 80 a multiple of 16); the last 76 noise values
    // spread by less than 5% of the current one (10.06%) there.
    StdrelCriterion criterion(0.005, 0);
    std::vector<std::int64_t> alternating;
    for (int i = 0; i < 1000; ++i) alternating.push_back(i % 2 == 0 ? 90 : 110);
    EXPECT_EQ(first_finish(criterion, alternating), 80);
    EXPECT_TRUE(criterion.settled());
    EXPECT_NEAR(criterion.noise(), 0.1006309, 1e-6);
}

// Noise steady far above max_noise ends the loop, but it is not converged: the outcome says the noise
// plateaued, and counts only the noise values that exist (76 at iteration 80, not the window's 512).
TEST(StdrelCriterion, APlateauAboveMaxNoiseIsNotConverged) {
    LoopSettings loop;
    loop.stop = StopCriterion::stdrel;
    loop.max_noise_pct = 0.5;
    loop.min_time_ns = 0;
    StdrelCriterion criterion = make_stdrel(loop);
    std::vector<std::int64_t> alternating;
    for (int i = 0; i < 1000; ++i) alternating.push_back(i % 2 == 0 ? 90 : 110);
    ASSERT_EQ(first_finish(criterion, alternating), 80);
    ASSERT_TRUE(criterion.settled());
    EXPECT_EQ(criterion.noise_values(), 76u);
    const StopOutcome outcome = criterion_outcome(criterion, loop, CriterionEnding::converged, false);
    EXPECT_EQ(outcome.convergence, Convergence::not_converged) << outcome.reason;
    EXPECT_EQ(outcome.reason,
              "stdrel: not converged: noise plateaued at 10.1% (max_noise 0.5%) over its last 76 values, "
              "after 80 iterations");
}

TEST(StdrelCriterion, FallingNoiseSettlesWhenItsWindowFlattens) {
    // One 2000 then 1000s: the noise falls as 1 / sqrt(n), too fast to settle until its last 512 values
    // lie within 5%; by nvbench's algorithm that happens at iteration 3248, at noise 1.754%.
    StdrelCriterion criterion(0.005, 0);
    std::vector<std::int64_t> latencies = {2000};
    latencies.resize(10000, 1000);
    EXPECT_EQ(first_finish(criterion, latencies), 3248);
    EXPECT_TRUE(criterion.settled());
    EXPECT_NEAR(criterion.noise(), 0.01754116, 1e-7);
}

TEST(StdrelCriterion, BelowTheTargetFromTheStart) {
    // 1000, 1001, ... 1004: stdev 1.5811, mean 1002: noise 0.158% < 0.5% at the fifth iteration.
    StdrelCriterion criterion(0.005, 0);
    EXPECT_EQ(first_finish(criterion, {1000, 1001, 1002, 1003, 1004, 1005}), 5);
    EXPECT_FALSE(criterion.settled());
    EXPECT_NEAR(criterion.noise(), 1.5811388 / 1002, 1e-9);
}

TEST(StdrelCriterion, SeededNoiseAsTheReferenceComputesIt) {
    // Uniform 1000..4999 ns: noise about 39%, settled at iteration 400 (noise 38.765%).
    StdrelCriterion criterion(0.005, 0);
    EXPECT_EQ(first_finish(criterion, lcg_latencies(5000, 7, 4000)), 400);
    EXPECT_NEAR(criterion.noise(), 0.3876495, 1e-6);
}

TEST(EntropyCriterion, EntropyOfTheLatenciesSeenSoFar) {
    // 1000 and 2000 ns fall in different 0.5 us bins. After 1000, 2000, 1000: counts 2 and 1,
    // H = -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.918296 bits.
    EntropyCriterion criterion(0.048, 0.36);
    criterion.add(1000);
    EXPECT_EQ(criterion.entropy(), 0);
    criterion.add(2000);
    EXPECT_NEAR(criterion.entropy(), 1, 1e-12);
    // Two entropies, 0 and 1: a line at 45 degrees.
    EXPECT_FALSE(criterion.finished());
    EXPECT_NEAR(criterion.angle_deg(), 45, 1e-9);
    criterion.add(1000);
    EXPECT_NEAR(criterion.entropy(), 0.9182958, 1e-7);
    EXPECT_FALSE(criterion.finished());  // odd iteration counts are not tested
    criterion.add(2000);
    // Entropies 0, 1, 0.918296, 1 over x = 0..3: slope 1.459148 / 5 = 0.291830, atan -> 16.27 degrees.
    EXPECT_FALSE(criterion.finished());
    EXPECT_NEAR(criterion.angle_deg(), std::atan(0.2918296) * 180 / 3.14159265358979, 1e-5);
}

TEST(EntropyCriterion, OneValueIsFinishedAtOnce) {
    // Every latency in one bin (1000 and 1200 ns round to the same 0.5 us): the entropy stays 0, the fit
    // is flat and explains everything (R² = 1 where nothing varies).
    EntropyCriterion criterion(0.048, 0.36);
    criterion.add(1000);
    EXPECT_FALSE(criterion.finished());  // one entropy is no line
    criterion.add(1200);
    EXPECT_TRUE(criterion.finished());
    EXPECT_EQ(criterion.r2(), 1);
}

// A loop that ends before the first fit (stop_timeout or max_iterations first) says so, rather than a fit
// of 0 degrees and R² 0 that was never computed.
TEST(EntropyCriterion, AnOutcomeBeforeTheFirstFitSaysThereWasNone) {
    EntropyCriterion criterion(0.048, 0.36);
    criterion.add(1000);
    EXPECT_FALSE(criterion.finished());
    EXPECT_FALSE(criterion.fitted());
    LoopSettings loop;
    loop.stop = StopCriterion::entropy;
    const StopOutcome outcome = criterion_outcome(criterion, loop, CriterionEnding::timed_out, false);
    EXPECT_EQ(outcome.convergence, Convergence::not_converged);
    EXPECT_NE(outcome.reason.find("not yet fitted"), std::string::npos) << outcome.reason;
    EXPECT_EQ(outcome.reason.find("R²"), std::string::npos) << outcome.reason;
}

TEST(EntropyCriterion, ACycleOfFourValuesFlattensAtTwoBits) {
    // 1000, 1500, 2000, 2500 in turn: the entropy climbs to 2 bits; the reference fit of the last 299
    // entropies first passes at iteration 346 (angle 7.2e-5 degrees, R² 0.3627, entropy 1.99998).
    EntropyCriterion criterion(0.048, 0.36);
    std::vector<std::int64_t> cycle;
    for (int i = 0; i < 5000; ++i) cycle.push_back(1000 + 500 * (i % 4));
    EXPECT_EQ(first_finish(criterion, cycle), 346);
    EXPECT_NEAR(criterion.r2(), 0.3627, 1e-4);
    EXPECT_NEAR(criterion.entropy(), 1.9999759, 1e-6);
}

TEST(EntropyCriterion, SeededNoiseAsTheReferenceComputesIt) {
    // Uniform 1000..4999 ns (9 bins): finished at iteration 306 (angle 0.0444 degrees, R² 0.5228).
    EntropyCriterion criterion(0.048, 0.36);
    EXPECT_EQ(first_finish(criterion, lcg_latencies(5000, 7, 4000)), 306);
    EXPECT_NEAR(criterion.angle_deg(), 0.0444061, 1e-6);
    EXPECT_NEAR(criterion.r2(), 0.5228464, 1e-6);
}

// A backend that does nothing: the loop's rules are what is under test.
class IdleBackend final : public Backend {
public:
    std::string name() const override { return "idle"; }
    std::string version() const override { return "1"; }
    Capabilities capabilities() const override { return {}; }
    void load(const std::string&, const BenchmarkSpec&) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor>) override {}
    void infer(DeviceTimes&) override {}
};

struct Loop {
    explicit Loop(std::size_t n) : records(n) {}
    MeasureResult run(const LoopSettings& loop) {
        IdleBackend backend;
        return run_measured(backend, loop, {records.data(), &published}, stop);
    }
    std::vector<IterationRecord> records;
    std::atomic<std::int64_t> published{0};
    std::atomic<std::int32_t> stop{0};
};

TEST(StopRule, FixedSaysFixed) {
    Loop buffer(100);
    LoopSettings loop;
    loop.duration_ns = 0;
    loop.min_iterations = 20;
    loop.max_iterations = 100;
    const auto result = buffer.run(loop);
    EXPECT_EQ(result.iterations, 20);
    EXPECT_EQ(result.stop.convergence, Convergence::fixed);
    EXPECT_EQ(result.stop.reason, "");
}

TEST(StopRule, StdrelIsConsultedFromMinIterationsOn) {
    // Any noise is below 1e6%: finished as soon as it may be asked, at min_iterations.
    Loop buffer(1000);
    LoopSettings loop;
    loop.stop = StopCriterion::stdrel;
    loop.max_noise_pct = 1e6;
    loop.min_time_ns = 0;
    loop.min_iterations = 37;
    loop.max_iterations = 1000;
    const auto result = buffer.run(loop);
    EXPECT_EQ(result.iterations, 37);
    EXPECT_EQ(result.stop.convergence, Convergence::converged);
    EXPECT_TRUE(result.stop.reason.starts_with("stdrel: noise ")) << result.stop.reason;
    EXPECT_TRUE(result.stop.reason.ends_with("below max_noise 1000000% after 37 iterations")) << result.stop.reason;
}

TEST(StopRule, GivesUpAtStopTimeout) {
    Loop buffer(2'000'000);
    LoopSettings loop;
    loop.stop = StopCriterion::stdrel;
    loop.max_noise_pct = 1e-12;
    loop.min_iterations = 100'000'000;  // the criterion is never asked
    loop.max_iterations = 2'000'000;
    loop.stop_timeout_ns = 2'000'000;
    const auto result = buffer.run(loop);
    EXPECT_LT(result.iterations, 2'000'000);
    EXPECT_GE(result.wall_ns, 0);
    EXPECT_EQ(result.stop.convergence, Convergence::not_converged);
    EXPECT_TRUE(result.stop.reason.starts_with("stdrel: not converged within stop_timeout 2ms (noise "))
        << result.stop.reason;
}

TEST(StopRule, GivesUpAtMaxIterations) {
    Loop buffer(100);
    LoopSettings loop;
    loop.stop = StopCriterion::entropy;
    loop.min_iterations = 1000;  // above max_iterations: the criterion is never asked
    loop.max_iterations = 100;
    const auto result = buffer.run(loop);
    EXPECT_EQ(result.iterations, 100);
    EXPECT_EQ(result.stop.convergence, Convergence::not_converged);
    EXPECT_TRUE(result.stop.reason.starts_with("entropy: not converged within max_iterations 100 (entropy "))
        << result.stop.reason;
    EXPECT_TRUE(result.stop.reason.ends_with("after 100 iterations")) << result.stop.reason;
}

TEST(StopRule, AStopRequestIsNotConvergence) {
    Loop buffer(100);
    buffer.stop = 1;
    LoopSettings loop;
    loop.stop = StopCriterion::stdrel;
    const auto result = buffer.run(loop);
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.iterations, 0);
    EXPECT_EQ(result.stop.convergence, Convergence::not_converged);
    EXPECT_EQ(result.stop.reason, "stdrel: stopped before converging (noise not yet known, max_noise 0.5%) after 0 "
                                  "iterations");
}

}  // namespace
}  // namespace inferbench::runner
