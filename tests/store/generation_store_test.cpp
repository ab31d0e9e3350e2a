// Generative benchmarks (schema step 10): their lengths, every generation's steps and the first generation's
// tokens stored and read back as given; other benchmarks have none; a file from before gains the tables.
#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using GenerationStoreTest = StoreFileTest;

TEST_F(GenerationStoreTest, StepsAndTokensRoundTrip) {
    auto store = ResultsStore::open(db_path_);
    BenchmarkRecord record = benchmark(add_run(store, "generation"));
    record.batch_size = 2;
    record.input_tokens = 4;
    record.output_tokens = 3;
    const std::vector<IterationRecord> iterations = {{1000, 400}, {2000, 350}};
    const std::vector<GenerationRecord> generations = {
        {0, {{1200, 2 * 4 * 10}, {1300, 2 * 5 * 10}, {1400, 2 * 6 * 10}}},
        {1, {{2150, 80}, {2250, 100}, {2350, 120}}},
    };
    // Step-major: step 0 (seq 0, seq 1), step 1, step 2.
    const std::vector<std::int32_t> tokens = {11, 21, 12, 22, 13, 23};
    const std::int64_t id = store.add_benchmark(
        record, BenchmarkData{.iterations = iterations, .generations = generations, .generated_tokens = tokens});

    const auto back = store.benchmarks();
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].input_tokens, 4);
    EXPECT_EQ(back[0].output_tokens, 3);
    EXPECT_EQ(store.generations(id), generations);
    const auto sequences = store.generated_tokens(id);
    ASSERT_EQ(sequences.size(), 2u);
    EXPECT_EQ(sequences[0], (std::vector<std::int32_t>{11, 12, 13}));
    EXPECT_EQ(sequences[1], (std::vector<std::int32_t>{21, 22, 23}));
}

TEST_F(GenerationStoreTest, OtherBenchmarksHaveNoLengthsAndNoSteps) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t id = store.add_benchmark(benchmark(add_run(store, "generation")), std::vector<IterationRecord>{{5, 6}});
    EXPECT_EQ(store.benchmarks()[0].input_tokens, 0);
    EXPECT_TRUE(store.generations(id).empty());
    EXPECT_TRUE(store.generated_tokens(id).empty());
    Database db = open_database();
    Statement nulls = db.prepare("SELECT count(*) FROM benchmarks WHERE input_tokens IS NULL AND output_tokens IS NULL");
    ASSERT_TRUE(nulls.step());
    EXPECT_EQ(nulls.column_int64(0), 1);
}

TEST_F(GenerationStoreTest, AVersionNineFileGainsTheTablesAndKeepsItsBenchmarks) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(benchmark(add_run(store, "generation")), std::vector<IterationRecord>{{5, 6}});
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema9);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_EQ(store.iterations(id).size(), 1u);
    EXPECT_TRUE(store.generations(id).empty());
}

}  // namespace
}  // namespace inferbench::store
