#include "store/postgres.hpp"

#include <charconv>
#include <cstdlib>
#include <utility>

#include "store/sql_dialect.hpp"
#include "store/sqlite.hpp"

namespace inferbench::store::postgres {
namespace {

// libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): one line here.
std::string one_line(std::string_view text) {
    std::string line;
    bool space = false;
    for (const char c : text) {
        if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
            space = !line.empty();
            continue;
        }
        if (space) line += ' ';
        space = false;
        line += c;
    }
    return line;
}

// The SQLite result code a PostgreSQL error means to the store's callers (DatabaseError::disk_full(), busy()).
int code_of(const char* sqlstate) {
    const std::string_view state = sqlstate != nullptr ? sqlstate : "";
    if (state == "53100") return SQLITE_FULL;  // disk_full
    return SQLITE_ERROR;
}

void ignore_notice(void*, const char*) {}

bool changes_rows(const PGresult* result) {
    const std::string_view command = PQcmdStatus(const_cast<PGresult*>(result));
    return command.starts_with("INSERT") || command.starts_with("UPDATE") || command.starts_with("DELETE");
}

std::int64_t parse_int64(std::string_view text) {
    if (text.empty()) return 0;
    if (text == "t") return 1;
    if (text == "f") return 0;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size()) return value;
    double real = 0;  // a numeric or double column read as an integer: truncated, as SQLite does
    std::from_chars(text.data(), text.data() + text.size(), real);
    return static_cast<std::int64_t>(real);
}

// "%2F" for each '/' of a socket folder, so that the form is a URL libpq reads back.
std::string url_host(std::string_view host) {
    std::string text;
    for (const char c : host) text += c == '/' ? std::string("%2F") : std::string(1, c);
    return text;
}

}  // namespace

}  // namespace inferbench::store::postgres

namespace inferbench::store {

std::string libpq_version() {
    const int version = PQlibVersion();  // 150018 for 15.18
    return std::to_string(version / 10000) + "." + std::to_string(version % 10000);
}

}  // namespace inferbench::store

namespace inferbench::store::postgres {

// ---- PgConnection ----

std::shared_ptr<PgConnection> PgConnection::connect(const std::string& url, const std::string& display) {
    std::vector<const char*> keys, values;
    // An unreachable host fails after 10 s rather than the OS's minutes; the URL or PGCONNECT_TIMEOUT may say otherwise.
    if (std::getenv("PGCONNECT_TIMEOUT") == nullptr) {
        keys.push_back("connect_timeout");
        values.push_back("10");
    }
    keys.push_back("dbname");  // expanded: the URL's own parameters come after and win
    values.push_back(url.c_str());
    keys.push_back("fallback_application_name");
    values.push_back("inferbench");
    keys.push_back(nullptr);
    values.push_back(nullptr);
    PGconn* conn = PQconnectdbParams(keys.data(), values.data(), 1);
    if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
        const std::string detail = conn != nullptr ? one_line(PQerrorMessage(conn)) : "out of memory";
        PQfinish(conn);
        throw DatabaseError("results database '" + display + "': cannot connect: " + detail, SQLITE_CANTOPEN);
    }
    PQsetNoticeProcessor(conn, ignore_notice, nullptr);  // "table exists, skipping" is nothing to show
    return std::shared_ptr<PgConnection>(new PgConnection(conn, display));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

std::string PgConnection::reached() const {
    const std::string host = PQhost(conn_) != nullptr ? PQhost(conn_) : "";
    return "postgresql://" + std::string(PQuser(conn_)) + "@" + url_host(host) + ":" + PQport(conn_) + "/" + PQdb(conn_);
}

void PgConnection::fail(std::string_view what, std::string_view detail, const char* sqlstate) const {
    std::string message = "results database '" + display_ + "': ";
    message += what;
    message += ": ";
    message += one_line(detail);
    throw DatabaseError(message, code_of(sqlstate), 0, sqlstate != nullptr ? sqlstate : "");
}

void PgConnection::fail_with(std::string_view what, const PGresult* result) const {
    const char* primary = result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    std::string detail = primary != nullptr ? primary : PQerrorMessage(conn_);
    if (const char* more = result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL) : nullptr)
        detail += std::string(" (") + more + ")";
    const std::string state_copy = state != nullptr ? state : "";
    PQclear(const_cast<PGresult*>(result));
    fail(what, detail, state_copy.empty() ? nullptr : state_copy.c_str());
}

void PgConnection::settle() {
    if (reading_ != nullptr) reading_->buffer_rest();
    if (pipelined_ > 0) end_pipeline();
}

