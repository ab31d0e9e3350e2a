// `inferbench compare` end to end: two databases written by the real CLI, compared in every format.
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ScratchDir = testing::CliScratch;

class Compare : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* db : {"a.db", "b.db"}) {
            const auto r =
                dir.run(std::string("run --backend null --model null --batch 1,4 --duration 50ms --warmup 5ms "
                                    "--max-iterations 20000 --db ") +
                        db);
            ASSERT_EQ(r.exit_code, 0) << r.err;
        }
        // A second run in b.db, with one batch size only: `--run` picks which one is compared.
        const auto r = dir.run(
            "run --backend null --model null --batch 4 --duration 50ms --warmup 5ms "
            "--max-iterations 20000 --db b.db");
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ScratchDir dir;
};

TEST_F(Compare, SideBySideTableWithLegend) {
    const auto r = dir.run("compare --db a.db --db b.db --run 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("[1] "));
    EXPECT_THAT(r.out, HasSubstr("(cpu): a.db run 1"));
    EXPECT_THAT(r.out, HasSubstr("(cpu): b.db run 1"));
    EXPECT_THAT(r.out, HasSubstr(", baseline\n"));
    EXPECT_THAT(r.out, HasSubstr("[2] inf/s"));
    // No power measured on a CPU: no energy columns; no options: no such column.
    EXPECT_THAT(r.out, Not(HasSubstr("[2] eff x")));
    // Two data rows (batch 1 and 4), the baseline's speed-up 1.00; the precision both share is said once, above
    // the table, when it does not fit the width whole (report/table.hpp).
    EXPECT_THAT(r.out, HasSubstr("\nprecision: fp32\n"));
    EXPECT_THAT(r.out, HasSubstr("null   null         1"));
    EXPECT_THAT(r.out, HasSubstr("null   null         4"));
}

TEST_F(Compare, JsonRowsPerBenchmarkAndDevice) {
    auto r = dir.run("compare --db a.db --db b.db --run 1 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["table"], "comparison");
    ASSERT_EQ(doc["rows"].size(), 4u);
    EXPECT_EQ(doc["rows"][0]["db"], "a.db");
    EXPECT_EQ(doc["rows"][0]["speedup"], 1.0);
    EXPECT_GT(doc["rows"][1]["speedup"].get<double>(), 0);
    // The latest run of b.db by default: batch 4 alone; --baseline 2 makes it the reference.
    r = dir.run("compare --db a.db --db b.db --baseline 2 --format json --batch 4");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["rows"].size(), 2u);
    EXPECT_EQ(doc["rows"][1]["run_id"], 2);
    EXPECT_EQ(doc["rows"][1]["speedup"], 1.0);
}

TEST_F(Compare, HtmlPage) {
    const auto r = dir.run("compare --db a.db --db b.db --run 1 --format md --html out/compare.html");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("| model | backend |"));
    EXPECT_THAT(r.err, HasSubstr("compare: wrote out/compare.html"));
    const auto page = testing::read_file(dir.path() / "out" / "compare.html");
    EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
    EXPECT_THAT(page, HasSubstr("<table class=\"sortable\" data-table=\"comparison\">"));
    EXPECT_THAT(page, HasSubstr("<figcaption>Throughput</figcaption>"));
}

TEST_F(Compare, GpuNamedFromTheRunEnvironmentWithPowerAndEfficiency) {
    // The fake libnvidia-ml of tests/telemetry: two "Fake H200" GPUs at 300 W.
    setenv("INFERBENCH_NVML_LIBRARY", FAKE_NVML, 1);
    const auto r = dir.run(
        // 150 ms at 100 Hz: samples inside each measured phase even when other load delays the sampler
        // (30 ms at 100 Hz left a cell of a loaded machine with none, and its power unknown).
        "run --backend null --model null --device cuda:0 --batch 1,4 --duration 150ms --warmup 5ms "
        "--max-iterations 0 --set telemetry_rate_hz=100 --db gpu.db");
    unsetenv("INFERBENCH_NVML_LIBRARY");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto compare = dir.run("compare --db a.db --db gpu.db --run 1 --baseline h200 --json");
    ASSERT_EQ(compare.exit_code, 0) << compare.err;
    const auto doc = nlohmann::json::parse(compare.out);
    ASSERT_EQ(doc["rows"].size(), 4u);
    const auto& gpu = doc["rows"][1];
    EXPECT_EQ(gpu["device_label"], "Fake H200");
    EXPECT_EQ(gpu["device"], "cuda:0");
    EXPECT_EQ(gpu["speedup"], 1.0);
    EXPECT_GT(gpu["power_w"].get<double>(), 100);
    EXPECT_GT(gpu["inferences_per_joule"].get<double>(), 0);
    EXPECT_EQ(gpu["efficiency_ratio"], 1.0);
    EXPECT_TRUE(doc["rows"][0]["power_w"].is_null());  // the CPU side has no GPU power
}

TEST_F(Compare, TwoRunsOfOneDatabaseSideBySideLabelledByRun) {
    const auto r = dir.run("compare --db b.db --run 1 --run 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("(run 1) (cpu): b.db run 1"));
    EXPECT_THAT(r.out, HasSubstr("(run 2) (cpu): b.db run 2"));
    EXPECT_THAT(r.out, HasSubstr("[2] inf/s"));
    const auto json = dir.run("compare --db b.db --run 1 --run 2 --json --batch 4");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    ASSERT_EQ(doc["rows"].size(), 2u);
    EXPECT_EQ(doc["rows"][0]["run_id"], 1);
    EXPECT_EQ(doc["rows"][1]["run_id"], 2);
    EXPECT_THAT(doc["rows"][1]["device_label"].get<std::string>(), HasSubstr("(run 2)"));
}

TEST_F(Compare, BadInputIsOneLineAndExitCode2) {
    const auto expect_error = [&](const std::string& args, const std::string& message) {
        const auto r = dir.run("compare " + args);
        EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
        EXPECT_THAT(r.err, HasSubstr(message)) << args;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    };
    expect_error("--db a.db --db nope.db", "--db nope.db: no such file");
    expect_error("--db a.db --model resnet50", "--model resnet50: in none of the compared runs; they have: null");
    expect_error("--db a.db --db b.db --baseline 3", "--baseline 3: there are 2 compared databases or runs");
    expect_error("--db a.db --db b.db --run 1 --run 1 --run 1", "--run: given 3 times for 2 databases");
    expect_error("--db a.db --run 1,x", "--run 1,x: give a run id, ids separated by commas (3,5), latest or all");
    expect_error("--db a.db --db b.db --db a.db --run 1 --run 2", "--run: given 2 times for 3 databases");
    expect_error("--db a.db --db b.db --run 9", "has no run 9");
}

}  // namespace
}  // namespace inferbench
