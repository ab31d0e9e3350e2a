// A thin RAII layer over the SQLite C API: one connection, prepared statements, transactions.
// Values only ever reach SQLite through bound parameters; SQL text is always a constant of ours.
// Every failure throws inferbench::EnvironmentError naming the database file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::store {

class Statement;

// One connection. Not shareable between threads; open one per thread instead.
class Database {
public:
    // flags: SQLITE_OPEN_* (e.g. SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).
    static Database open(const std::filesystem::path& path, int flags);

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs constant SQL (DDL, pragmas, BEGIN/COMMIT), possibly several statements. Never values.
    void exec(const std::string& sql);
    // Exactly one statement; trailing SQL is an error (it would otherwise be silently ignored).
    Statement prepare(std::string_view sql) const;

    const std::filesystem::path& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    std::int64_t last_insert_rowid() const;
    std::int64_t changes() const;  // rows changed by the last INSERT/UPDATE/DELETE
    bool in_transaction() const;

    // Throws the EnvironmentError for a failed call: "results database 'P': WHAT: sqlite message".
    [[noreturn]] void fail(std::string_view what) const;

private:
    Database(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
    void close() noexcept;

    sqlite3* db_ = nullptr;
    std::filesystem::path path_;
};

// A prepared statement. Indexes follow SQLite: parameters count from 1, columns from 0.
class Statement {
public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind_int64(int index, std::int64_t value);
    Statement& bind_double(int index, double value);
    // Text and blobs are copied: the caller's buffer may die before step().
    Statement& bind_text(int index, std::string_view value);
    Statement& bind_blob(int index, std::span<const std::byte> value);
    Statement& bind_null(int index);
    Statement& bind_optional_int64(int index, std::optional<std::int64_t> value);  // nullopt: NULL
    Statement& bind_optional_double(int index, std::optional<double> value);        // nullopt: NULL

    // true: a row is ready for the column getters; false: done. On error the statement is reset
    // (so it can be reused) and EnvironmentError is thrown.
    bool step();
    // step() for statements that return no rows (INSERT/UPDATE/DDL).
    void run();
    // Ready for the next execution: rewinds and clears every binding to NULL.
    void reset() noexcept;

    int column_count() const;
    bool column_is_null(int column) const;
    std::int64_t column_int64(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;  // NULL reads as ""
    std::vector<std::byte> column_blob(int column) const;
    std::optional<std::int64_t> column_optional_int64(int column) const;
    std::optional<double> column_optional_double(int column) const;

private:
    friend class Database;
    Statement(sqlite3_stmt* stmt, std::filesystem::path db_path)
        : stmt_(stmt), db_path_(std::move(db_path)) {}
    void check_bind(int rc, int index) const;
    [[noreturn]] void fail(std::string_view what) const;

    sqlite3_stmt* stmt_ = nullptr;
    // A copy, not a pointer to the Database, so that moving the Database cannot leave it dangling.
    // Destruction order does not matter either: sqlite3_close_v2 keeps the connection until its
    // last statement is finalized.
    std::filesystem::path db_path_;
};

// BEGIN IMMEDIATE on construction: the write lock is taken up front, so a busy database waits
// (busy_timeout) here instead of failing with SQLITE_BUSY when a deferred read lock must upgrade.
// Rolls back on destruction unless commit() was called.
class Transaction {
public:
    explicit Transaction(Database& db);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();

    void commit();

private:
    Database& db_;
    bool done_ = false;
};

}  // namespace inferbench::store
