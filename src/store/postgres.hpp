// The PostgreSQL side of the store's SQL layer (store/sqlite.hpp's Database and Statement call it where the
// store is a PostgreSQL database): one libpq connection, statements prepared on the server once per connection
// and SQL text, values always sent as parameters. Rows are read one at a time (libpq's single-row mode), so a
// long result never sits in memory whole; where a second statement needs the connection while one is still
// being read, the first one's remaining rows are fetched into its own buffer first. Statements run for no rows
// inside a transaction (the bulk INSERTs of a benchmark) go out in libpq's pipeline mode, kPipelineDepth at a
// time, without waiting for each answer; their errors surface at the next other call (at the latest COMMIT).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferbench::store::postgres {

class PgStatement;

class PgConnection {
public:
    // Connects as libpq does (URL parts left out come from PG* variables); throws DatabaseError naming `display`.
    static std::shared_ptr<PgConnection> connect(const std::string& url, const std::string& display);
    ~PgConnection();
    PgConnection(const PgConnection&) = delete;
    PgConnection& operator=(const PgConnection&) = delete;

    void exec(const std::string& sql);
    std::unique_ptr<PgStatement> prepare(std::string_view sql, const std::shared_ptr<PgConnection>& self);
    std::int64_t last_insert_id();
    std::int64_t changes();
    bool in_transaction();

    const std::string& display() const { return display_; }
    // "user@host:port/db" as the server was reached, for messages.
    std::string reached() const;

    // Throws DatabaseError "results database 'D': WHAT: DETAIL" (DETAIL on one line).
    [[noreturn]] void fail(std::string_view what, std::string_view detail, const char* sqlstate = nullptr) const;
    [[noreturn]] void fail_with(std::string_view what, const PGresult* result) const;

private:
    friend class PgStatement;
    PgConnection(PGconn* conn, std::string display) : conn_(conn), display_(std::move(display)) {}
    // Frees the connection for a new command: a statement still being read takes its remaining rows first, and
    // the pipelined statements' answers are read (throwing the first error among them).
    void settle();
    // Sends `statement` for no rows: pipelined inside a transaction, else run and waited for.
    void run(PgStatement& statement);
    void end_pipeline();

    static constexpr int kPipelineDepth = 128;

    PGconn* conn_;
    std::string display_;
    PgStatement* reading_ = nullptr;
    int pipelined_ = 0;  // statements sent in pipeline mode whose answers are not read yet
    std::unordered_map<std::string, std::string> prepared_;  // translated SQL -> server-side statement name
    std::int64_t changes_ = 0;
};

class PgStatement {
public:
    PgStatement(std::shared_ptr<PgConnection> conn, std::string name, int parameters);
    ~PgStatement();
    PgStatement(const PgStatement&) = delete;
    PgStatement& operator=(const PgStatement&) = delete;

    void bind(int index, std::string value, bool binary = false);
    void bind_null(int index);
    bool step();
    void run();  // for statements that return no rows
    void reset() noexcept;

    int column_count() const;
    bool column_is_null(int column) const;
    std::int64_t column_int64(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;
    std::vector<std::byte> column_blob(int column) const;

private:
    friend class PgConnection;
    void send();
    bool send_query();
    PGresult* next_result();
    // Reads what is left of this statement's results off the connection into buffered_.
    void buffer_rest() noexcept;
    void discard() noexcept;
    void check_index(int index) const;
    std::string_view value(int column) const;

    enum class State { idle, reading, buffered, done };
    std::shared_ptr<PgConnection> conn_;
    std::string name_;
    std::vector<std::string> values_;
    std::vector<char> is_null_;
    std::vector<int> formats_;
    State state_ = State::idle;
    std::deque<PGresult*> buffered_;
    PGresult* row_ = nullptr;
    int columns_ = 0;
};

}  // namespace inferbench::store::postgres
