// Throttling, launch- and transfer-bound: on the real H200 nvidia-smi logs and trtexec logs in
// shared/fixtures (imported as the importers store them), and on small stored runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "findings/rules.hpp"
#include "findings_fixture.hpp"
#include "importers/nvidia_smi_import.hpp"
#include "importers/trtexec_import.hpp"

namespace inferbench::findings {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using namespace testing;

const std::string kFixtures = INFERBENCH_FIXTURES_DIR;

// The logs imported into a fresh database as `inferbench import` stores them, read back.
class ImportedRun {
public:
    explicit ImportedRun(std::vector<importers::ImportedBenchmark> benchmarks, const std::string& tool) {
        auto results = store::ResultsStore::open(dir_.file("results.db"));
        importers::store_import(results, importers::import_run(tool, "fixture", {}), benchmarks);
        evidence_ = load_evidence(results, results.benchmarks(), devices::load_catalog());
    }
    const BenchmarkEvidence& at(std::size_t i) const { return evidence_.at(i); }

private:
    inferbench::testing::ScratchDir dir_;
    std::vector<BenchmarkEvidence> evidence_;
};

ImportedRun smi(const std::string& file) {
    std::vector<importers::ImportedBenchmark> b;
    for (auto& log : importers::read_nvidia_smi_logs({kFixtures + "/nvidia-smi/" + file}, {}, {}))
        b.push_back(std::move(log.benchmark));
    return ImportedRun(std::move(b), "nvidia-smi");
}

ImportedRun trtexec(const std::string& file) {
    return ImportedRun(importers::read_trtexec_logs({kFixtures + "/trtexec/" + file}, {}), "trtexec");
}

TEST(Throttling, ThePowerCappedH200LogFiresAndSaysLatencyWasNotMeasured) {
    const auto run = smi("h200-load-query-200ms.csv");
    const auto found = throttling(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("throttling.power_cap"));
    EXPECT_THAT(found[0].statement, HasSubstr("SW power cap for 100%"));
    EXPECT_THAT(found[0].statement, HasSubstr("latency inside vs outside: not measured"));
    EXPECT_EQ(found[0].severity, Severity::warning);  // no latency change shown
    ASSERT_TRUE(found[0].evidence.window);
}

TEST(Throttling, TheIdleH200LogStaysSilent) {
    EXPECT_THAT(throttling(smi("h200-idle-query.csv").at(0)), IsEmpty());
}

TEST(Throttling, LatencyInsideTheCappedWindowIsComparedWithOutside) {
    // 100 iterations of 1 ms, the last 40 at 1.3 ms; the power cap holds from the 60th iteration on.
    auto b = benchmark();
    b.iterations = iterations(100, [](int i) { return i < 60 ? 1'000'000 : 1'300'000; });
    const auto capped_from = b.iterations[60].start_ns;
    for (std::int64_t t = kT0; t <= b.iterations.back().start_ns + 2'000'000; t += 5'000'000)
        b.gpu.push_back(gpu_sample(t, t >= capped_from ? 1500 : 1980, t >= capped_from ? clock_event::kSwPowerCap : 0));
    const StoredRun run({b});
    const auto found = throttling(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("throttling.power_cap"));
    EXPECT_EQ(found[0].severity, Severity::problem);
    EXPECT_THAT(found[0].statement, HasSubstr("inside vs 1.00 ms outside (+"));
    EXPECT_THAT(found[0].statement, HasSubstr("SM clock 1500-1500 MHz there (highest seen 1980 MHz)"));
}

TEST(Throttling, AClockDropWithoutReasonFiresAndSteadyClocksStaySilent) {
    auto b = benchmark();
    b.iterations = iterations(100, [](int) { return 1'000'000; });
    for (int i = 0; i < 20; ++i) b.gpu.push_back(gpu_sample(kT0 + i * 5'000'000, i >= 10 ? 1200 : 1980, 0));
    auto steady = b;
    for (auto& s : steady.gpu) s.sm_clock_mhz = 1980;
    const StoredRun run({b, steady});
    EXPECT_THAT(ids(throttling(run.at(0))), ElementsAre("throttling.clock_drop"));
    EXPECT_THAT(throttling(run.at(1)), IsEmpty());
}

// The real gpu_log: three dumps of an idle H200 (GPU-idle reason, SM clock far down), then a power-capped
// GEMM. The idle dumps are no throttling: the finding names the power cap alone, and a clock that is low
// only while the GPU idles (reason set, or utilization 0) stays silent.
TEST(Throttling, AnIdleGpusLowClockIsNotAClockDrop) {
    const auto run = smi("h200-load-q-5x1s.txt");
    EXPECT_THAT(ids(throttling(run.at(0))), ElementsAre("throttling.power_cap"));
    auto b = benchmark();
    b.iterations = iterations(100, [](int) { return 1'000'000; });
    for (int i = 0; i < 20; ++i) {
        b.gpu.push_back(gpu_sample(kT0 + i * 5'000'000, i >= 10 ? 345 : 1980, i >= 10 ? clock_event::kGpuIdle : 0));
        b.gpu.back().gpu_util_pct = i >= 10 ? 0 : 100;
    }
    auto by_utilization = b;
    for (auto& s : by_utilization.gpu) s.clock_event_reasons = 0;
    const StoredRun stored({b, by_utilization});
    EXPECT_THAT(throttling(stored.at(0)), IsEmpty());
    EXPECT_THAT(throttling(stored.at(1)), IsEmpty());
}

TEST(Throttling, AGpuBenchmarkWithoutTelemetrySaysNotMeasuredAndACpuOneSaysNothing) {
    auto gpu = benchmark();
    gpu.iterations = iterations(20, [](int) { return 1'000'000; });
    auto cpu = benchmark("cpu");
    cpu.iterations = gpu.iterations;
    const StoredRun run({gpu, cpu});
    EXPECT_THAT(ids(throttling(run.at(0))), ElementsAre("throttling.not_measured"));
    EXPECT_THAT(throttling(run.at(1)), IsEmpty());
}

TEST(LaunchBound, TheEnqueueBoundTrtexecLogFires) {
    // trt8-tf32-trace-3050.log: enqueue mean 34.4884 ms, GPU compute mean 33.664 ms.
    const auto found = launch_bound(trtexec("trt8-tf32-trace-3050.log").at(0));
    ASSERT_THAT(ids(found), ElementsAre("launch.enqueue_bound"));
    EXPECT_THAT(found[0].statement, HasSubstr("enqueue takes 34.49 ms per inference, 102% of the 33.66 ms"));
}

TEST(LaunchBound, TheTrt10LogStaysSilent) {
    // enqueue 0.263621 ms against 1.44357 ms of compute; end-to-end close to the GPU's own time.
    EXPECT_THAT(launch_bound(trtexec("trt10-resnet50-summary.log").at(0)), IsEmpty());
}

TEST(LaunchBound, EndToEndFarAboveTheGpuTimeFiresAndCloseToItStaysSilent) {
    auto host_bound = benchmark();
    host_bound.iterations = iterations(50, [](int) { return 3'000'000; });
    for (auto& it : host_bound.iterations) it.compute_ns = 1'000'000;
    auto tight = host_bound;
    for (auto& it : tight.iterations) it.compute_ns = 2'800'000;
    const StoredRun run({host_bound, tight});
    const auto found = launch_bound(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("launch.host_bound"));
    EXPECT_THAT(found[0].statement, HasSubstr("3.0x the 1.00 ms"));
    EXPECT_THAT(found[0].statement, HasSubstr("GPU utilisation not measured"));
    EXPECT_THAT(launch_bound(run.at(1)), IsEmpty());
}

// Iterations whose enqueue time sweeps 0.2-0.4 ms and whose GPU compute is `compute(enqueue, i)`, as torch.compile's
// reduce-overhead measured on the H200: its Python work before the CUDA graph's launch counted as GPU time.
template <typename F>
StoredBenchmark enqueue_sweep(F compute) {
    auto b = benchmark("cuda:0", "bf16", 1, "torch-compile");
    b.iterations = iterations(200, [](int) { return 1'200'000; });
    for (int i = 0; i < 200; ++i) {
        auto& it = b.iterations[static_cast<std::size_t>(i)];
        it.enqueue_ns = 200'000 + 2'000 * ((i * 37) % 101);
        it.compute_ns = static_cast<std::int64_t>(compute(static_cast<double>(it.enqueue_ns), i));
        it.e2e_ns = it.compute_ns + 150'000;
    }
    return b;
}

TEST(LaunchBound, ComputeThatFollowsTheHostsEnqueueFires) {
    const StoredRun run(
        {enqueue_sweep([](double enqueue, int i) { return 600'000 + 0.7 * enqueue + 2'000 * jitter(i); })});
    const auto found = launch_bound(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("launch.host_in_compute"));
    // Shortest quarter: enqueue 0.2-0.25 ms, compute ~0.76 ms; longest: 0.35-0.4 ms, ~0.86 ms.
    EXPECT_THAT(found[0].statement, HasSubstr("(r = 1.00 over 200 iterations)"));
    EXPECT_THAT(found[0].statement, MatchesRegex(".*median 7[5-7][0-9].[0-9]+ us in the quarter with the shortest "
                                                 "enqueue, 8[5-7][0-9].[0-9]+ us .*\\(\\+1[34]%\\).*"));
    EXPECT_THAT(found[0].evidence.series, ElementsAre("iterations.compute", "iterations.enqueue"));
}

TEST(LaunchBound, ComputeApartFromTheHostOrBarelyMovingWithItStaysSilent) {
    const StoredRun run({enqueue_sweep([](double, int i) { return 800'000 + 40'000 * jitter(i); }),
                         enqueue_sweep([](double enqueue, int) { return 800'000 + 0.05 * enqueue; })});
    EXPECT_THAT(launch_bound(run.at(0)), IsEmpty());  // r near 0
    EXPECT_THAT(launch_bound(run.at(1)), IsEmpty());  // r = 1, but compute moves 1% from quarter to quarter
}

TEST(LaunchBound, AnEnqueueBoundBenchmarkGetsThatFindingAlone) {
    const StoredRun run({enqueue_sweep([](double enqueue, int) { return 1.1 * enqueue; })});
    EXPECT_THAT(ids(launch_bound(run.at(0))), ElementsAre("launch.enqueue_bound"));
}

TEST(TransferBound, CopiesLongerThanComputeFireAndShortOnesStaySilent) {
    auto b = benchmark();
    b.iterations = iterations(50, [](int) { return 3'500'000; });
    for (auto& it : b.iterations) {
        it.h2d_ns = 2'000'000;
        it.compute_ns = 1'000'000;
        it.d2h_ns = 100'000;
    }
    const StoredRun run({b});
    const auto found = transfer_bound(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("transfer.h2d_bound"));
    EXPECT_THAT(found[0].statement, HasSubstr("H2D copies take 2.00 ms per inference, 2.0x the 1.00 ms"));
    // trt10-resnet50-summary.log: H2D 0.0362824 ms against 1.44357 ms of compute.
    EXPECT_THAT(transfer_bound(trtexec("trt10-resnet50-summary.log").at(0)), IsEmpty());
}

}  // namespace
}  // namespace inferbench::findings
