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
using ::testing::Not;
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

// The host's utilisation beside the worker's: `host_pct` of all cores busy in every sample.
StoredBenchmark on_host(std::vector<double> per_core, double host_pct, std::string backend_options = "{}") {
    auto b = with_cpu("cpu", std::move(per_core), 500, 500);
    for (auto& s : b.cpu) s.host_cpu_pct = host_pct;
    b.record.settings_json = R"({"backend_options":)" + backend_options + "}";
    return b;
}

// The issue's run: both CPUs of a 2-core host 100% busy, the worker at one core. Other processes held
// half the host: that is the finding, and "one thread" is not (the cell was set to 2 threads).
TEST(HostBusy, OtherProcessesShareOfTheCpusFiresAndSuppressesTheOneThreadReading) {
    const StoredRun run({on_host({99, 1}, 100, R"({"intra_op_threads":"2"})"), on_host({99, 1}, 52)});
    const auto busy = host_busy(run.at(0));
    ASSERT_THAT(ids(busy), ElementsAre("host.busy"));
    EXPECT_EQ(busy[0].statement,
              "other processes kept 50% of the host's 2 cores busy during the measured phase (the host 100% busy in "
              "all, the worker 100% of a core, set to 2 threads): the benchmark shared the CPUs, so its latency, "
              "its spread and its threads' use of the cores are partly the other load's");
    EXPECT_THAT(cpu_limits(run.at(0)), IsEmpty()) << "one core's worth is what the others left it";
    EXPECT_THAT(host_busy(run.at(1)), IsEmpty()) << "2% of the host for others: a quiet host";
    EXPECT_THAT(ids(cpu_limits(run.at(1))), ElementsAre("cpu.single_core"));
}

// parallel: per_device: the run's workers on other devices are among the other processes, and the finding says so.
TEST(HostBusy, SaysWhereTheRunsOtherDevicesWorkersRanBeside) {
    auto b = on_host({99, 1}, 100);
    b.record.concurrent = {{1, 0, "cuda:1"}, {3, 0, "cuda:1"}};
    const StoredRun run({b});
    const auto busy = host_busy(run.at(0));
    ASSERT_THAT(ids(busy), ElementsAre("host.busy"));
    EXPECT_THAT(busy[0].statement,
                HasSubstr("the worker 100% of a core, this run's workers on other devices among them (2 benchmarks at "
                          "the same time)): the benchmark shared the CPUs"));
}

// A serving cell's server is among the other processes where it runs on the same host: said so, as information.
TEST(HostBusy, AServingCellSharesTheHostWithItsServer) {
    auto b = on_host({99, 1}, 100);
    b.record.backend = "openai";
    const StoredRun run({std::move(b)});
    const auto busy = host_busy(run.at(0));
    ASSERT_THAT(ids(busy), ElementsAre("host.busy"));
    EXPECT_EQ(busy[0].severity, Severity::info);
    EXPECT_NE(busy[0].statement.find("a server on this host that the cell did not start among them"), std::string::npos)
        << busy[0].statement;
}

// On a quiet host, one core busy is read against the cell's own thread setting.
TEST(CpuLimits, OneCoreBusyIsReadAgainstTheCellsThreadSetting) {
    const StoredRun run({on_host({99, 1}, 50, R"({"intra_op_threads":"2"})"), on_host({99, 1}, 50, R"({"threads":1})"),
                         on_host({99, 1}, 50)});
    const auto two = only(cpu_limits(run.at(0)), "cpu.single_core");
    EXPECT_THAT(two.statement, HasSubstr("with intra_op_threads=2, its threads found little parallel work"));
    EXPECT_THAT(two.statement, Not(HasSubstr("one thread")));
    EXPECT_THAT(two.try_next, Not(HasSubstr("raise the backend's intra-op thread count")));
    const auto one = only(cpu_limits(run.at(1)), "cpu.single_core");
    EXPECT_THAT(one.statement, HasSubstr("it was set to one thread (threads=1)"));
    EXPECT_THAT(one.try_next, HasSubstr("raise threads"));
    EXPECT_THAT(only(cpu_limits(run.at(2)), "cpu.single_core").statement,
                HasSubstr("the backend stores no thread setting"));
}

TEST(CpuLimits, ResidentMemoryGrowingFiresAndSteadyMemoryStaysSilent) {
    const StoredRun run({with_cpu("cpu", {90, 90}, 500, 620), with_cpu("cpu", {90, 90}, 500, 510)});
    const auto found = cpu_limits(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("cpu.rss_growth"));
    EXPECT_THAT(found[0].statement, HasSubstr("from 500 MiB to 620 MiB (+120 MiB, +24%)"));
    EXPECT_THAT(cpu_limits(run.at(1)), IsEmpty());
}

// A serving cell's tree holds the server it started, whose KV cache fills as it serves: said, but not as a leak.
TEST(CpuLimits, AServingCellsGrowingMemoryIsItsServersNotALeak) {
    auto b = with_cpu("cpu", {90, 90}, 500, 620);
    b.record.backend = "openai";
    const StoredRun run({std::move(b)});
    const auto found = cpu_limits(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("cpu.rss_growth"));
    EXPECT_EQ(found[0].severity, Severity::info);
    EXPECT_THAT(found[0].statement, HasSubstr("of the client and of the server it started"));
    EXPECT_THAT(found[0].try_next, Not(HasSubstr("leak")));
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
