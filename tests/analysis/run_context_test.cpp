#include "analysis/run_context.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferbench::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

store::BenchmarkRecord benchmark(std::string device, std::string settings_json) {
    store::BenchmarkRecord b;
    b.device = std::move(device);
    b.settings_json = std::move(settings_json);
    return b;
}

// A run's cell: its loop settings and backend options; an imported trtexec log: its GPU and warnings.
TEST(CellSettings, ReadsEverySettingFromTheStoredJsonOnce) {
    const auto run = cell_settings(benchmark(
        "cuda:0", R"({"warmup_ns": 5, "duration_ns": 9, "backend_options": {"graph_optimization": "basic"}})"));
    EXPECT_EQ(run.warmup_ns, 5);
    EXPECT_EQ(run.duration_ns, 9);
    EXPECT_FALSE(run.min_iterations.has_value());
    EXPECT_EQ(run.backend_options, R"({"graph_optimization":"basic"})");
    EXPECT_THAT(run.backend_option_values, ElementsAre(Pair("graph_optimization", "basic")));

    const auto imported = cell_settings(benchmark(
        "cuda:1", R"({"gpu_names": ["", "NVIDIA H200"], "trtexec_warnings": ["[W] low memory", 3]})"));
    EXPECT_THAT(imported.gpu_names, ElementsAre("NVIDIA H200"));
    EXPECT_THAT(imported.imported_warnings, ElementsAre("[W] low memory"));
    EXPECT_TRUE(cell_settings(benchmark("cpu", "not json")).gpu_names.empty());
}

TEST(DeviceName, AnImportedGpuNameComesBeforeTheRunsEnvironment) {
    const auto environment = nlohmann::json::parse(R"({"gpus": {"devices": [{"index": 1, "name": "NVIDIA H100"}]},
                                                      "cpu_model": "AMD EPYC"})");
    EXPECT_EQ(device_name(environment, benchmark("cuda:1", R"({"gpu_name": "NVIDIA H200"})")), "NVIDIA H200");
    EXPECT_EQ(device_name(environment, benchmark("cuda:1", "{}")), "NVIDIA H100");
    EXPECT_EQ(device_name(environment, benchmark("cpu", "{}")), "AMD EPYC");
    EXPECT_EQ(device_name(environment, benchmark("cuda:7", "{}")), "cuda:7");
}

}  // namespace
}  // namespace inferbench::analysis
