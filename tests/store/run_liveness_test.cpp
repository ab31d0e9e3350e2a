// A run whose orchestrator is gone reads back as interrupted (and is recorded so when the store is opened);
// a live one stays running; one written elsewhere cannot be judged. Resumed cells replace their earlier
// records, and a run is reopened only when no live orchestrator writes it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using ::testing::HasSubstr;

class RunLivenessTest : public StoreFileTest {
protected:
    std::int64_t add_run_by(ResultsStore& store, const ProcessIdentity& orchestrator) {
        RunRecord run;
        run.name = "killed";
        run.started_unix_ms = 1'700'000'000'000;
        run.plan_json = "{}";
        run.environment_json = "{}";
        run.host = orchestrator.host;
        run.orchestrator = orchestrator;
        return store.begin_run(run);
    }

    std::string stored_status(std::int64_t run_id) const {
        const Database db = open_database();
        Statement select = db.prepare("SELECT status FROM runs WHERE run_id = ?1");
        select.bind_int64(1, run_id);
        EXPECT_TRUE(select.step());
        return select.column_text(0);
    }

    std::int64_t records_of(std::int64_t run_id, std::int64_t ordinal) const {
        const Database db = open_database();
        Statement select = db.prepare("SELECT count(*) FROM benchmarks WHERE run_id = ?1 AND ordinal = ?2");
        select.bind_int64(1, run_id).bind_int64(2, ordinal);
        EXPECT_TRUE(select.step());
        return select.column_int64(0);
    }
};

TEST_F(RunLivenessTest, AVersionFiveFileGainsTheColumnsAndItsRunningRunIsNotJudged) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = add_run(store);
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema5);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    const auto run = store.find_run(id);
    EXPECT_FALSE(run->orchestrator.has_value());
    EXPECT_EQ(run->status, RunStatus::running) << "without a recorded orchestrator nothing can be told";
}

TEST_F(RunLivenessTest, ARunOfThisLiveProcessStaysRunning) {
    auto store = ResultsStore::open(db_path_);
    const auto id = add_run_by(store, current_process_identity());
    EXPECT_EQ(store.find_run(id)->status, RunStatus::running);
    EXPECT_EQ(ResultsStore::open(db_path_).find_run(id)->status, RunStatus::running);
    EXPECT_EQ(stored_status(id), "running");
}

TEST_F(RunLivenessTest, AReusedPidMeansTheOrchestratorIsGone) {
    ProcessIdentity reused = current_process_identity();
    reused.start_ticks += 1;  // our pid, but a process that started at another time
    const std::int64_t id = [&] {
        auto store = ResultsStore::open(db_path_);
        const auto run_id = add_run_by(store, reused);
        const auto run = store.find_run(run_id);
        EXPECT_EQ(run->status, RunStatus::interrupted);
        EXPECT_THAT(run->end_reason, HasSubstr("orchestrator killed"));
        EXPECT_THAT(run->end_reason, HasSubstr("--resume " + std::to_string(run_id)));
        EXPECT_EQ(stored_status(run_id), "running") << "judged on reading, written down on the next open";
        return run_id;
    }();
    const auto reopened = ResultsStore::open(db_path_);
    EXPECT_EQ(stored_status(id), "interrupted");
    EXPECT_EQ(reopened.runs().at(0).status, RunStatus::interrupted);
    EXPECT_EQ(reopened.latest_run()->status, RunStatus::interrupted);
}

TEST_F(RunLivenessTest, AnotherBootOfThisHostMeansTheOrchestratorIsGone) {
    ProcessIdentity before_reboot = current_process_identity();
    before_reboot.boot_id = "00000000-0000-0000-0000-000000000000";
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.find_run(add_run_by(store, before_reboot))->status, RunStatus::interrupted);
}

