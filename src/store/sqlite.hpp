// The store's SQL layer, a thin RAII layer over SQLite's C API or PostgreSQL's libpq (store/postgres.hpp): one
// connection, prepared statements, transactions. SQL is written once, in SQLite's spelling with ?N parameters
// (store/sql_dialect.hpp translates it for PostgreSQL; what differs lives there). Values only ever reach the
// database through bound parameters; SQL text is always a constant of ours. Every failure throws DatabaseError
// (an inferbench::EnvironmentError) naming the database and its message. A SQLite connection waits for other
// writers of its file without a time limit; PostgreSQL's server makes writers of the same rows wait.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "store/sql_dialect.hpp"

namespace inferbench::store {

class Statement;
namespace postgres {
class PgConnection;
class PgStatement;
}  // namespace postgres

// A failed call: the message names the database; code() is SQLite's extended result code (for PostgreSQL the
// SQLite code of the same meaning: SQLITE_FULL, SQLITE_CANTOPEN for a failed connection, else SQLITE_ERROR),
// os_error() the errno behind it where the OS refused (0 otherwise), sqlstate() PostgreSQL's SQLSTATE ("23505":
// a unique key taken; empty for SQLite).
class DatabaseError : public EnvironmentError {
public:
    DatabaseError(const std::string& message, int code, int os_error = 0, std::string sqlstate = {})
        : EnvironmentError(message), code_(code), os_error_(os_error), sqlstate_(std::move(sqlstate)) {}
    const std::string& sqlstate() const { return sqlstate_; }
    int code() const { return code_; }
    int primary_code() const { return code_ & 0xff; }
    int os_error() const { return os_error_; }
    bool busy() const { return primary_code() == SQLITE_BUSY || primary_code() == SQLITE_LOCKED; }
    bool disk_full() const;

private:
    int code_;
    int os_error_;
    std::string sqlstate_;
};

// How a connection waits while another connection (of any process) holds the write lock: it retries
// with a bounded backoff and no overall limit, because giving up would lose what the caller is about
// to write. `on_long_wait` is called once per connection when one wait passes `notice_after`.
// `give_up` (checked between retries) turning true during a wait ends it with a busy error, e.g. on
// Ctrl-C; a wait that begins with it true waits on (stopping a run must not drop what it measured).
struct WaitPolicy {
    std::chrono::milliseconds notice_after{2000};
    std::function<void(const std::filesystem::path&)> on_long_wait;
    std::function<bool()> give_up;
};

// One connection. Not shareable between threads; open one per thread instead.
class Database {
public:
    // A SQLite file. flags: SQLITE_OPEN_* (e.g. SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE). `uri_query` (e.g.
    // "mode=ro") opens the path as a file: URI with that query.
    static Database open(const std::filesystem::path& path, int flags, std::string_view uri_query = {});
    // A PostgreSQL database: `url` as libpq reads it (postgresql://user@host:port/db, parts left out taken from
    // PGHOST, PGPORT, PGUSER, PGDATABASE; the password from PGPASSWORD or ~/.pgpass; TLS as sslmode or PGSSLMODE
    // say). Throws DatabaseError where the server cannot be reached or refuses the login.
    static Database open_postgres(const std::string& url);

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs constant SQL (DDL, pragmas, BEGIN/COMMIT), possibly several statements. Never values.
    void exec(const std::string& sql);
    // Exactly one statement; trailing SQL is an error (it would otherwise be silently ignored).
    Statement prepare(std::string_view sql) const;

    Dialect dialect() const { return pg_ ? Dialect::postgres : Dialect::sqlite; }
    // The file; for PostgreSQL "postgresql://user@host:port/db" as reached (what messages name; no secret).
    const std::filesystem::path& path() const { return path_; }
    sqlite3* handle() const { return db_; }  // nullptr for PostgreSQL
    // PostgreSQL: lastval(), the id the last INSERT into a table with an identity column took on this connection.
    // Portable code writes INSERT ... RETURNING id and reads the row instead.
    std::int64_t last_insert_rowid() const;
    std::int64_t changes() const;  // rows changed by the last INSERT/UPDATE/DELETE
    bool in_transaction() const;
    bool read_only() const;

    void set_wait_policy(WaitPolicy policy);
    // Runs `attempt` again while it throws a busy DatabaseError, waiting as the busy handler does:
    // for the few calls where SQLite answers SQLITE_BUSY without calling the handler (the switch
    // to WAL, a read transaction that must become a write transaction).
    template <typename Attempt>
    auto retry_while_busy(Attempt attempt) {
        for (int retries = 0;; ++retries) {
            try {
                return attempt();
            } catch (const DatabaseError& error) {
                if (!error.busy() || !wait_for_writer(retries)) throw;
            }
        }
    }

    // Throws the DatabaseError for a failed call: "results database 'P': WHAT: sqlite message".
    [[noreturn]] void fail(std::string_view what) const;

private:
    struct Waiting;
    Database(sqlite3* db, std::filesystem::path path);
    Database(std::shared_ptr<postgres::PgConnection> pg, std::filesystem::path path);
    void close() noexcept;
    // One pause of a wait for the write lock; false: give up.
    bool wait_for_writer(int retries);
    static int on_busy(void* waiting, int retries);

    sqlite3* db_ = nullptr;
    std::filesystem::path path_;
    // On the heap: SQLite's busy handler keeps a pointer to it across moves of the Database.
    std::unique_ptr<Waiting> waiting_;
    std::shared_ptr<postgres::PgConnection> pg_;  // set for PostgreSQL (db_ null); statements share it
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
    Statement(sqlite3_stmt* stmt, std::filesystem::path db_path);
    explicit Statement(std::unique_ptr<postgres::PgStatement> pg);
    void check_bind(int rc, int index) const;
    [[noreturn]] void fail(std::string_view what) const;

    sqlite3_stmt* stmt_ = nullptr;
    // A copy, not a pointer to the Database, so that moving the Database cannot leave it dangling.
    // Destruction order does not matter either: sqlite3_close_v2 keeps the connection until its
    // last statement is finalized.
    std::filesystem::path db_path_;
    std::unique_ptr<postgres::PgStatement> pg_;  // set for PostgreSQL (stmt_ null)
};

// SQLite: BEGIN IMMEDIATE on construction: the write lock is taken up front, so a busy database waits
// (busy_timeout) here instead of failing with SQLITE_BUSY when a deferred read lock must upgrade.
// PostgreSQL: BEGIN (read committed); writers of different rows go on together, unless a transaction asks for
// one_at_a_time (one that reads, then writes what it read: a migration, a resume), which waits for every other
// one_at_a_time transaction of the database (an advisory lock), as SQLite's writers wait for each other.
// Rolls back on destruction unless commit() was called.
class Transaction {
public:
    enum class Writers { concurrent, one_at_a_time };
    explicit Transaction(Database& db, Writers writers = Writers::concurrent);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();

    void commit();

private:
    Database& db_;
    bool done_ = false;
};

}  // namespace inferbench::store
