// Per-layer times (a backend's separate profiled run): stored with their benchmark in one transaction,
// read back in layer order, and migration step 5.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

class LayerTimesTest : public StoreFileTest {
protected:
    std::int64_t rows() const {
        const Database db = open_database();
        Statement statement = db.prepare("SELECT count(*) FROM layer_times");
        EXPECT_TRUE(statement.step());
        return statement.column_int64(0);
    }
};

// The order they ran in, which is neither by name nor by time.
const std::vector<LayerTime> kLayers = {
    {"conv1", "FusedConv", "CPUExecutionProvider", 20, 41'000'000},
    {"maxpool", "MaxPool", "CPUExecutionProvider", 20, 3'000'000},
    {"ReorderOutput", "ReorderOutput", "CPUExecutionProvider", 20, 0},
    {"fc", "Gemm", "CUDAExecutionProvider", 40, 9'123'456'789, true},
};

TEST_F(LayerTimesTest, RoundTripInLayerOrder) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    const std::vector<IterationRecord> iterations = {{1, 2}, {3, 4}};
    const std::int64_t id =
        store.add_benchmark(benchmark(run_id), BenchmarkData{.iterations = iterations, .layer_times = kLayers});
    const std::int64_t without = store.add_benchmark(benchmark(run_id), iterations);
    EXPECT_EQ(store.layer_times(id), kLayers);
    EXPECT_TRUE(store.layer_times(without).empty());
    EXPECT_TRUE(store.layer_times(id + 100).empty());
    EXPECT_EQ(store.iterations(id).size(), 2u);
    {
        const Database db = open_database();
        Statement layers = db.prepare("SELECT layer, node FROM layer_times WHERE benchmark_id = ?1 ORDER BY layer");
        layers.bind_int64(1, id);
        for (std::int64_t i = 0; i < 4; ++i) {
            ASSERT_TRUE(layers.step());
            EXPECT_EQ(layers.column_int64(0), i);
            EXPECT_EQ(layers.column_text(1), kLayers[static_cast<std::size_t>(i)].node);
        }
    }
}

TEST_F(LayerTimesTest, ABadRowRollsTheWholeBenchmarkBack) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    const std::vector<LayerTime> never_ran = {{"conv1", "Conv", "CPUExecutionProvider", 0, 0}};
    EXPECT_THROW(store.add_benchmark(benchmark(run_id), BenchmarkData{.layer_times = never_ran}), EnvironmentError);
    const std::vector<LayerTime> negative = {{"conv1", "Conv", "CPUExecutionProvider", 1, -5}};
    EXPECT_THROW(store.add_benchmark(benchmark(run_id), BenchmarkData{.layer_times = negative}), EnvironmentError);
    EXPECT_TRUE(store.benchmarks(run_id).empty());
    EXPECT_EQ(rows(), 0);
}

TEST_F(LayerTimesTest, DeletingABenchmarkDeletesItsLayers) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t id = store.add_benchmark(benchmark(add_run(store)), BenchmarkData{.layer_times = kLayers});
    EXPECT_EQ(rows(), 4);
    {
        Database db = open_database();
        testing::exec_in_dialect(db, "PRAGMA foreign_keys = ON");
        Statement remove = db.prepare("DELETE FROM benchmarks WHERE benchmark_id = ?1");
        remove.bind_int64(1, id).run();
    }
    EXPECT_EQ(rows(), 0);
}

TEST_F(LayerTimesTest, AVersionFourFileGainsTheTableAndKeepsItsBenchmarks) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(benchmark(add_run(store)), std::vector<IterationRecord>{{5, 6}});
        Database db = open_database();
        testing::exec_in_dialect(db, std::string(kBackToSchema5) + "DROP TABLE layer_times; PRAGMA user_version = 4");
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_GE(known_schema_version(), 5);
    EXPECT_EQ(store.iterations(id).size(), 1u);
    EXPECT_TRUE(store.layer_times(id).empty());
    const std::int64_t added =
        store.add_benchmark(benchmark(store.runs()[0].run_id), BenchmarkData{.layer_times = kLayers});
    EXPECT_EQ(store.layer_times(added).size(), 4u);
}

// Step 7: rows stored before it by ONNX Runtime's GPU providers were timed as the host's dispatch of their
// kernels; every other row was timed as the work itself.
TEST_F(LayerTimesTest, AVersionSixFileMarksGpuProviderRowsAsHostDispatch) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        const std::vector<LayerTime> stored = {{"conv1", "FusedConv", "CUDAExecutionProvider", 2, 10},
                                               {"nms", "NonMaxSuppression", "CPUExecutionProvider", 2, 20},
                                               {"gemm", "Gemm", "LibTorch CUDA", 2, 30},
                                               {"trt", "TRTKernel", "TensorrtExecutionProvider", 2, 40}};
        id = store.add_benchmark(benchmark(add_run(store)), BenchmarkData{.layer_times = stored});
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema6);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto layers = store.layer_times(id);
    ASSERT_EQ(layers.size(), 4u);
    EXPECT_TRUE(layers[0].host_dispatch);
    EXPECT_FALSE(layers[1].host_dispatch);
    EXPECT_FALSE(layers[2].host_dispatch);
    EXPECT_TRUE(layers[3].host_dispatch);
}

}  // namespace
}  // namespace inferbench::store
