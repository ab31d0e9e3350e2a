// The RAII SQLite layer: binding and reading every type, transactions, errors that name the file.
#include "store/sqlite.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"

namespace inferbench::store {
namespace {

using ::testing::HasSubstr;

class SqliteTest : public ::testing::Test {
protected:

    Database open_db() {
        Database db = Database::open(db_path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("CREATE TABLE IF NOT EXISTS t (i INTEGER, d REAL, s TEXT, b BLOB, n INTEGER)");
        return db;
    }

    static std::int64_t count_rows(const Database& db) {
        Statement count = db.prepare("SELECT count(*) FROM t");
        EXPECT_TRUE(count.step());
        return count.column_int64(0);
    }

    testing::ScratchDir scratch_;
    const std::filesystem::path& dir_ = scratch_.path();
    std::filesystem::path db_path_ = dir_ / "test.db";
};

TEST_F(SqliteTest, BindsAndReadsEveryType) {
    Database db = open_db();
    const std::string text_with_nul("a\0b'\"", 5);
    const std::vector<std::byte> blob{std::byte{0}, std::byte{0xff}, std::byte{7}};
    Statement insert = db.prepare("INSERT INTO t (i, d, s, b, n) VALUES (?1, ?2, ?3, ?4, ?5)");
    insert.bind_int64(1, INT64_MIN).bind_double(2, 0.25).bind_text(3, text_with_nul);
    insert.bind_blob(4, blob).bind_null(5);
    insert.run();
    EXPECT_EQ(db.last_insert_rowid(), 1);
    EXPECT_EQ(db.changes(), 1);

    Statement select = db.prepare("SELECT i, d, s, b, n FROM t");
    ASSERT_TRUE(select.step());
    EXPECT_EQ(select.column_count(), 5);
    EXPECT_EQ(select.column_int64(0), INT64_MIN);
    EXPECT_EQ(select.column_double(1), 0.25);
    EXPECT_EQ(select.column_text(2), text_with_nul);
    EXPECT_EQ(select.column_blob(3), blob);
    EXPECT_TRUE(select.column_is_null(4));
    EXPECT_EQ(select.column_optional_int64(4), std::nullopt);
    EXPECT_EQ(select.column_text(4), "");
    EXPECT_FALSE(select.step());
}

TEST_F(SqliteTest, EmptyBlobAndTextAreNotNull) {
    Database db = open_db();
    Statement insert = db.prepare("INSERT INTO t (s, b) VALUES (?1, ?2)");
    insert.bind_text(1, "").bind_blob(2, {});
    insert.run();
    Statement select = db.prepare("SELECT s IS NULL, b IS NULL, length(b) FROM t");
    ASSERT_TRUE(select.step());
    EXPECT_EQ(select.column_int64(0), 0);
    EXPECT_EQ(select.column_int64(1), 0);
    EXPECT_EQ(select.column_int64(2), 0);
}

TEST_F(SqliteTest, BoundTextOutlivesTheCallersBuffer) {
    Database db = open_db();
    Statement insert = db.prepare("INSERT INTO t (s) VALUES (?1)");
    {
        std::string temporary = "copied at bind time";
        insert.bind_text(1, temporary);
        temporary.assign(temporary.size(), 'x');
    }
    insert.run();
    Statement select = db.prepare("SELECT s FROM t");
    ASSERT_TRUE(select.step());
    EXPECT_EQ(select.column_text(0), "copied at bind time");
}

TEST_F(SqliteTest, ResetRewindsAndClearsBindings) {
    Database db = open_db();
    Statement insert = db.prepare("INSERT INTO t (i, n) VALUES (?1, ?2)");
    insert.bind_int64(1, 1).bind_int64(2, 2);
    insert.run();
    insert.reset();
    insert.bind_int64(1, 3);
    insert.run();
    Statement select = db.prepare("SELECT i, n FROM t ORDER BY i");
    ASSERT_TRUE(select.step());
    EXPECT_EQ(select.column_optional_int64(1), 2);
    ASSERT_TRUE(select.step());
    EXPECT_EQ(select.column_int64(0), 3);
    EXPECT_EQ(select.column_optional_int64(1), std::nullopt);
}

TEST_F(SqliteTest, TransactionRollsBackUnlessCommitted) {
    Database db = open_db();
    {
        Transaction transaction(db);
        db.exec("INSERT INTO t (i) VALUES (1)");
        EXPECT_TRUE(db.in_transaction());
    }
    EXPECT_FALSE(db.in_transaction());
    EXPECT_EQ(count_rows(db), 0);
    {
        Transaction transaction(db);
        db.exec("INSERT INTO t (i) VALUES (1)");
        transaction.commit();
    }
    EXPECT_EQ(count_rows(db), 1);
}

TEST_F(SqliteTest, TransactionRollsBackWhenAnExceptionLeavesTheScope) {
    Database db = open_db();
    db.exec("CREATE UNIQUE INDEX t_i ON t (i)");
    Statement insert = db.prepare("INSERT INTO t (i) VALUES (?1)");
    auto insert_twice = [&] {
        Transaction transaction(db);
        for (int round = 0; round < 2; ++round) {
            insert.reset();
            insert.bind_int64(1, 42);
            insert.run();
        }
        transaction.commit();
    };
    EXPECT_THROW(insert_twice(), EnvironmentError);
    EXPECT_EQ(count_rows(db), 0);
    // The failed statement was reset by step(): it is reusable right away.
    insert.reset();
    insert.bind_int64(1, 42);
    insert.run();
    EXPECT_EQ(count_rows(db), 1);
}

TEST_F(SqliteTest, ErrorsNameTheFileAndSqlitesMessage) {
    Database db = open_db();
    try {
        db.prepare("SELECT * FROM missing_table");
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr(db_path_.string()));
        EXPECT_THAT(error.what(), HasSubstr("no such table: missing_table"));
    }
    EXPECT_THROW(db.exec("NOT SQL"), EnvironmentError);
}

TEST_F(SqliteTest, PrepareRejectsMoreThanOneStatement) {
    Database db = open_db();
    EXPECT_THROW(db.prepare("SELECT 1; SELECT 2"), EnvironmentError);
    EXPECT_NO_THROW(db.prepare("SELECT 1;  \n"));
}

TEST_F(SqliteTest, OpenFailureNamesTheFileAndTheReason) {
    const std::filesystem::path missing = dir_ / "no" / "such" / "dir" / "x.db";
    try {
        Database::open(missing, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& error) {
        EXPECT_THAT(error.what(), HasSubstr(missing.string()));
        EXPECT_THAT(error.what(), HasSubstr("cannot open"));
    }
}

TEST_F(SqliteTest, StatementsSurviveAMoveOfTheirDatabase) {
    Database db = open_db();
    Statement insert = db.prepare("INSERT INTO t (i) VALUES (?1)");
    Database moved = std::move(db);
    insert.bind_int64(1, 5);
    insert.run();
    EXPECT_EQ(count_rows(moved), 1);
}

TEST_F(SqliteTest, AWriterWaitsForAnotherAndSaysSoOnce) {
    Database holder = open_db();
    Database waiter = open_db();
    holder.exec("PRAGMA journal_mode = WAL");
    int notices = 0;
    waiter.set_wait_policy({.notice_after = std::chrono::milliseconds(100),
                            .on_long_wait = [&](const std::filesystem::path&) { ++notices; },
                            .give_up = {}});
    Transaction holding(holder);
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        holding.commit();
    });
    const auto start = std::chrono::steady_clock::now();
    {
        Transaction waiting(waiter);  // BEGIN IMMEDIATE: waits for the holder's commit
        waiter.exec("INSERT INTO t (i) VALUES (1)");
        waiting.commit();
    }
    release.join();
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(350));
    EXPECT_EQ(notices, 1);
    EXPECT_EQ(count_rows(holder), 1);
}

TEST_F(SqliteTest, AWaitEndsWithABusyErrorWhenGiveUpTurnsTrue) {
    Database holder = open_db();
    Database waiter = open_db();
    std::atomic<bool> stop{false};
    waiter.set_wait_policy({.notice_after = std::chrono::hours(1), .on_long_wait = {}, .give_up = [&] { return stop.load(); }});
    Transaction holding(holder);
    std::thread ask([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop = true;
    });
    try {
        Transaction waiting(waiter);
        ADD_FAILURE() << "expected a busy error";
    } catch (const DatabaseError& error) {
        EXPECT_TRUE(error.busy()) << error.what();
    }
    ask.join();
}

TEST_F(SqliteTest, ErrorsCarrySqlitesCode) {
    Database db = open_db();
    try {
        db.exec("INSERT INTO missing_table VALUES (1)");
        FAIL() << "expected a DatabaseError";
    } catch (const DatabaseError& error) {
        EXPECT_EQ(error.primary_code(), SQLITE_ERROR);
        EXPECT_FALSE(error.busy());
        EXPECT_FALSE(error.disk_full());
    }
}

}  // namespace
}  // namespace inferbench::store