void PgConnection::run(PgStatement& statement) {
    if (pipelined_ == 0) {
        settle();
        // Outside a transaction each statement is its own; pipelined, an error would also undo its neighbours.
        if (PQtransactionStatus(conn_) != PQTRANS_INTRANS || PQenterPipelineMode(conn_) == 0) {
            if (statement.step()) {
                statement.reset();
                fail("query failed", "statement returned rows where none were expected");
            }
            return;
        }
    }
    if (!statement.send_query()) fail("query failed", PQerrorMessage(conn_));
    // A bounded number in flight: the server's answers must not fill the socket while nobody reads them.
    if (++pipelined_ >= kPipelineDepth) end_pipeline();
}

void PgConnection::end_pipeline() {
    const int sent = std::exchange(pipelined_, 0);
    PQpipelineSync(conn_);
    PGresult* first_error = nullptr;
    for (int i = 0; i < sent; ++i) {
        while (PGresult* result = PQgetResult(conn_)) {  // each statement's answer, then NULL
            if (PQresultStatus(result) == PGRES_FATAL_ERROR && first_error == nullptr) {
                first_error = result;
                continue;
            }
            if (PQresultStatus(result) == PGRES_COMMAND_OK && changes_rows(result))
                changes_ = parse_int64(PQcmdTuples(result));
            PQclear(result);
        }
    }
    while (PGresult* result = PQgetResult(conn_)) {  // PGRES_PIPELINE_SYNC
        const bool sync = PQresultStatus(result) == PGRES_PIPELINE_SYNC;
        PQclear(result);
        if (sync) break;
    }
    PQexitPipelineMode(conn_);
    if (first_error != nullptr) fail_with("query failed", first_error);
}

void PgConnection::exec(const std::string& sql) {
    settle();
    PGresult* result = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail_with("cannot execute SQL", result);
    if (changes_rows(result)) changes_ = parse_int64(PQcmdTuples(result));
    PQclear(result);
}

std::unique_ptr<PgStatement> PgConnection::prepare(std::string_view sql, const std::shared_ptr<PgConnection>& self) {
    settle();
    TranslatedSql translated = postgres_parameters(sql);
    auto known = prepared_.find(translated.sql);
    if (known == prepared_.end()) {
        // Prepared once per connection and SQL text; a statement's server-side plan outlives its PgStatement.
        std::string name = "inferbench_" + std::to_string(prepared_.size());
        PGresult* result = PQprepare(conn_, name.c_str(), translated.sql.c_str(), 0, nullptr);
        if (PQresultStatus(result) != PGRES_COMMAND_OK) fail_with("cannot prepare statement", result);
        PQclear(result);
        known = prepared_.emplace(translated.sql, std::move(name)).first;
    }
    return std::make_unique<PgStatement>(self, known->second, translated.parameters);
}

std::int64_t PgConnection::last_insert_id() {
    settle();
    PGresult* result = PQexec(conn_, "SELECT lastval()");
    if (PQresultStatus(result) != PGRES_TUPLES_OK) fail_with("cannot read the id of the last inserted row", result);
    const std::int64_t id = parse_int64(PQgetvalue(result, 0, 0));
    PQclear(result);
    return id;
}

std::int64_t PgConnection::changes() {
    settle();
    return changes_;
}

bool PgConnection::in_transaction() {
    settle();
    const PGTransactionStatusType status = PQtransactionStatus(conn_);
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR;
}

// ---- PgStatement ----

PgStatement::PgStatement(std::shared_ptr<PgConnection> conn, std::string name, int parameters)
    : conn_(std::move(conn)),
      name_(std::move(name)),
      values_(static_cast<std::size_t>(parameters)),
      is_null_(static_cast<std::size_t>(parameters), 1),
      formats_(static_cast<std::size_t>(parameters), 0) {}

PgStatement::~PgStatement() { discard(); }

void PgStatement::check_index(int index) const {
    if (index < 1 || static_cast<std::size_t>(index) > values_.size())
        conn_->fail("cannot bind parameter " + std::to_string(index), "column index out of range");
}

void PgStatement::bind(int index, std::string value, bool binary) {
    check_index(index);
    // Sent as text, a value ends at its first NUL: PostgreSQL's text cannot hold one, and losing the rest silently
    // would store something other than what was given.
    if (!binary && value.find('\0') != std::string::npos)
        conn_->fail("cannot bind parameter " + std::to_string(index), "text holding a NUL character");
    const auto i = static_cast<std::size_t>(index - 1);
    values_[i] = std::move(value);
    is_null_[i] = 0;
    formats_[i] = binary ? 1 : 0;
}

