// nvidia-smi logs as stored benchmarks, on the real logs in shared/fixtures/nvidia-smi.
#include "importers/nvidia_smi_import.hpp"

#include <gtest/gtest.h>

#include "core/file_io.hpp"

namespace inferbench::importers {
namespace {

const std::string kLoadCsv = std::string(INFERBENCH_FIXTURES_DIR) + "/nvidia-smi/h200-load-query-200ms.csv";

TEST(NvidiaSmiImport, OneGpuSLogIsOneBenchmarkOfItsSamples) {
    const auto imported = nvidia_smi_benchmark(kLoadCsv, read_regular_file(kLoadCsv), {}, {});
    const auto& record = imported.benchmark.record;
    EXPECT_EQ(record.model, "h200-load-query-200ms");
    EXPECT_EQ(record.backend, "nvidia-smi-log");
    EXPECT_EQ(record.device, "cuda:0");
    EXPECT_EQ(record.status, BenchmarkStatus::ok);
    EXPECT_EQ(record.started_unix_ms, 1796004044465);  // 2026/11/30 02:00:44.465 as UTC
    EXPECT_EQ(record.measured_wall_ns, 1'808'000'000);
    EXPECT_EQ(span_ns(imported.log), 1'808'000'000);
    EXPECT_EQ(gpu_indices(imported.log), std::set<int>{0});
    EXPECT_EQ(imported.benchmark.gpu_samples.size(), 10u);
    ASSERT_EQ(imported.benchmark.telemetry_sources.size(), 1u);
    EXPECT_EQ(imported.benchmark.telemetry_sources[0].source, "nvidia-smi");
    EXPECT_EQ(imported.benchmark.telemetry_sources[0].detail, "imported from " + kLoadCsv + " (query-csv)");
}

TEST(NvidiaSmiImport, TheCommandLineNamesModelAndDevice) {
    const auto imported =
        nvidia_smi_benchmark(kLoadCsv, read_regular_file(kLoadCsv), {.model = "resnet50", .device = "cuda:2"}, {});
    EXPECT_EQ(imported.benchmark.record.model, "resnet50");
    EXPECT_EQ(imported.benchmark.record.device, "cuda:2");
}

// What `import nvidia-smi` says of each log: its GPUs' names, its power and its clock event reasons.
TEST(NvidiaSmiImport, PowerReasonsAndNamesOfALog) {
    const auto imported = nvidia_smi_benchmark(kLoadCsv, read_regular_file(kLoadCsv), {}, {});
    EXPECT_EQ(distinct_gpu_names(imported.log), std::vector<std::string>{"NVIDIA H200"});
    const auto power = power_of(imported.log);
    ASSERT_TRUE(power.has_value());
    EXPECT_FALSE(power->one_second_average);
    EXPECT_NEAR(power->mean_w, 691.5, 0.05);
    EXPECT_DOUBLE_EQ(power->max_w, 692.9);
    EXPECT_EQ(clock_event_reasons_seen(imported.log), std::optional<std::uint64_t>{0x4});
    telemetry::NvidiaSmiLog empty;
    EXPECT_FALSE(power_of(empty).has_value());
    EXPECT_FALSE(clock_event_reasons_seen(empty).has_value());
    EXPECT_EQ(default_run_name({"logs/a.csv", "b.txt"}), "import nvidia-smi a.csv b.txt");
}

}  // namespace
}  // namespace inferbench::importers
