// Schema 12: a run's identity across stores, its shard, and a benchmark's CPU pinning and concurrent benchmarks.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

class FleetColumnsTest : public StoreFileTest {};

TEST_F(FleetColumnsTest, EveryRunGetsItsOwnUidOfThirtyTwoHexDigits) {
    auto store = ResultsStore::open(db_path_);
    add_run(store, "a");
    add_run(store, "b");
    std::set<std::string> uids;
    for (const RunRecord& run : store.runs()) {
        EXPECT_TRUE(std::regex_match(run.uid, std::regex("[0-9a-f]{32}"))) << run.uid;
        uids.insert(run.uid);
    }
    EXPECT_EQ(uids.size(), 2u);
}

TEST_F(FleetColumnsTest, AGivenUidAndShardAreKeptAndASecondRunWithTheUidIsRefused) {
    auto store = ResultsStore::open(db_path_);
    RunRecord run;
    run.name = "shard";
    run.plan_json = "{}";
    run.environment_json = "{}";
    run.uid = "0123456789abcdef0123456789abcdef";
    run.shard = Shard{3, 4};
    const std::int64_t id = store.begin_run(run);
    const auto read = store.find_run(id);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->uid, run.uid);
    ASSERT_TRUE(read->shard);
    EXPECT_EQ(*read->shard, (Shard{3, 4}));
    EXPECT_THROW(store.begin_run(run), EnvironmentError);
    run.uid.clear();
    run.shard.reset();
    EXPECT_FALSE(store.find_run(store.begin_run(run))->shard);
}

TEST_F(FleetColumnsTest, CpuAffinityAndConcurrentBenchmarksRoundTrip) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run = add_run(store);
    BenchmarkRecord alone = benchmark(run);
    BenchmarkRecord beside = benchmark(run);
    beside.ordinal = 1;
    beside.device = "cuda:1";
    beside.cpu_affinity = "0-7,16-23";
    beside.concurrent = {{0, 0, "cuda:0"}, {2, 1, "cuda:2"}};
    store.add_benchmark(alone);
    store.add_benchmark(beside);
    const auto read = store.benchmarks(run);
    ASSERT_EQ(read.size(), 2u);
    EXPECT_TRUE(read[0].cpu_affinity.empty());
    EXPECT_TRUE(read[0].concurrent.empty());
    EXPECT_EQ(read[1].cpu_affinity, "0-7,16-23");
    EXPECT_EQ(read[1].concurrent, beside.concurrent);
}

TEST_F(FleetColumnsTest, AVersionElevenFileGivesItsRunsUidsAndItsBenchmarksNoConcurrency) {
    {
        auto store = ResultsStore::open(db_path_);
        store.add_benchmark(benchmark(add_run(store, "one")));
        add_run(store, "two");
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema11);
        EXPECT_EQ(schema_version(db), 11);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].uid.size(), 32u);
    EXPECT_NE(runs[0].uid, runs[1].uid);
    EXPECT_FALSE(runs[0].shard);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_TRUE(benchmarks[0].concurrent.empty());
}

}  // namespace
}  // namespace inferbench::store
