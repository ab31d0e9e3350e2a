// `inferbench explain` through the real CLI: on the real trtexec and nvidia-smi logs of shared/fixtures
// imported first, in every format, and the hint `run` prints after its summary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFixtures = INFERBENCH_FIXTURES_DIR;

TEST(Explain, AnImportedEnqueueBoundTrtexecLogAndAPowerCappedGpuLogAreExplained) {
    testing::CliScratch dir;
    ASSERT_EQ(dir.run("import trtexec '" + kFixtures + "/trtexec/trt8-tf32-trace-3050.log' --db r.db").exit_code, 0);
    ASSERT_EQ(dir.run("import nvidia-smi '" + kFixtures + "/nvidia-smi/h200-load-query-200ms.csv' --db r.db").exit_code,
              0);

    const auto trtexec = dir.run("explain --db r.db --run 1");
    ASSERT_EQ(trtexec.exit_code, 0) << trtexec.err;
    EXPECT_THAT(trtexec.out, HasSubstr("findings for 1 benchmark, problems first:"));
    EXPECT_THAT(trtexec.out, HasSubstr("launch.enqueue_bound"));
    EXPECT_THAT(trtexec.out, HasSubstr("throttling.not_measured"));  // a GPU benchmark without telemetry

    const auto smi = dir.run("explain --db r.db --format json");  // the latest run: the nvidia-smi log
    ASSERT_EQ(smi.exit_code, 0) << smi.err;
    const auto doc = nlohmann::json::parse(smi.out);
    EXPECT_EQ(doc.at("schema_version"), 2);
    ASSERT_FALSE(doc.at("findings").empty());
    const auto& first = doc["findings"][0];
    EXPECT_EQ(first["id"], "throttling.power_cap");
    EXPECT_EQ(first["severity"], "warning");
    EXPECT_EQ(first["benchmarks"], nlohmann::json::array({2}));
    EXPECT_THAT(first["statement"].get<std::string>(), HasSubstr("held by the SW power cap for 100%"));
    EXPECT_EQ(first["evidence"]["series"][0], "gpu_samples.clock_event_reasons");
    EXPECT_TRUE(first["evidence"].contains("window_ms"));
    EXPECT_FALSE(first["try"].get<std::string>().empty());

    const auto md = dir.run("explain --db r.db --run all --format md");
    ASSERT_EQ(md.exit_code, 0) << md.err;
    EXPECT_THAT(md.out, HasSubstr("| severity | finding "));
    EXPECT_THAT(md.out, HasSubstr("| warning  | throttling.power_cap "));

    const auto filtered = dir.run("explain --db r.db --run all --backend trtexec --format json");
    ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
    EXPECT_EQ(nlohmann::json::parse(filtered.out).at("benchmarks"), 1);
}

TEST(Explain, BadInputGivesOneLineAndANonZeroExit) {
    testing::CliScratch dir;
    const auto missing = dir.run("explain --db missing.db");
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_THAT(missing.err, HasSubstr("missing.db: no results database here; run `inferbench run` first"));
    ASSERT_EQ(dir.run("import trtexec '" + kFixtures + "/trtexec/trt10-resnet50-summary.log' --db r.db").exit_code, 0);
    const auto format = dir.run("explain --db r.db --format yaml");
    EXPECT_NE(format.exit_code, 0);
    EXPECT_THAT(format.err, HasSubstr("yaml"));
    const auto model = dir.run("explain --db r.db --model nosuch");
    EXPECT_NE(model.exit_code, 0);
    EXPECT_THAT(model.err, HasSubstr("nosuch"));
}

// Counting the findings reads every iteration into memory: past 2 M of them `run` names the command alone, so
// that its memory does not grow with how long the cells ran.
TEST(Explain, RunDoesNotCountTheFindingsOfMillionsOfIterations) {
    testing::CliScratch dir;
    const auto r = dir.run("run --backend null --model null --batch 1 --duration 10ms --warmup 10ms "
                           "--min-iterations 2100000 --max-iterations 0 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("findings: inferbench explain --db r.db --run 1 (not counted here: counting reads "
                                 "the run's "));
}

TEST(Explain, RunEndsWithAHintWhenThereAreFindings) {
    testing::CliScratch dir;
    // Two batch sizes of one cell: the batch-scaling rule always has something to say.
    const auto r = dir.run("run --backend null --model null --batch 1,4 --duration 100ms --warmup 10ms --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("findings: inferbench explain --db r.db --run 1\n"));
    const auto quiet = dir.run("run --backend null --model null --batch 1,4 --duration 50ms --warmup 10ms --db r.db "
                               "--quiet");
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_THAT(quiet.err, Not(HasSubstr("inferbench explain")));
    const auto explained = dir.run("explain --db r.db --run 1 --format json");
    ASSERT_EQ(explained.exit_code, 0) << explained.err;
    const auto doc = nlohmann::json::parse(explained.out);
    bool batch = false;
    for (const auto& f : doc.at("findings"))
        batch = batch || f["id"].get<std::string>().starts_with("batch.");
    EXPECT_TRUE(batch) << explained.out;
}

}  // namespace
}  // namespace inferbench
