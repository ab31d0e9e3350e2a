// ResultsStore: round trips, atomic benchmarks, hostile text, and the 1M-iteration insert figure.
#include "store/results_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/scratch_dir.hpp"
#include "common/store_under_test.hpp"
#include "core/error.hpp"
#include "store/sqlite.hpp"

namespace inferbench::store {
namespace {

using ::testing::HasSubstr;

class ResultsStoreTest : public ::testing::Test {
protected:

    std::int64_t count(const std::string& table) const {
        const Database db = open_database();
        Statement statement = db.prepare("SELECT count(*) FROM " + table);  // our constant names
        EXPECT_TRUE(statement.step());
        return statement.column_int64(0);
    }

    static RunRecord sample_run(std::int64_t started_unix_ms = 1'700'000'000'000) {
        RunRecord run;
        run.name = "nightly";
        run.started_unix_ms = started_unix_ms;
        run.plan_json = R"({"models":["resnet50"]})";
        run.environment_json = R"({"cpu":"x86_64"})";
        run.host = "bench-01";
        run.git_commit = "0123abcd";
        run.inferbench_version = "0.1.0";
        return run;
    }

    static BenchmarkRecord sample_benchmark(std::int64_t run_id, std::int64_t ordinal) {
        BenchmarkRecord b;
        b.run_id = run_id;
        b.ordinal = ordinal;
        b.model = "resnet50";
        b.backend = "onnxruntime";
        b.backend_version = "1.17.0";
        b.device = "cuda:0";
        b.precision = "fp16";
        b.batch_size = 8;
        b.status = BenchmarkStatus::ok;
        b.started_unix_ms = 1'700'000'000'100;
        b.ended_unix_ms = 1'700'000'009'100;
        const nlohmann::json settings = {{"warmup_ns", 1'000'000'000}, {"options", {{"a", "b"}}}};
        b.settings_json = settings.dump();
        return b;
    }

    static std::vector<IterationRecord> sample_iterations(std::size_t n) {
        std::vector<IterationRecord> records(n);
        for (std::size_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::int64_t>(i);
            records[i] = {1'000'000 + k * 5'000, 4'000 + k, 100 + k, 200 + k, 3'000 + k, 300 + k};
        }
        return records;
    }

    Database open_database() const { return testing::open_store_database(db_path_); }
    static bool on_postgres() { return testing::testing_postgres(); }

    testing::ScratchDir scratch_;
    const std::filesystem::path& dir_ = scratch_.path();
    std::filesystem::path db_path_ = testing::store_under_test(dir_ / "results.db");
};

void expect_same(const IterationRecord& a, const IterationRecord& b) {
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.e2e_ns, b.e2e_ns);
    EXPECT_EQ(a.enqueue_ns, b.enqueue_ns);
    EXPECT_EQ(a.h2d_ns, b.h2d_ns);
    EXPECT_EQ(a.compute_ns, b.compute_ns);
    EXPECT_EQ(a.d2h_ns, b.d2h_ns);
}

TEST_F(ResultsStoreTest, RunRoundTrip) {
    ResultsStore store = ResultsStore::open(db_path_);
    EXPECT_TRUE(store.runs().empty());
    EXPECT_EQ(store.latest_run(), std::nullopt);

    RunRecord run = sample_run();
    run.status = RunStatus::completed;  // ignored: a new run is always 'running'
    const std::int64_t run_id = store.begin_run(run);
    std::optional<RunRecord> stored = store.latest_run();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->run_id, run_id);
    EXPECT_EQ(stored->name, run.name);
    EXPECT_EQ(stored->started_unix_ms, run.started_unix_ms);
    EXPECT_EQ(stored->ended_unix_ms, std::nullopt);
    EXPECT_EQ(stored->status, RunStatus::running);
    EXPECT_EQ(stored->plan_json, run.plan_json);
    EXPECT_EQ(stored->environment_json, run.environment_json);
    EXPECT_EQ(stored->host, run.host);
    EXPECT_EQ(stored->git_commit, run.git_commit);
    EXPECT_EQ(stored->inferbench_version, run.inferbench_version);

    store.end_run(run_id, 1'700'000'123'456, RunStatus::completed);
    stored = store.latest_run();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->ended_unix_ms, 1'700'000'123'456);
    EXPECT_EQ(stored->status, RunStatus::completed);
}

TEST_F(ResultsStoreTest, RunsAreOldestFirstAndLatestIsTheNewest) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t second = store.begin_run(sample_run(2'000));
    const std::int64_t first = store.begin_run(sample_run(1'000));
    const std::int64_t third = store.begin_run(sample_run(3'000));
    const std::vector<RunRecord> runs = store.runs();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].run_id, first);
    EXPECT_EQ(runs[1].run_id, second);
    EXPECT_EQ(runs[2].run_id, third);
    EXPECT_EQ(store.latest_run()->run_id, third);
}

TEST_F(ResultsStoreTest, EndRunRejectsUnknownRuns) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    EXPECT_THROW(store.end_run(run_id + 1, 5, RunStatus::completed), EnvironmentError);
    EXPECT_EQ(store.latest_run()->status, RunStatus::running);
}

// The words the file holds are those every earlier inferbench wrote (and the schema's CHECKs list):
// each status is stored as exactly that text and read back as itself.
TEST_F(ResultsStoreTest, EveryStatusIsStoredAsItsTextAndReadBack) {
    const std::vector<std::pair<BenchmarkStatus, std::string>> benchmark_texts = {
        {BenchmarkStatus::ok, "ok"},
        {BenchmarkStatus::failed, "failed"},
        {BenchmarkStatus::skipped, "skipped"},
        {BenchmarkStatus::interrupted, "interrupted"}};
    const std::vector<std::pair<RunStatus, std::string>> run_texts = {{RunStatus::completed, "completed"},
                                                                      {RunStatus::interrupted, "interrupted"},
                                                                      {RunStatus::failed, "failed"}};
    ASSERT_EQ(benchmark_texts.size(), std::size(kAllBenchmarkStatuses));
    ASSERT_EQ(run_texts.size() + 1, std::size(kAllRunStatuses)) << "running: a begun run, below";
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    for (std::size_t i = 0; i < benchmark_texts.size(); ++i) {
        BenchmarkRecord b = sample_benchmark(run_id, static_cast<std::int64_t>(i));
        b.status = benchmark_texts[i].first;
        store.add_benchmark(b);
    }
    std::vector<std::int64_t> ended;
    for (const auto& [status, text] : run_texts) {
        ended.push_back(store.begin_run(sample_run()));
        store.end_run(ended.back(), 5, status);
    }

    const Database db = open_database();
    Statement benchmarks = db.prepare("SELECT status FROM benchmarks ORDER BY ordinal");
    for (const auto& [status, text] : benchmark_texts) {
        ASSERT_TRUE(benchmarks.step());
        EXPECT_EQ(benchmarks.column_text(0), text);
    }
    Statement runs = db.prepare("SELECT status FROM runs ORDER BY run_id");
    ASSERT_TRUE(runs.step());
    EXPECT_EQ(runs.column_text(0), "running");
    for (const auto& [status, text] : run_texts) {
        ASSERT_TRUE(runs.step());
        EXPECT_EQ(runs.column_text(0), text);
    }

    const auto back = store.benchmarks(run_id);
    ASSERT_EQ(back.size(), benchmark_texts.size());
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].status, benchmark_texts[i].first) << i;
    EXPECT_EQ(store.find_run(run_id)->status, RunStatus::running);
    for (std::size_t i = 0; i < ended.size(); ++i) EXPECT_EQ(store.find_run(ended[i])->status, run_texts[i].first);
}

// Text no inferbench writes (another program's, or a status of a later version) is refused by name, not
// read as some status it is not.
TEST_F(ResultsStoreTest, AnUnknownStoredStatusIsAClearError) {
    std::int64_t run_id = 0;
    std::int64_t benchmark_id = 0;
    {
        ResultsStore store = ResultsStore::open(db_path_);
        run_id = store.begin_run(sample_run());
        benchmark_id = store.add_benchmark(sample_benchmark(run_id, 0));
    }
    {
        Database db = open_database();
        testing::exec_in_dialect(db, "PRAGMA ignore_check_constraints = ON; UPDATE benchmarks SET status = 'paused';");
    }
    const ResultsStore store = ResultsStore::open(db_path_, ResultsStore::Access::read);
    try {
        store.benchmarks(run_id);
        FAIL() << "an unknown benchmark status was read";
    } catch (const EnvironmentError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "results database '" + db_path_.string() + "': benchmark " + std::to_string(benchmark_id) +
                      " has status 'paused', which this inferbench does not know (it knows ok, failed, skipped, "
                      "interrupted); the file was written by another program or a newer inferbench");
    }
    {
        Database db = open_database();
        testing::exec_in_dialect(db, "PRAGMA ignore_check_constraints = ON; UPDATE runs SET status = 'done';");
    }
    try {
        store.runs();
        FAIL() << "an unknown run status was read";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr("run " + std::to_string(run_id) + " has status 'done', which this "
                                            "inferbench does not know (it knows running, completed, interrupted, "
                                            "failed)"));
    }
}

