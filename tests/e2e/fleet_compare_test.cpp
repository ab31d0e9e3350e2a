// A merged store of four hosts and their GPU models (tests/common/fleet_store.hpp) through the real CLI: `compare`,
// `summary` and `report` put the hosts' GPUs side by side without being told to, each column named by its host,
// GPU, driver and framework version.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/fleet_store.hpp"
#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FleetCli : public ::testing::Test {
protected:
    void SetUp() override { testing::write_fleet_store(dir.path() / "all.db"); }
    testing::CliScratch dir;
};

TEST_F(FleetCli, CompareOfAMergedStorePutsEveryHostsGpuSideBySide) {
    const auto r = dir.run("compare --db all.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("compare: all.db holds runs of 4 hosts (ws-2080, gcp-t4, dgx-a100, p3-v100): "
                                 "showing all 5 runs with results; --run latest shows the latest alone"));
    EXPECT_THAT(r.out, HasSubstr("- [1] NVIDIA GeForce RTX 2080 (cuda:0): all.db run 1 on ws-2080, driver 535.104.05, "
                                 "onnxruntime 1.17.1, baseline"));
    EXPECT_THAT(r.out, HasSubstr("- [2] Tesla T4 (cuda:0): all.db run 2 on gcp-t4"));
    EXPECT_THAT(r.out,
                HasSubstr("- [3] NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:0 (cuda:0): all.db runs 3, 5 on dgx-a100"));
    EXPECT_THAT(r.out, HasSubstr("- [4] Tesla V100-SXM2-16GB (cuda:0): all.db run 4 on p3-v100, driver 470.182.03"));
    EXPECT_THAT(r.out, HasSubstr("- [5] NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:1 (cuda:1)"));
    EXPECT_THAT(r.out, HasSubstr("| [1] mJ/inf |"));
    EXPECT_THAT(r.out, HasSubstr("not measured"));  // the V100's batch 8: no power samples
    EXPECT_THAT(r.out, HasSubstr("[2] duration 2s ([1] 10s)"));
    EXPECT_THAT(r.out, HasSubstr("- warning: the sides ran with different settings: duration differs"));
    // The page lists each column's host, GPU, driver and frameworks.
    const auto html = dir.run("compare --db all.db --quiet --html fleet.html");
    ASSERT_EQ(html.exit_code, 0) << html.err;
    const auto page = testing::read_file(dir.path() / "fleet.html");
    EXPECT_THAT(page, HasSubstr("<dt>driver</dt><dd>470.182.03</dd>"));
    EXPECT_THAT(page, HasSubstr("<dt>frameworks</dt><dd>onnxruntime 1.17.1</dd>"));
    EXPECT_THAT(page, HasSubstr("<dt>runs</dt><dd>3, 5</dd>"));
}

TEST_F(FleetCli, CompareJsonNamesEachSidesHostGpuDriverAndBackendVersion) {
    const auto r = dir.run("compare --db all.db --run all --json --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("holds runs of")));
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["rows"].size(), 10u);  // 5 sides x batch 1 and 8
    std::set<std::string> gpus;
    for (const auto& row : doc["rows"]) {
        gpus.insert(row["device_name"].get<std::string>());
        EXPECT_EQ(row["backend_version"], "1.17.1");
        EXPECT_TRUE(row["driver_version"].is_string());
        EXPECT_TRUE(row["host"].is_string());
    }
    EXPECT_EQ(gpus, (std::set<std::string>{"NVIDIA GeForce RTX 2080", "Tesla T4", "NVIDIA A100-SXM4-40GB",
                                           "Tesla V100-SXM2-16GB"}));
}

TEST_F(FleetCli, CompareOfChosenRunsAndOfOneHostsGpus) {
    auto r = dir.run("compare --db all.db --run 2,4 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["rows"].size(), 4u);
    EXPECT_EQ(doc["rows"][0]["device_label"], "Tesla T4");
    EXPECT_EQ(doc["rows"][1]["device_label"], "Tesla V100-SXM2-16GB");
    // The latest run: the A100 host's two GPUs at once, a column each naming its device.
    r = dir.run("compare --db all.db --run latest --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["rows"].size(), 4u);
    EXPECT_EQ(doc["rows"][0]["device_label"], "NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:0");
    EXPECT_EQ(doc["rows"][1]["device_label"], "NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:1");
    r = dir.run("compare --db all.db --run 2,x");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--run 2,x: give a run id, ids separated by commas (3,5), latest or all"));
}

TEST_F(FleetCli, SummaryOfAMergedStoreNamesEachRowsHostAndGpu) {
    auto r = dir.run("summary --db all.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("inferbench: all.db holds runs of 4 hosts"));
    std::string table = r.out;
    table.erase(std::remove(table.begin(), table.end(), ' '), table.end());
    EXPECT_THAT(table, HasSubstr("|device|host|devicename|"));
    EXPECT_THAT(table, HasSubstr("|cuda:0|gcp-t4|TeslaT4|"));
    // On a terminal too (the columns for files are otherwise hidden there).
    r = dir.run("summary --db all.db --run all");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("ws-2080"));
    EXPECT_THAT(r.out, HasSubstr("p3-v100"));
    EXPECT_THAT(r.out, HasSubstr("V100-SXM2-16GB"));  // a narrow terminal wraps the name at its space
    // One host's run: as before.
    r = dir.run("summary --db all.db --run 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("gcp-t4")));
    r = dir.run("summary --db all.db --run 9");
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(FleetCli, ReportOfAMergedStoreHasTheSideBySideTable) {
    const auto r = dir.run("report --db all.db --out rep --no-plots");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("inferbench: all.db holds runs of 4 hosts"));
    EXPECT_THAT(r.out, HasSubstr("comparison.md/.csv/.json (hosts and GPUs side by side)"));
    const auto md = testing::read_file(dir.path() / "rep" / "comparison.md");
    EXPECT_THAT(md, HasSubstr("Tesla T4 (cuda:0): all.db run 2 on gcp-t4"));
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "rep" / "comparison.xlsx"));
    EXPECT_THAT(testing::read_file(dir.path() / "rep" / "report.html"), HasSubstr("Side by side"));
}

}  // namespace
}  // namespace inferbench
