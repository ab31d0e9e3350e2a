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
    EXPECT_THAT(found[0].statement, HasSubstr("without GPU times it cannot be told"));
    EXPECT_THAT(cpu_limits(run.at(1)), IsEmpty());
}

TEST(CpuLimits, AFullCoreBesideABusyGpuIsASpinningWaitAndStaysSilent) {
    auto busy_gpu = with_cpu("cuda:0", {3, 99, 2, 1}, 800, 800);
    for (auto& it : busy_gpu.iterations) it.compute_ns = 900'000;  // 90% of each 1 ms iteration
    auto idle_gpu = busy_gpu;
    for (auto& it : idle_gpu.iterations) it.compute_ns = 300'000;  // 30%: the thread is the limit
    const StoredRun run({busy_gpu, idle_gpu});
    EXPECT_THAT(cpu_limits(run.at(0)), IsEmpty());
    const auto found = cpu_limits(run.at(1));
    ASSERT_THAT(ids(found), ElementsAre("cpu.core_saturated"));
    EXPECT_THAT(found[0].statement, HasSubstr("the GPU copies and computes for only 30% of each iteration"));
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

StoredBenchmark with_stages(double pre_ns, double post_ns) {
    auto b = benchmark("cuda:0", "fp16", 1, "external");
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    b.metrics = {{"host_stage_iterations", 50, "count"},
                 {"host_stage_e2e_mean_ns", 1'000'000, "ns"},
                 {"host_stage_pre_mean_ns", pre_ns, "ns"},
                 {"host_stage_post_mean_ns", post_ns, "ns"}};
    return b;
}

TEST(PrePostProcessing, AFifthOfTheIterationOutsideTheModelFiresAndLessStaysSilent) {
    const StoredRun run({with_stages(300'000, 100'000), with_stages(100'000, 50'000), benchmark()});
    const auto found = pre_post_processing(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("host.pre_post_processing"));
    EXPECT_THAT(found[0].statement,
                HasSubstr("40% of the end-to-end time is spent outside the model (pre-processing 300.00 us and "
                          "post-processing 100.00 us of 1.00 ms per iteration, as the runner reported over 50 "
                          "iterations): a faster model gains at most 2.50x end to end"));
    EXPECT_EQ(found[0].severity, Severity::warning);
    EXPECT_THAT(pre_post_processing(run.at(1)), IsEmpty()) << "15% is under the threshold";
    EXPECT_THAT(pre_post_processing(run.at(2)), IsEmpty()) << "not reported: nothing said";
}

}  // namespace
}  // namespace inferbench::findings