TEST_F(ResultsStoreTest, BenchmarkRoundTripWithAllFieldsSet) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    BenchmarkRecord b = sample_benchmark(run_id, 3);
    b.status = BenchmarkStatus::failed;
    b.reason = "out of memory";
    b.load_ns = 123'456'789;
    b.model_path = "/models/resnet50.onnx";
    b.model_size_bytes = 102'400'000;
    b.warmup_iterations = 10;
    b.measured_wall_ns = 9'000'000'000;
    b.stderr_tail = "CUDA error: out of memory\n";
    const std::int64_t benchmark_id = store.add_benchmark(b);

    const std::vector<BenchmarkRecord> stored = store.benchmarks();
    ASSERT_EQ(stored.size(), 1u);
    const BenchmarkRecord& s = stored[0];
    EXPECT_EQ(s.benchmark_id, benchmark_id);
    EXPECT_EQ(s.run_id, run_id);
    EXPECT_EQ(s.ordinal, 3);
    EXPECT_EQ(s.model, b.model);
    EXPECT_EQ(s.backend, b.backend);
    EXPECT_EQ(s.backend_version, b.backend_version);
    EXPECT_EQ(s.device, b.device);
    EXPECT_EQ(s.precision, b.precision);
    EXPECT_EQ(s.batch_size, b.batch_size);
    EXPECT_EQ(s.status, b.status);
    EXPECT_EQ(s.reason, b.reason);
    EXPECT_EQ(s.started_unix_ms, b.started_unix_ms);
    EXPECT_EQ(s.ended_unix_ms, b.ended_unix_ms);
    EXPECT_EQ(s.load_ns, b.load_ns);
    EXPECT_EQ(s.model_path, b.model_path);
    EXPECT_EQ(s.model_size_bytes, b.model_size_bytes);
    EXPECT_EQ(s.warmup_iterations, b.warmup_iterations);
    EXPECT_EQ(s.measured_wall_ns, b.measured_wall_ns);
    EXPECT_EQ(nlohmann::json::parse(s.settings_json), nlohmann::json::parse(b.settings_json));
    EXPECT_EQ(s.stderr_tail, b.stderr_tail);
    EXPECT_TRUE(store.iterations(benchmark_id).empty());
}

