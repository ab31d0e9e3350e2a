// Repeats and stopping criteria in the store: which repeat of its cell a benchmark is, whether its
// criterion converged and what it saw; a resumed repeat replaces its own earlier attempt only; and
// migration step 7 (every earlier benchmark ran once, fixed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using ::testing::HasSubstr;

class RepeatsStoreTest : public StoreFileTest {
protected:
    static BenchmarkRecord repeat_of(std::int64_t run_id, std::int64_t ordinal, std::int64_t repeat) {
        BenchmarkRecord b = benchmark(run_id);
        b.ordinal = ordinal;
        b.repeat = repeat;
        return b;
    }
};

TEST_F(RepeatsStoreTest, RepeatAndConvergenceRoundTrip) {
    auto store = ResultsStore::open(db_path_);
    const auto run_id = add_run(store);
    BenchmarkRecord b = repeat_of(run_id, 3, 2);
    b.convergence = Convergence::not_converged;
    b.stop_reason = "stdrel: not converged within stop_timeout 15s (noise 0.91%, max_noise 0.5%) after 12 iterations";
    store.add_benchmark(b);
    BenchmarkRecord fixed = repeat_of(run_id, 4, 0);
    store.add_benchmark(fixed);
    const auto read = store.benchmarks(run_id);
    ASSERT_EQ(read.size(), 2u);
    EXPECT_EQ(read[0].repeat, 2);
    EXPECT_EQ(read[0].convergence, Convergence::not_converged);
    EXPECT_EQ(read[0].stop_reason, b.stop_reason);
    EXPECT_EQ(read[1].repeat, 0);
    EXPECT_EQ(read[1].convergence, Convergence::fixed);
    EXPECT_EQ(read[1].stop_reason, "");
    const Database db = open_database();
    Statement words = db.prepare("SELECT convergence, stop_reason IS NULL FROM benchmarks ORDER BY ordinal");
    ASSERT_TRUE(words.step());
    EXPECT_EQ(words.column_text(0), "not_converged");
    ASSERT_TRUE(words.step());
    EXPECT_EQ(words.column_text(0), "fixed");
    EXPECT_EQ(words.column_int64(1), 1) << "no reason is NULL";
}

TEST_F(RepeatsStoreTest, BenchmarksAreOrderedByOrdinalThenRepeat) {
    auto store = ResultsStore::open(db_path_);
    const auto run_id = add_run(store);
    // Stored as a run interleaves them: A0 B0 A1 B1.
    for (const auto& [ordinal, repeat] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}}) store.add_benchmark(repeat_of(run_id, ordinal, repeat));
    const auto read = store.benchmarks(run_id);
    std::vector<std::pair<std::int64_t, std::int64_t>> cells;
    for (const auto& b : read) cells.emplace_back(b.ordinal, b.repeat);
    EXPECT_EQ(cells, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

TEST_F(RepeatsStoreTest, AResumedRepeatReplacesOnlyItsOwnAttempt) {
    auto store = ResultsStore::open(db_path_);
    const auto run_id = add_run(store);
    store.add_benchmark(repeat_of(run_id, 0, 0), std::vector<IterationRecord>{{1, 2}});
    BenchmarkRecord interrupted = repeat_of(run_id, 0, 1);
    interrupted.status = BenchmarkStatus::interrupted;
    store.add_benchmark(interrupted, std::vector<IterationRecord>{{1, 2}, {3, 4}});
    const auto id = store.replace_benchmark(repeat_of(run_id, 0, 1),
                                            BenchmarkData{.iterations = std::vector<IterationRecord>{{5, 6}}});
    const auto read = store.benchmarks(run_id);
    ASSERT_EQ(read.size(), 2u) << "repeat 0 of the same cell is kept";
    EXPECT_EQ(read[0].repeat, 0);
    EXPECT_EQ(store.iterations(read[0].benchmark_id).size(), 1u);
    EXPECT_EQ(read[1].benchmark_id, id);
    EXPECT_EQ(read[1].status, BenchmarkStatus::ok);
    EXPECT_EQ(store.iterations(id).size(), 1u);
}

TEST_F(RepeatsStoreTest, AVersionSevenFileReadsAsFixedBenchmarksRunOnce) {
    std::int64_t run_id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        run_id = add_run(store);
        store.add_benchmark(repeat_of(run_id, 0, 0));
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema7);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto read = store.benchmarks(run_id);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].repeat, 0);
    EXPECT_EQ(read[0].convergence, Convergence::fixed);
    EXPECT_EQ(read[0].stop_reason, "");
}

TEST_F(RepeatsStoreTest, AnUnknownConvergenceWordIsAClearError) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(repeat_of(add_run(store), 0, 0));
        // Another program's word: only possible with the CHECK constraint out of the way.
        Database db = open_database();
        testing::exec_in_dialect(db, "PRAGMA ignore_check_constraints = ON; UPDATE benchmarks SET convergence = 'maybe'");
    }
    const auto store = ResultsStore::open(db_path_, ResultsStore::Access::read);
    try {
        store.benchmarks();
        FAIL() << "read an unknown convergence";
    } catch (const EnvironmentError& e) {
        EXPECT_THAT(e.what(), HasSubstr(fmt::format("benchmark {} has convergence 'maybe', which this inferbench does not "
                                                    "know (it knows fixed, converged, not_converged)",
                                                    id)));
    }
}

}  // namespace
}  // namespace inferbench::store
