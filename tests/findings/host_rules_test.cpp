// CPU-side limits on small stored runs: a saturated feeding core, one busy core on a CPU benchmark,
// resident memory growing over the measured phase.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "findings/rules.hpp"
#include "findings_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;

StoredBenchmark with_cpu(std::string device, std::vector<double> per_core, double rss_first, double rss_last) {
    auto b = benchmark(std::move(device));
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    for (int i = 0; i < 10; ++i)
        b.cpu.push_back(cpu_sample(kT0 + i * 5'000'000, per_core, rss_first + (rss_last - rss_first) * i / 9.0));
    return b;
}

TEST(CpuLimits, AGpuBenchmarksFullFeedingCoreFiresAndAHalfBusyOneStaysSilent) {
    const StoredRun run({with_cpu("cuda:0", {3, 99, 2, 1}, 800, 800), with_cpu("cuda:0", {3, 50, 2, 1}, 800, 800)});
    const auto found = cpu_limits(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("cpu.core_saturated"));
    EXPECT_THAT(found[0].statement, HasSubstr("kept core 1 99% busy"));
    EXPECT_THAT(cpu_limits(run.at(1)), IsEmpty());
}

TEST(CpuLimits, ACpuBenchmarkOnOneCoreOfSeveralFiresAndOneOnAllCoresStaysSilent) {
    const StoredRun run({with_cpu("cpu", {99, 1}, 500, 500), with_cpu("cpu", {99, 98}, 500, 500)});
    const auto found = cpu_limits(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("cpu.single_core"));
    EXPECT_THAT(found[0].statement, HasSubstr("(mean 100% of a core) on a host of 2 cores"));
    EXPECT_THAT(cpu_limits(run.at(1)), IsEmpty());
}

TEST(CpuLimits, ResidentMemoryGrowingFiresAndSteadyMemoryStaysSilent) {
    const StoredRun run({with_cpu("cpu", {90, 90}, 500, 620), with_cpu("cpu", {90, 90}, 500, 510)});
    const auto found = cpu_limits(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("cpu.rss_growth"));
    EXPECT_THAT(found[0].statement, HasSubstr("from 500 MiB to 620 MiB (+120 MiB, +24%)"));
    EXPECT_THAT(cpu_limits(run.at(1)), IsEmpty());
}

TEST(CpuLimits, WithoutCpuSamplesNothingIsSaid) {
    auto b = benchmark();
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    const StoredRun run({b});
    EXPECT_THAT(cpu_limits(run.at(0)), IsEmpty());
}

}  // namespace
}  // namespace inferbench::findings