TEST_F(ResultsStoreTest, UnsetOptionalFieldsAreStoredAsNull) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    const BenchmarkRecord b = sample_benchmark(run_id, 0);
    store.add_benchmark(b);
    const BenchmarkRecord s = store.benchmarks().at(0);
    EXPECT_EQ(s.reason, "");
    EXPECT_EQ(s.load_ns, std::nullopt);
    EXPECT_EQ(s.model_path, "");
    EXPECT_EQ(s.model_size_bytes, std::nullopt);
    EXPECT_EQ(s.warmup_iterations, std::nullopt);
    EXPECT_EQ(s.measured_wall_ns, std::nullopt);
    EXPECT_EQ(s.stderr_tail, "");
    const Database db = open_database();
    Statement nulls = db.prepare(
        "SELECT count(*) FROM benchmarks WHERE reason IS NULL AND load_ns IS NULL "
        "AND model_path IS NULL AND model_size_bytes IS NULL AND warmup_iterations IS NULL "
        "AND measured_wall_ns IS NULL AND stderr_tail IS NULL");
    ASSERT_TRUE(nulls.step());
    EXPECT_EQ(nulls.column_int64(0), 1);
}

TEST_F(ResultsStoreTest, IterationsRoundTripWithUnmeasuredDeviceTimesAsNull) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    std::vector<IterationRecord> records = sample_iterations(4);
    records[1].h2d_ns = kNotMeasured;
    records[1].d2h_ns = kNotMeasured;
    records[3] = IterationRecord{.start_ns = 7, .e2e_ns = 8};  // no device times at all
    const std::int64_t benchmark_id = store.add_benchmark(sample_benchmark(run_id, 0), records);

    const std::vector<IterationRecord> stored = store.iterations(benchmark_id);
    ASSERT_EQ(stored.size(), records.size());
    for (std::size_t i = 0; i < records.size(); ++i) expect_same(stored[i], records[i]);

    const Database db = open_database();
    Statement nulls = db.prepare(
        "SELECT iteration FROM iterations WHERE benchmark_id = ?1 AND h2d_ns IS NULL "
        "ORDER BY iteration");
    nulls.bind_int64(1, benchmark_id);
    ASSERT_TRUE(nulls.step());
    EXPECT_EQ(nulls.column_int64(0), 1);
    ASSERT_TRUE(nulls.step());
    EXPECT_EQ(nulls.column_int64(0), 3);
    EXPECT_FALSE(nulls.step());
}

