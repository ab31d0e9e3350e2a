// Schema 13: an image pipeline benchmark's stage times per batch.
#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

class PipelineStagesStoreTest : public StoreFileTest {};

std::vector<PipelineStageTime> two_batches() {
    std::vector<PipelineStageTime> stages;
    for (std::int64_t iteration = 0; iteration < 2; ++iteration) {
        std::int64_t t = 1'000'000 * (iteration + 1);
        // Given out of the order a batch passes them: the store gives them back in that order.
        for (PipelineStage stage : {PipelineStage::nms, PipelineStage::read, PipelineStage::infer,
                                    PipelineStage::decode}) {
            const bool gpu = stage == PipelineStage::infer;
            stages.push_back({.iteration = iteration,
                              .stage = stage,
                              .place = gpu ? StagePlace::gpu : StagePlace::cpu,
                              .start_ns = t,
                              .end_ns = t + 500,
                              .cpu_ns = gpu ? kStageNotMeasured : 700,
                              .images = 8});
            t += 1000;
        }
    }
    return stages;
}

TEST_F(PipelineStagesStoreTest, StagesComeBackByBatchInTheOrderABatchPassesThem) {
    auto store = ResultsStore::open(db_path_);
    BenchmarkRecord record = benchmark(add_run(store));
    record.pipeline_stages = two_batches();
    const std::int64_t id = store.add_benchmark(record);
    const auto read = store.pipeline_stages(id);
    ASSERT_EQ(read.size(), 8u);
    const PipelineStage order[] = {PipelineStage::read, PipelineStage::decode, PipelineStage::infer,
                                   PipelineStage::nms};
    for (std::size_t i = 0; i < read.size(); ++i) {
        EXPECT_EQ(read[i].iteration, static_cast<std::int64_t>(i / 4)) << i;
        EXPECT_EQ(read[i].stage, order[i % 4]) << i;
        const auto given = std::find_if(record.pipeline_stages.begin(), record.pipeline_stages.end(),
                                        [&](const PipelineStageTime& s) {
                                            return s.iteration == read[i].iteration && s.stage == read[i].stage;
                                        });
        ASSERT_NE(given, record.pipeline_stages.end());
        EXPECT_EQ(read[i], *given) << i;
    }
    EXPECT_EQ(read[2].cpu_ns, kStageNotMeasured);
    EXPECT_EQ(read[2].place, StagePlace::gpu);
}

TEST_F(PipelineStagesStoreTest, ABenchmarkWithoutStagesHasNoneAndAReplacedOneLosesItsOld) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run = add_run(store);
    EXPECT_TRUE(store.pipeline_stages(store.add_benchmark(benchmark(run))).empty());
    BenchmarkRecord record = benchmark(run);
    record.ordinal = 1;
    record.pipeline_stages = two_batches();
    store.add_benchmark(record);
    record.pipeline_stages.resize(1);
    const std::int64_t replaced = store.replace_benchmark(record, {});
    EXPECT_EQ(store.pipeline_stages(replaced).size(), 1u);
}

TEST_F(PipelineStagesStoreTest, AVersionTwelveFileGainsTheTable) {
    {
        auto store = ResultsStore::open(db_path_);
        store.add_benchmark(benchmark(add_run(store)));
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema12);
        EXPECT_EQ(schema_version(db), 12);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_TRUE(store.pipeline_stages(benchmarks[0].benchmark_id).empty());
}

}  // namespace
}  // namespace inferbench::store
