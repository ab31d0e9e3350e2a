// Throttling, cooldown, L2 flush and sync end to end: the real CLI with the fake libnvidia-ml of
// tests/telemetry and the fake libcuda of tests/runner (the null backend runs on "cuda:0" without CUDA).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "core/metrics/harness_metrics.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ScratchDir = testing::CliScratch;

std::optional<double> metric(const std::vector<store::Metric>& metrics, std::string_view name) {
    for (const auto& m : metrics)
        if (m.name == name) return m.value;
    return std::nullopt;
}

long count_lines(const std::filesystem::path& path, const std::string& text) {
    std::ifstream in(path);
    long n = 0;
    for (std::string line; std::getline(in, line);) n += line == text ? 1 : 0;
    return n;
}

std::string fakes(const ScratchDir& dir, const std::string& nvml_script = "") {
    std::string env = "INFERBENCH_NVML_LIBRARY='" + std::string(FAKE_NVML) + "' INFERBENCH_CUDA_DRIVER_LIBRARY='" +
                      std::string(FAKE_CUDA_DRIVER) + "' FAKE_CUDA_LOG='" + dir.file("cuda.log") + "'";
    if (!nvml_script.empty()) {
        std::ofstream(dir.file("nvml.txt")) << nvml_script;
        env += " FAKE_NVML_SCRIPT='" + dir.file("nvml.txt") + "'";
    }
    return env;
}

TEST(Conditions, L2FlushAndSyncRunInTheWorkerAndAreStored) {
    ScratchDir dir;
    // 5 warm-up and 40 measured iterations exactly: a flush before each of them.
    const auto r = dir.run("run --backend null --model null --device cuda:0 --batch 1 --warmup 0s --warmup-iterations 5 "
                           "--duration 1ms --min-iterations 40 --max-iterations 40 --set l2_flush=true "
                           "--set sync=blocking --set idle_baseline=200ms --db r.db",
                           fakes(dir));
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_EQ(count_lines(dir.file("cuda.log"), "cuMemsetD8Async"), 45);
    EXPECT_EQ(count_lines(dir.file("cuda.log"), "cuDevicePrimaryCtxSetFlags"), 1);
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto b = store.benchmarks().at(0);
    EXPECT_EQ(b.status, BenchmarkStatus::ok);
    const auto metrics = store.metrics(b.benchmark_id);
    EXPECT_EQ(metric(metrics, harness_metrics::kL2FlushBytes), 2.0 * 50 * 1024 * 1024);
    EXPECT_EQ(metric(metrics, harness_metrics::kCudaSchedFlags), 4.0);
    EXPECT_EQ(metric(metrics, harness_metrics::kCudaContextWasActive), 0.0);
    const auto settings = nlohmann::json::parse(b.settings_json);
    EXPECT_EQ(settings["l2_flush"], true);
    EXPECT_EQ(settings["sync"], "blocking");

    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto row = nlohmann::json::parse(summary.out).at("rows").at(0);
    EXPECT_EQ(row.at("l2_flush"), true);
    EXPECT_EQ(row.at("sync"), "blocking");
    EXPECT_THAT(row.at("note").get<std::string>(), HasSubstr("l2_flush: throughput over the iterations' own time"));
}

TEST(Conditions, AFlushThatCannotStartFailsTheCellWithTheReason) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --device cuda:0 --batch 1 --duration 50ms "
                           "--set l2_flush=true --db r.db",
                           "INFERBENCH_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto b = store::ResultsStore::open(dir.file("r.db")).benchmarks().at(0);
    EXPECT_EQ(b.status, BenchmarkStatus::failed);
    EXPECT_THAT(b.reason, HasSubstr("measure conditions failed: l2_flush: cannot load the CUDA driver: "
                                    "/nonexistent/libcuda.so.1"));
}

TEST(Conditions, GpuSettingsOnCpuDevicesAreRefusedBeforeAnythingRuns) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --device cpu --set sync=spin --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--set sync=spin: sync sets how the CPU waits for a GPU, and the plan's devices are all "
                                 "cpu; remove sync or add a cuda device"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST(Conditions, TheIdleBaselineIsStoredAndTheCooldownWaitsForIt) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --device cuda:0 --batch 1,2 --warmup 0s --duration 50ms "
                           "--set telemetry_rate_hz=50 --set idle_baseline=300ms --set cooldown=idle --set cooldown_max=10s --db r.db",
                           fakes(dir));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto env = nlohmann::json::parse(store.runs().at(0).environment_json);
    const auto& baseline = env.at("idle_baseline");
    EXPECT_EQ(baseline.at("measured_ns"), 300'000'000);
    ASSERT_EQ(baseline.at("gpus").size(), 2u);
    EXPECT_DOUBLE_EQ(baseline["gpus"][0].at("power_w").get<double>(), 300.5);
    EXPECT_DOUBLE_EQ(baseline["gpus"][0].at("temperature_c").get<double>(), 41.0);
    EXPECT_EQ(env["gpus"]["devices"][0].at("default_applications_clock_mhz"), 1980.0);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_FALSE(metric(store.metrics(benchmarks[0].benchmark_id), harness_metrics::kCooldownS))
        << "no cooldown before the first cell";
    const auto second = store.metrics(benchmarks[1].benchmark_id);
    // The fake GPU never heats up: back near idle at the first one-second reading.
    EXPECT_EQ(metric(second, harness_metrics::kCooldownReachedIdle), 1.0);
    EXPECT_GE(metric(second, harness_metrics::kCooldownS).value_or(0), 1.0);
    EXPECT_LT(metric(second, harness_metrics::kCooldownS).value_or(99), 5.0);

    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(summary.out)["rows"][0].at("idle_power_w").get<double>(), 300.5);
}

TEST(Conditions, IterationsUnderTheClockFloorAreFlaggedOrDiscarded) {
    ScratchDir dir;
    // GPU 0 runs at 1400 MHz, below 0.75 x its default 1980 MHz, for the whole run.
    const auto r = dir.run("run --backend null --model null --device cuda:0 --batch 1 --warmup 100ms --duration 300ms --max-iterations 100000 "
                           "--set idle_baseline=0s --set throttle_policy=discard --db r.db",
                           fakes(dir, "gpu0.clock_sm = 1400\n"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto row = nlohmann::json::parse(summary.out).at("rows").at(0);
    EXPECT_DOUBLE_EQ(row.at("throttle_flagged_pct").get<double>(), 100.0);
    EXPECT_GT(row.at("throttle_discarded").get<std::int64_t>(), 0);
    EXPECT_TRUE(!row.contains("iterations") || row["iterations"].is_null())
        << "every iteration discarded: no statistics to claim";
    EXPECT_THAT(row.at("note").get<std::string>(),
                HasSubstr("iterations ran throttled (SM clock under 1485 MHz (0.75 x 1980 MHz)) and are left out"));
}

}  // namespace
}  // namespace inferbench