// Iterations go in many rows per statement: every row in its place and with its NULLs, whatever the
// count (none, fewer than a statement takes, a whole number of statements, and a remainder).
TEST_F(ResultsStoreTest, IterationsRoundTripWhateverTheirCount) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    std::int64_t ordinal = 0;
    for (const std::size_t n : std::initializer_list<std::size_t>{0, 1, 63, 64, 128, 133}) {
        std::vector<IterationRecord> records = sample_iterations(n);
        for (std::size_t i = 0; i < n; i += 3) records[i].compute_ns = kNotMeasured;
        for (std::size_t i = 0; i < n; i += 5) records[i].enqueue_ns = kNotMeasured;
        const std::int64_t benchmark_id = store.add_benchmark(sample_benchmark(run_id, ordinal++), records);
        const std::vector<IterationRecord> stored = store.iterations(benchmark_id);
        ASSERT_EQ(stored.size(), n);
        for (std::size_t i = 0; i < n; ++i) {
            SCOPED_TRACE("iteration " + std::to_string(i) + " of " + std::to_string(n));
            expect_same(stored[i], records[i]);
        }
    }
}

TEST_F(ResultsStoreTest, BenchmarksAreOrderedByRunThenOrdinalAndFilterByRun) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_a = store.begin_run(sample_run(1'000));
    const std::int64_t run_b = store.begin_run(sample_run(2'000));
    store.add_benchmark(sample_benchmark(run_b, 0));
    store.add_benchmark(sample_benchmark(run_a, 1));
    store.add_benchmark(sample_benchmark(run_a, 0));

    const std::vector<BenchmarkRecord> all = store.benchmarks();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(std::pair(all[0].run_id, all[0].ordinal), std::pair(run_a, std::int64_t{0}));
    EXPECT_EQ(std::pair(all[1].run_id, all[1].ordinal), std::pair(run_a, std::int64_t{1}));
    EXPECT_EQ(std::pair(all[2].run_id, all[2].ordinal), std::pair(run_b, std::int64_t{0}));
    EXPECT_EQ(store.benchmarks(run_b).size(), 1u);
    EXPECT_EQ(store.benchmarks(run_a).size(), 2u);
    EXPECT_TRUE(store.benchmarks(run_b + 100).empty());
}

TEST_F(ResultsStoreTest, FailureMidwayLeavesNoPartialRows) {
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    {
        Database db = open_database();
        if (on_postgres()) {
            db.exec("CREATE FUNCTION fail_midway() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.iteration = 500 "
                    "THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$; CREATE TRIGGER fail_midway "
                    "BEFORE INSERT ON iterations FOR EACH ROW EXECUTE FUNCTION fail_midway()");
        } else {
            db.exec("CREATE TRIGGER fail_midway BEFORE INSERT ON iterations WHEN NEW.iteration = 500 "
                    "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
        }
    }
    const std::vector<IterationRecord> records = sample_iterations(1'000);
    try {
        store.add_benchmark(sample_benchmark(run_id, 0), records);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr("injected failure"));
    }
    EXPECT_EQ(count("benchmarks"), 0);
    EXPECT_EQ(count("iterations"), 0);
    EXPECT_TRUE(store.benchmarks().empty());

    // Still usable afterwards: cached statements were reset, no transaction was left open.
    open_database().exec(on_postgres() ? "DROP TRIGGER fail_midway ON iterations" : "DROP TRIGGER fail_midway");
    const std::int64_t benchmark_id = store.add_benchmark(sample_benchmark(run_id, 0), records);
    EXPECT_EQ(store.iterations(benchmark_id).size(), records.size());
    EXPECT_EQ(count("benchmarks"), 1);
}

TEST_F(ResultsStoreTest, HostileTextRoundTripsVerbatim) {
    const std::string hostile = "it's \"quoted\" '); DROP TABLE runs; --\n\t\\ ünïcødé ?1 :name";
    ResultsStore store = ResultsStore::open(db_path_);
    RunRecord run = sample_run();
    run.name = hostile;
    run.host = hostile;
    run.plan_json = nlohmann::json{{"name", hostile}}.dump();
    const std::int64_t run_id = store.begin_run(run);
    BenchmarkRecord b = sample_benchmark(run_id, 0);
    b.model = hostile;
    b.reason = hostile;
    b.stderr_tail = hostile;
    store.add_benchmark(b);
    store.end_run(run_id, 9, RunStatus::completed);

    const RunRecord stored_run = store.runs().at(0);
    EXPECT_EQ(stored_run.name, hostile);
    EXPECT_EQ(stored_run.host, hostile);
    EXPECT_EQ(nlohmann::json::parse(stored_run.plan_json).at("name"), hostile);
    const BenchmarkRecord stored = store.benchmarks().at(0);
    EXPECT_EQ(stored.model, hostile);
    EXPECT_EQ(stored.reason, hostile);
    EXPECT_EQ(stored.stderr_tail, hostile);
    EXPECT_EQ(count("runs"), 1);
}

TEST_F(ResultsStoreTest, MovedStoreKeepsWorking) {
    ResultsStore first = ResultsStore::open(db_path_);
    ResultsStore moved = std::move(first);
    const std::int64_t run_id = moved.begin_run(sample_run());
    ResultsStore assigned = ResultsStore::open(dir_ / "other.db");
    assigned = std::move(moved);
    EXPECT_EQ(assigned.path(), db_path_);
    EXPECT_EQ(assigned.add_benchmark(sample_benchmark(run_id, 0), sample_iterations(3)), 1);
}

// Not a timed assertion: it checks the million rows and prints the figure for the log.
TEST_F(ResultsStoreTest, OneMillionIterationsInOneBenchmark) {
    constexpr std::size_t kRows = 1'000'000;
    ResultsStore store = ResultsStore::open(db_path_);
    const std::int64_t run_id = store.begin_run(sample_run());
    const std::vector<IterationRecord> records = sample_iterations(kRows);

    const auto start = std::chrono::steady_clock::now();
    const std::int64_t benchmark_id = store.add_benchmark(sample_benchmark(run_id, 0), records);
    const auto inserted = std::chrono::steady_clock::now();
    const std::vector<IterationRecord> stored = store.iterations(benchmark_id);
    const auto read = std::chrono::steady_clock::now();

    using std::chrono::milliseconds, std::chrono::duration_cast;
    const auto insert_ms = duration_cast<milliseconds>(inserted - start).count();
    const auto read_ms = duration_cast<milliseconds>(read - inserted).count();
    std::cout << "[ measure  ] add_benchmark with " << kRows << " iterations: " << insert_ms
              << " ms; iterations() read back: " << read_ms << " ms\n";
    RecordProperty("insert_1m_iterations_ms", std::to_string(insert_ms));
    RecordProperty("read_1m_iterations_ms", std::to_string(read_ms));

    ASSERT_EQ(stored.size(), kRows);
    expect_same(stored.front(), records.front());
    expect_same(stored.back(), records.back());
    EXPECT_EQ(count("iterations"), static_cast<std::int64_t>(kRows));
}

}  // namespace
}  // namespace inferbench::store
