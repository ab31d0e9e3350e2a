// Schema, migrations, connection settings and several connections on one file.
#include "store/schema.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <vector>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "store/results_store.hpp"

namespace inferbench::store {
namespace {

using ::testing::HasSubstr;

class SchemaTest : public ::testing::Test {
protected:

    Database open_raw() const { return Database::open(db_path_, SQLITE_OPEN_READWRITE); }

    static std::int64_t query_int(const Database& db, const std::string& sql) {
        Statement statement = db.prepare(sql);
        EXPECT_TRUE(statement.step()) << sql;
        return statement.column_int64(0);
    }

    // The schema as SQLite stores it: equal dumps mean equal tables, indexes and constraints.
    static std::string schema_dump(const Database& db) {
        Statement select = db.prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY name");
        std::string dump;
        while (select.step()) {
            dump += select.column_text(0) + " " + select.column_text(1) + ": " +
                    select.column_text(2) + "\n";
        }
        return dump;
    }

    static RunRecord sample_run() {
        RunRecord run;
        run.name = "nightly";
        run.started_unix_ms = 1'700'000'000'000;
        run.plan_json = "{}";
        run.environment_json = "{}";
        return run;
    }

    static BenchmarkRecord sample_benchmark(std::int64_t run_id, std::int64_t ordinal) {
        BenchmarkRecord b;
        b.run_id = run_id;
        b.ordinal = ordinal;
        b.model = "resnet50";
        b.backend = "null";
        b.device = "cpu";
        b.precision = "fp32";
        b.status = BenchmarkStatus::ok;
        b.settings_json = "{}";
        return b;
    }

