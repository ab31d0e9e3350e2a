// The iterations' queue time (schema step 7): stored and read back as measured, NULL where a loop issues
// on completion, and a file from before it gains the column with its iterations kept.
#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using QueueTimeTest = StoreFileTest;

// A run as the fixture adds it, its texts moved in: GCC 12 at -O3 warns falsely (maybe-uninitialized) about
// the fixture's assignments of short literals once they are inlined into these short tests.
std::int64_t begin_run(ResultsStore& store) {
    RunRecord run;
    run.name = std::string("queue");
    run.started_unix_ms = 1'700'000'000'000;
    run.plan_json = std::string("{}");
    run.environment_json = std::string("{}");
    return store.begin_run(run);
}

TEST_F(QueueTimeTest, RoundTripsAndNotMeasuredIsNull) {
    auto store = ResultsStore::open(db_path_);
    std::vector<IterationRecord> iterations(2);
    iterations[0] = {100, 900, kNotMeasured, kNotMeasured, 500, kNotMeasured, 400};
    iterations[1] = {200, 50};
    const std::int64_t id = store.add_benchmark(benchmark(begin_run(store)), iterations);
    const auto back = store.iterations(id);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].queue_ns, 400);
    EXPECT_EQ(back[0].compute_ns, 500);
    EXPECT_EQ(back[1].queue_ns, kNotMeasured);
    Database db = open_database();
    Statement nulls = db.prepare("SELECT count(*) FROM iterations WHERE queue_ns IS NULL");
    ASSERT_TRUE(nulls.step());
    EXPECT_EQ(nulls.column_int64(0), 1);
}

TEST_F(QueueTimeTest, AVersionEightFileGainsTheColumnAndKeepsItsIterations) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(benchmark(begin_run(store)), std::vector<IterationRecord>{{5, 6}});
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema8);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto back = store.iterations(id);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].e2e_ns, 6);
    EXPECT_EQ(back[0].queue_ns, kNotMeasured);
}

}  // namespace
}  // namespace inferbench::store