void PgStatement::bind_null(int index) {
    check_index(index);
    is_null_[static_cast<std::size_t>(index - 1)] = 1;
}

bool PgStatement::send_query() {
    std::vector<const char*> pointers(values_.size());
    std::vector<int> lengths(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) {
        pointers[i] = is_null_[i] != 0 ? nullptr : values_[i].c_str();
        lengths[i] = static_cast<int>(values_[i].size());
    }
    return PQsendQueryPrepared(conn_->conn_, name_.c_str(), static_cast<int>(values_.size()), pointers.data(),
                               lengths.data(), formats_.data(), 0) != 0;
}

void PgStatement::run() { conn_->run(*this); }

void PgStatement::send() {
    conn_->settle();
    if (!send_query()) conn_->fail("query failed", PQerrorMessage(conn_->conn_));
    PQsetSingleRowMode(conn_->conn_);
    state_ = State::reading;
    conn_->reading_ = this;
}

PGresult* PgStatement::next_result() {
    if (state_ == State::reading) return PQgetResult(conn_->conn_);
    if (buffered_.empty()) return nullptr;
    PGresult* result = buffered_.front();
    buffered_.pop_front();
    return result;
}

void PgStatement::buffer_rest() noexcept {
    if (state_ != State::reading) return;
    while (PGresult* result = PQgetResult(conn_->conn_)) buffered_.push_back(result);
    state_ = State::buffered;
    conn_->reading_ = nullptr;
}

void PgStatement::discard() noexcept {
    if (row_ != nullptr) PQclear(std::exchange(row_, nullptr));
    if (state_ == State::reading) {
        while (PGresult* result = PQgetResult(conn_->conn_)) PQclear(result);
        conn_->reading_ = nullptr;
    }
    for (PGresult* result : buffered_) PQclear(result);
    buffered_.clear();
    state_ = State::done;
}

bool PgStatement::step() {
    if (row_ != nullptr) PQclear(std::exchange(row_, nullptr));
    if (state_ == State::idle || state_ == State::done) send();  // after its last row, a step runs it again (SQLite's way)
    PGresult* result = next_result();
    switch (PQresultStatus(result)) {
        case PGRES_SINGLE_TUPLE:
            columns_ = PQnfields(result);
            row_ = result;
            return true;
        case PGRES_TUPLES_OK:
        case PGRES_COMMAND_OK:
            columns_ = PQnfields(result);
            if (changes_rows(result)) conn_->changes_ = parse_int64(PQcmdTuples(result));
            PQclear(result);
            discard();
            return false;
        default: {
            // Read the rest first: the connection must be free for the caller's next command (a ROLLBACK).
            std::vector<PGresult*> rest;
            if (state_ == State::reading) {
                while (PGresult* more = PQgetResult(conn_->conn_)) rest.push_back(more);
                conn_->reading_ = nullptr;
            }
            for (PGresult* more : rest) PQclear(more);
            for (PGresult* more : buffered_) PQclear(more);
            buffered_.clear();
            state_ = State::done;
            conn_->fail_with("query failed", result);
        }
    }
}

void PgStatement::reset() noexcept {
    discard();
    state_ = State::idle;
    std::fill(is_null_.begin(), is_null_.end(), 1);
    std::fill(formats_.begin(), formats_.end(), 0);
}

int PgStatement::column_count() const { return columns_; }

bool PgStatement::column_is_null(int column) const {
    return row_ == nullptr || column < 0 || column >= columns_ || PQgetisnull(row_, 0, column) != 0;
}

std::string_view PgStatement::value(int column) const {
    if (column_is_null(column)) return {};
    return {PQgetvalue(row_, 0, column), static_cast<std::size_t>(PQgetlength(row_, 0, column))};
}

std::int64_t PgStatement::column_int64(int column) const { return parse_int64(value(column)); }

double PgStatement::column_double(int column) const {
    const std::string_view text = value(column);
    if (text == "t") return 1;
    double result = 0;
    std::from_chars(text.data(), text.data() + text.size(), result);
    return result;
}

std::string PgStatement::column_text(int column) const { return std::string(value(column)); }

std::vector<std::byte> PgStatement::column_blob(int column) const {
    if (column_is_null(column)) return {};
    std::size_t size = 0;
    unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(row_, 0, column)), &size);
    if (bytes == nullptr) conn_->fail("cannot read a blob", "out of memory");
    std::vector<std::byte> blob(reinterpret_cast<const std::byte*>(bytes), reinterpret_cast<const std::byte*>(bytes) + size);
    PQfreemem(bytes);
    return blob;
}

}  // namespace inferbench::store::postgres
