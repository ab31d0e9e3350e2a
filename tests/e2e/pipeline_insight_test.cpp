// A stored pipeline cell and its network-only twin (tests/common/pipeline_store.hpp) through the real CLI: `summary`
// prints the stage breakdown, `explain` the pipeline findings, `compare` the pipeline beside the network alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/pipeline_store.hpp"
#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PipelineCli : public ::testing::Test {
protected:
    void SetUp() override {
        auto results = store::ResultsStore::open(dir.path() / "p.db");
        const auto run = testing::add_run(results);
        auto cell = testing::decode_bound_cell();
        cell.device = "cuda:0";
        for (auto& s : cell.stages)
            if (s.stage == PipelineStage::infer) {
                s.place = StagePlace::gpu;
                s.cpu_us = -1;
            }
        testing::add_pipeline_cell(results, run, cell, 0, true);
    }
    testing::CliScratch dir;
};

TEST_F(PipelineCli, SummaryPrintsThePipelineAndItsStages) {
    const auto r = dir.run("summary --db p.db --format json --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"table\": \"pipeline\""));
    EXPECT_THAT(r.out, HasSubstr("\"table\": \"pipeline_stages\""));
    EXPECT_THAT(r.out, HasSubstr("\"bound_stage\": \"decode\""));
    const auto text = dir.run("summary --db p.db --format md");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_THAT(text.out, HasSubstr("cpu/cpu sequential"));
    EXPECT_THAT(text.out, HasSubstr("on the GPU"));  // infer's CPU figures
}

TEST_F(PipelineCli, ExplainNamesTheBoundAndTheGpusIdleTime) {
    const auto r = dir.run("explain --db p.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("pipeline.network_share"));
    EXPECT_THAT(r.out, HasSubstr("the network is 21% of end-to-end time: decode on 2 threads bounds throughput at "
                                 "2286 images/s"));
    EXPECT_THAT(r.out, HasSubstr("the GPU idles 79% of the run"));
    EXPECT_THAT(r.out, Not(HasSubstr("compare.winners")));  // the pipeline is no alternative to the network alone
}

TEST_F(PipelineCli, CompareSetsThePipelineBesideTheNetworkAlone) {
    const auto r = dir.run("compare --db p.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("pipeline cells beside the network-only cell"));
    EXPECT_THAT(r.out, HasSubstr("pipeline=cpu/cpu sequential"));
    EXPECT_THAT(r.out, HasSubstr("[1] lost %"));
}

}  // namespace
}  // namespace inferbench
