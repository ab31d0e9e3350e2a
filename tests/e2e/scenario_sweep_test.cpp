// What the CLI runs of a plan's scenario settings: a list of concurrency or target_qps values is a sweep whose
// cells each carry their value into the summary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

nlohmann::json summary_rows(const ScratchDir& dir) {
    const auto summary = dir.run("summary --db r.db --json");
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    return nlohmann::json::parse(summary.out)["rows"];
}

TEST(ScenarioSweep, ConcurrencyAndTargetQpsListsAreCellsEachWithItsValue) {
    ScratchDir dir;
    const auto run = dir.run("run --backend null --model null --batch 1 --scenario concurrency --set concurrency=1,2 "
                             "--duration 200ms --warmup 50ms --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto rows = summary_rows(dir);
    ASSERT_EQ(rows.size(), 2u) << rows.dump();
    EXPECT_EQ(rows[0]["scenario"], "concurrency 1");
    EXPECT_EQ(rows[0]["variant"], "concurrency=1");
    EXPECT_EQ(rows[1]["scenario"], "concurrency 2");
    EXPECT_EQ(rows[1]["variant"], "concurrency=2");

    ScratchDir server;
    const auto served = server.run("run --backend null --model null --batch 1 --scenario server "
                                   "--set target_qps=200,400 --set latency_bound=1s --duration 300ms --warmup 50ms "
                                   "--db r.db --quiet");
    ASSERT_EQ(served.exit_code, 0) << served.err;
    rows = summary_rows(server);
    ASSERT_EQ(rows.size(), 2u) << rows.dump();
    EXPECT_EQ(rows[0]["variant"], "target_qps=200");
    EXPECT_DOUBLE_EQ(rows[0]["target_qps"].get<double>(), 200);
    EXPECT_EQ(rows[1]["variant"], "target_qps=400");
    EXPECT_DOUBLE_EQ(rows[1]["target_qps"].get<double>(), 400);
}

TEST(ScenarioSweep, DryRunListsEachValueAsACell) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1,2 --scenario server --set target_qps=10,20,40 "
                           "--dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("   3  null null cpu fp32 b1 [target_qps=40]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("   4  null null cpu fp32 b2 [target_qps=10]"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("6 benchmarks"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace inferbench