    testing::ScratchDir scratch_;
    const std::filesystem::path& dir_ = scratch_.path();
    std::filesystem::path db_path_ = dir_ / "results.db";
};

TEST_F(SchemaTest, MigratesAnEmptyFile) {
    std::ofstream(db_path_).close();
    ASSERT_EQ(std::filesystem::file_size(db_path_), 0u);
    ResultsStore store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_GE(known_schema_version(), 1);

    const Database db = open_raw();
    EXPECT_EQ(schema_version(db), known_schema_version());
    for (const char* table : {"runs", "benchmarks", "iterations"}) {
        Statement find = db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = ?1");
        find.bind_text(1, table);
        ASSERT_TRUE(find.step());
        EXPECT_EQ(find.column_int64(0), 1) << table;
    }
    EXPECT_THAT(schema_dump(db), HasSubstr("benchmarks_by_run"));
}

TEST_F(SchemaTest, CreatesMissingParentDirectories) {
    const std::filesystem::path nested = dir_ / "a" / "b" / "results.db";
    ResultsStore store = ResultsStore::open(nested);
    EXPECT_TRUE(std::filesystem::exists(nested));
    EXPECT_EQ(store.path(), nested);
}

TEST_F(SchemaTest, ReopenIsIdempotentAndKeepsData) {
    std::string first_dump;
    {
        ResultsStore store = ResultsStore::open(db_path_);
        store.begin_run(sample_run());
        first_dump = schema_dump(open_raw());
    }
    for (int reopen = 0; reopen < 2; ++reopen) {
        ResultsStore store = ResultsStore::open(db_path_);
        EXPECT_EQ(store.schema_version(), known_schema_version());
        EXPECT_EQ(store.runs().size(), 1u);
    }
    EXPECT_EQ(schema_dump(open_raw()), first_dump);
}

TEST_F(SchemaTest, NewerSchemaIsAClearErrorAndLeavesTheFileAlone) {
    const int newer = known_schema_version() + 1;
    {
        Database db = Database::open(db_path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("PRAGMA user_version = " + std::to_string(newer));
    }
    try {
        ResultsStore::open(db_path_);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "results database " + db_path_.string() + " has schema version " +
                      std::to_string(newer) + ", this inferbench knows up to " +
                      std::to_string(known_schema_version()) + "; upgrade inferbench");
    }
    const Database db = open_raw();
    EXPECT_EQ(schema_version(db), newer);
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM sqlite_schema"), 0);
}

std::string file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// summary, report, compare, explain and roofline open for reading: an empty file or another program's
// database is refused with one line, and left byte for byte as it was, with no -wal or -shm beside it.
TEST_F(SchemaTest, ReadersRefuseAFileThatIsNotAStoreAndLeaveItAlone) {
    const std::filesystem::path empty = dir_ / "empty.db";
    std::ofstream(empty).close();
    const std::filesystem::path foreign = dir_ / "foreign.db";
    {
        Database db = Database::open(foreign, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')");
    }
    for (const auto& path : {empty, foreign}) {
        const std::string before = file_bytes(path);
        try {
            ResultsStore::open(path, ResultsStore::Access::read);
            FAIL() << "expected an EnvironmentError for " << path;
        } catch (const EnvironmentError& error) {
            EXPECT_EQ(std::string(error.what()),
                      "'" + path.string() +
                          "' is not an inferbench results store (an empty file, or another program's SQLite database); "
                          "nothing was written to it; give --db a store that `inferbench run` or `inferbench import` "
                          "wrote");
        }
        EXPECT_EQ(file_bytes(path), before) << path;
        EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal")) << path;
        EXPECT_FALSE(std::filesystem::exists(path.string() + "-shm")) << path;
    }
}

// `run` makes a store in a new or empty file, never inside another program's database.
TEST_F(SchemaTest, WritersRefuseAnotherProgramsDatabase) {
    {
        Database db = Database::open(db_path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
    }
    const std::string before = file_bytes(db_path_);
    try {
        ResultsStore::open(db_path_);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_EQ(std::string(error.what()), "'" + db_path_.string() +
                                                 "' holds another program's SQLite tables and is not an inferbench "
                                                 "results store; nothing was written to it; give --db a new file or "
                                                 "an inferbench store");
    }
    EXPECT_EQ(file_bytes(db_path_), before);
}

TEST_F(SchemaTest, NotADatabaseIsAnErrorNamingTheFile) {
    std::ofstream(db_path_) << "this is a text file, not an SQLite database, at all......\n";
    try {
        ResultsStore::open(db_path_);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr(db_path_.string()));
        EXPECT_THAT(error.what(), HasSubstr("not a database"));
    }
}

TEST_F(SchemaTest, ConnectionSettings) {
    ResultsStore store = ResultsStore::open(db_path_);
    // journal_mode is stored in the file: a fresh connection sees it.
    const Database db = open_raw();
    Statement mode = db.prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.column_text(0), "wal");
    // foreign_keys is per connection: the store's own connection must refuse an orphan.
    EXPECT_THROW(store.add_benchmark(sample_benchmark(999, 0)), EnvironmentError);
    EXPECT_TRUE(store.benchmarks().empty());
}

// A new file gets 16 KiB pages; a file made with SQLite's default 4 KiB keeps them and stays readable
// and writable (the page size of a WAL file cannot change).
TEST_F(SchemaTest, NewFilesGetLargePagesAndOldOnesKeepTheirs) {
    const auto page_size = [](const Database& db) {
        Statement size = db.prepare("PRAGMA page_size");
        EXPECT_TRUE(size.step());
        return size.column_int64(0);
    };
    {
        ResultsStore store = ResultsStore::open(db_path_);
        store.begin_run(sample_run());
    }
    EXPECT_EQ(page_size(open_raw()), 16384);

    const auto old_path = dir_ / "old.db";
    {
        Database old = Database::open(old_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        // The table fixes the page size; dropped, as a store is never made in a file with tables of its own.
        old.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t (x); DROP TABLE t");
    }
    {
        ResultsStore store = ResultsStore::open(old_path);
        const auto run_id = store.begin_run(sample_run());
        store.add_benchmark(sample_benchmark(run_id, 0));
        EXPECT_EQ(store.benchmarks().size(), 1u);
    }
    EXPECT_EQ(page_size(Database::open(old_path, SQLITE_OPEN_READWRITE)), 4096);
}

TEST_F(SchemaTest, ReadersDoNotWaitForAWriterInProgress) {
    ResultsStore writer = ResultsStore::open(db_path_);
    ResultsStore reader = ResultsStore::open(db_path_);
    writer.begin_run(sample_run());
    ASSERT_EQ(reader.runs().size(), 1u);

    Database other = open_raw();
    Transaction transaction(other);
    other.exec(
        "INSERT INTO runs (name, started_unix_ms, status, plan_json, environment_json, host, "
        "git_commit, inferbench_version) VALUES ('b', 2, 'running', '', '', '', '', '')");
    // Uncommitted: the reader sees the last commit, without waiting.
    EXPECT_EQ(reader.runs().size(), 1u);
    transaction.commit();
    EXPECT_EQ(reader.runs().size(), 2u);
}

TEST_F(SchemaTest, WriterCommitsWhileAReaderHoldsASnapshot) {
    ResultsStore writer = ResultsStore::open(db_path_);
    const std::int64_t run_id = writer.begin_run(sample_run());
    Database reader = open_raw();
    reader.exec("BEGIN");
    EXPECT_EQ(query_int(reader, "SELECT count(*) FROM benchmarks"), 0);

    // With a rollback journal this commit would wait for the reader, then fail with SQLITE_BUSY.
    const std::vector<IterationRecord> iterations(100);
    writer.add_benchmark(sample_benchmark(run_id, 0), iterations);
    EXPECT_EQ(query_int(reader, "SELECT count(*) FROM benchmarks"), 0);  // its snapshot
    reader.exec("COMMIT");
    EXPECT_EQ(query_int(reader, "SELECT count(*) FROM benchmarks"), 1);
}

TEST_F(SchemaTest, ConcurrentReaderNeverSeesAPartialBenchmark) {
    constexpr int kBenchmarks = 20;
    constexpr std::size_t kIterations = 5'000;
    ResultsStore writer = ResultsStore::open(db_path_);
    const std::int64_t run_id = writer.begin_run(sample_run());
    std::atomic<bool> done{false};
    std::thread writing([&] {
        const std::vector<IterationRecord> iterations(kIterations);
        for (int i = 0; i < kBenchmarks; ++i) {
            writer.add_benchmark(sample_benchmark(run_id, i), iterations);
        }
        done = true;
    });
    ResultsStore reader = ResultsStore::open(db_path_);
    std::size_t seen = 0;
    bool complete = true;  // no ASSERT in the loop: returning early would leave `writing` unjoined
    while (complete && (!done || seen < kBenchmarks)) {
        const std::vector<BenchmarkRecord> benchmarks = reader.benchmarks(run_id);
        for (const BenchmarkRecord& b : benchmarks) {
            complete = complete && reader.iterations(b.benchmark_id).size() == kIterations;
        }
        seen = benchmarks.size();
    }
    writing.join();
    EXPECT_TRUE(complete) << "a benchmark was visible before all its iterations";
    EXPECT_EQ(seen, static_cast<std::size_t>(kBenchmarks));
}

TEST_F(SchemaTest, OpeningANewFileWaitsWhileAnotherConnectionWritesIt) {
    // The switch to WAL reads the file, then needs the write lock: SQLite answers that upgrade with
    // SQLITE_BUSY at once, without its busy handler, while another connection holds the write lock
    // of the (still rollback-journal) file. Two processes creating one new file together met this.
    Database writer = Database::open(db_path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    writer.exec("BEGIN IMMEDIATE");
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        writer.exec("COMMIT");
    });
    std::string error;
    try {
        ResultsStore store = ResultsStore::open(db_path_);
        EXPECT_EQ(store.schema_version(), known_schema_version());
    } catch (const EnvironmentError& e) {
        error = e.what();
    }
    release.join();
    EXPECT_EQ(error, "");
}

TEST_F(SchemaTest, ANegativeVersionIsAClearErrorAndLeavesTheFileAlone) {
    {
        Database db = Database::open(db_path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("PRAGMA user_version = -1");
    }
    for (const auto access : {ResultsStore::Access::write, ResultsStore::Access::read}) {
        try {
            ResultsStore::open(db_path_, access);
            FAIL() << "expected an EnvironmentError";
        } catch (const EnvironmentError& error) {
            EXPECT_EQ(std::string(error.what()),
                      "results database " + db_path_.string() +
                          " has schema version -1, which no inferbench writes: the file is damaged or not an "
                          "inferbench results database; use another --db");
        }
    }
    EXPECT_EQ(schema_version(open_raw()), -1);
}

TEST_F(SchemaTest, ADamagedFileIsRefusedForWritingAndSaysHowToRecover) {
    {
        ResultsStore store = ResultsStore::open(db_path_);
        const std::int64_t run_id = store.begin_run(sample_run());
        store.add_benchmark(sample_benchmark(run_id, 0), std::vector<IterationRecord>(20'000));
    }
    const auto size = std::filesystem::file_size(db_path_);
    std::filesystem::resize_file(db_path_, size - 1000);
    try {
        ResultsStore::open(db_path_);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr("results database " + db_path_.string() + " is damaged (quick_check: "));
        EXPECT_THAT(error.what(), HasSubstr(".recover | sqlite3 recovered.db` or use another --db"));
    }
    EXPECT_EQ(std::filesystem::file_size(db_path_), size - 1000);
}

}  // namespace
}  // namespace inferbench::store