TEST_F(RunLivenessTest, ARunWrittenOnAnotherHostOrPidNamespaceIsNotJudged) {
    ProcessIdentity elsewhere = current_process_identity();
    elsewhere.host = "another-host";
    elsewhere.start_ticks += 1;
    ProcessIdentity container = current_process_identity();
    container.pid_namespace = "pid:[1]";
    container.start_ticks += 1;
    auto store = ResultsStore::open(db_path_);
    const auto a = add_run_by(store, elsewhere);
    const auto b = add_run_by(store, container);
    const auto reopened = ResultsStore::open(db_path_);
    EXPECT_EQ(reopened.find_run(a)->status, RunStatus::running);
    EXPECT_EQ(reopened.find_run(b)->status, RunStatus::running);
}

TEST_F(RunLivenessTest, EndedRunsKeepTheirStatusAndReason) {
    ProcessIdentity gone = current_process_identity();
    gone.start_ticks += 1;
    auto store = ResultsStore::open(db_path_);
    const auto id = add_run_by(store, gone);
    store.end_run(id, 1'700'000'100'000, RunStatus::interrupted, "stopped by SIGTERM");
    const auto run = ResultsStore::open(db_path_).find_run(id);
    EXPECT_EQ(run->status, RunStatus::interrupted);
    EXPECT_EQ(run->end_reason, "stopped by SIGTERM");
    EXPECT_EQ(run->ended_unix_ms, 1'700'000'100'000);
}

TEST_F(RunLivenessTest, ReopenRefusesARunALiveOrchestratorWritesAndTakesOverAGoneOne) {
    auto store = ResultsStore::open(db_path_);
    const auto live = add_run_by(store, current_process_identity());
    const auto held = store.reopen_run(live, current_process_identity());
    ASSERT_TRUE(held.has_value()) << "a run still being written must not be reopened";
    EXPECT_EQ(held->status, RunStatus::running);
    EXPECT_EQ(held->run_id, live);
    ProcessIdentity gone = current_process_identity();
    gone.start_ticks += 1;
    const auto killed = add_run_by(store, gone);
    EXPECT_FALSE(store.reopen_run(killed, current_process_identity()).has_value());
    const auto run = store.find_run(killed);
    EXPECT_EQ(run->status, RunStatus::running);
    EXPECT_EQ(run->orchestrator->start_ticks, current_process_identity().start_ticks);
    EXPECT_TRUE(run->end_reason.empty());
    EXPECT_THROW((void)store.reopen_run(killed + 100, current_process_identity()), EnvironmentError);
}

TEST_F(RunLivenessTest, ReplaceBenchmarkLeavesOneRecordPerOrdinal) {
    auto store = ResultsStore::open(db_path_);
    const auto run_id = add_run(store);
    BenchmarkRecord failed = benchmark(run_id);
    failed.ordinal = 1;
    failed.status = BenchmarkStatus::interrupted;
    const std::vector<IterationRecord> some(5, IterationRecord{1, 2, 3, 4, 5, 6});
    store.add_benchmark(failed, some);
    BenchmarkRecord other = benchmark(run_id);
    other.ordinal = 0;
    store.add_benchmark(other);
    BenchmarkRecord ok = failed;
    ok.status = BenchmarkStatus::ok;
    const std::vector<IterationRecord> more(7, IterationRecord{1, 2, 3, 4, 5, 6});
    const auto id = store.replace_benchmark(ok, BenchmarkData{.iterations = more});
    EXPECT_EQ(records_of(run_id, 1), 1);
    EXPECT_EQ(records_of(run_id, 0), 1) << "other cells are left alone";
    const auto benchmarks = store.benchmarks(run_id);
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[1].benchmark_id, id);
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok);
    EXPECT_EQ(store.iterations(id).size(), 7u);
    const Database db = open_database();
    Statement rows = db.prepare("SELECT count(*) FROM iterations");
    ASSERT_TRUE(rows.step());
    EXPECT_EQ(rows.column_int64(0), 7) << "the replaced attempt's iterations go with it";
}

}  // namespace
}  // namespace inferbench::store
