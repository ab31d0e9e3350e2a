// Instability and drift on small stored runs: each shape of latencies fires its finding, and a steady
// run fires none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "findings/rules.hpp"
#include "findings_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace testing;

std::vector<Finding> instability_of(std::function<double(int)> e2e, int count = 200) {
    auto b = benchmark();
    b.iterations = iterations(count, e2e);
    const StoredRun run({b});
    return instability(run.at(0));
}

TEST(Instability, ASteadyRunStaysSilent) {
    EXPECT_THAT(instability_of([](int i) { return 1'000'000 + 10'000 * jitter(i); }), IsEmpty());
}

TEST(Instability, AWideSpreadFiresHighCv) {
    const auto found = instability_of([](int i) { return 1'000'000 + 400'000 * jitter(i); });
    EXPECT_THAT(ids(found), Contains("instability.high_cv"));
    EXPECT_THAT(only(found, "instability.high_cv").statement, HasSubstr("CV of"));
}

TEST(Instability, TwoLatencyLevelsFireBimodal) {
    const auto found =
        instability_of([](int i) { return (i % 3 == 0 ? 1'800'000 : 1'000'000) + 10'000 * jitter(i); }, 300);
    ASSERT_THAT(ids(found), Contains("instability.bimodal"));
    EXPECT_THAT(only(found, "instability.bimodal").statement, HasSubstr("67% of iterations near 1.00 ms, 33% near 1.80 ms"));
    EXPECT_THAT(ids(found), Not(Contains("instability.drift_slower")));
}

TEST(Instability, LatencyGrowingOverTheRunFiresDriftAndFallingFiresTheWarmUpOne) {
    const auto slower = instability_of([](int i) { return 1'000'000 + 2'000 * i; });
    ASSERT_THAT(ids(slower), Contains("instability.drift_slower"));
    EXPECT_THAT(only(slower, "instability.drift_slower").statement, HasSubstr("latency grew over the run"));
    const auto faster = instability_of([](int i) { return i < 20 ? 2'000'000 - 40'000 * i : 1'000'000; });
    EXPECT_THAT(ids(faster), Contains("instability.drift_faster"));
}

// "Warm-up too short" only where the fall is over within the first tenth; a fall through the whole run,
// or one on a host that other processes kept busy (host.busy), is not put down to warm-up.
TEST(Instability, AFallThatIsNoWarmUpIsNotCalledOne) {
    const auto gradual = instability_of([](int i) { return 2'000'000 - 5'000 * i; });
    ASSERT_THAT(ids(gradual), Contains("instability.drift_faster"));
    EXPECT_THAT(only(gradual, "instability.drift_faster").try_next, Not(HasSubstr("warm-up was too short")));
    EXPECT_THAT(only(gradual, "instability.drift_faster").try_next, HasSubstr("not only at its start"));

    auto b = benchmark("cpu");
    b.iterations = iterations(200, [](int i) { return i < 20 ? 2'000'000 - 40'000 * i : 1'000'000; });
    for (int i = 0; i < 10; ++i) {
        b.cpu.push_back(cpu_sample(kT0 + i * 20'000'000, {99, 1}, 500));
        b.cpu.back().host_cpu_pct = 100;
    }
    const StoredRun run({b});
    const auto busy = instability(run.at(0));
    ASSERT_THAT(ids(busy), Contains("instability.drift_faster"));
    EXPECT_THAT(only(busy, "instability.drift_faster").try_next, HasSubstr("the host was busy with other processes"));
    EXPECT_THAT(only(busy, "instability.drift_faster").try_next, Not(HasSubstr("warm-up")));
}

TEST(Instability, ASlowIterationFiresOutliersAndSaysTelemetryWasNotMeasured) {
    const auto found = instability_of([](int i) { return i == 150 ? 5'000'000 : 1'000'000 + 10'000 * jitter(i); });
    const auto& outliers = only(found, "instability.outliers");
    EXPECT_THAT(outliers.statement, HasSubstr("1 of 200 iterations took >= 2x the median"));
    EXPECT_THAT(outliers.statement, HasSubstr("no GPU telemetry to lay them over (not measured)"));
    EXPECT_THAT(ids(found), Not(Contains("instability.bimodal")));
}

TEST(Instability, OutliersAreLaidOverThrottleEvents) {
    auto b = benchmark();
    b.iterations = iterations(200, [](int i) { return i == 150 ? 5'000'000 : 1'000'000; });
    b.gpu.push_back(gpu_sample(b.iterations[150].start_ns - 1'000'000, 1500, clock_event::kSwPowerCap));
    b.gpu.push_back(gpu_sample(b.iterations[199].start_ns, 1980, 0));
    const StoredRun run({b});
    EXPECT_THAT(only(instability(run.at(0)), "instability.outliers").statement,
                HasSubstr("1 of them within 0.5 s of a GPU throttle event"));
}

TEST(Instability, FewIterationsGiveNoShapeFindings) {
    EXPECT_THAT(instability_of([](int i) { return i % 2 ? 1'000'000 : 1'800'000; }, 20),
                ElementsAre(::testing::Field(&Finding::id, "instability.high_cv")));
}

}  // namespace
}  // namespace inferbench::findings

namespace inferbench::findings {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;

TEST(NotConverged, ACriterionThatGaveUpFiresWithItsReasonAndInterval) {
    auto b = benchmark();
    b.iterations = iterations(200, [](int i) { return 1'000'000 + 10'000 * jitter(i); });
    b.record.convergence = Convergence::not_converged;
    b.record.stop_reason = "stdrel: not converged within stop_timeout 15s (noise 0.91%, max_noise 0.5%) after 200 iterations";
    const StoredRun run({b});
    const auto found = not_converged(run.at(0));
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].id, "timing.not_converged");
    EXPECT_EQ(found[0].severity, Severity::warning);
    EXPECT_THAT(found[0].statement, HasSubstr("did not converge (stdrel: not converged within stop_timeout 15s"));
    EXPECT_THAT(found[0].statement, HasSubstr("the 95% interval of its mean is +-"));
}

TEST(NotConverged, FixedAndConvergedBenchmarksStaySilent) {
    auto fixed = benchmark();
    fixed.iterations = iterations(200, [](int i) { return 1'000'000 + 10'000 * jitter(i); });
    auto converged = fixed;
    converged.record.convergence = Convergence::converged;
    const StoredRun run({fixed, converged});
    EXPECT_THAT(not_converged(run.at(0)), IsEmpty());
    EXPECT_THAT(not_converged(run.at(1)), IsEmpty());
}

}  // namespace
}  // namespace inferbench::findings
