#include "store/sqlite.hpp"

#include <climits>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace inferbench::store {
namespace {

[[noreturn]] void throw_error(const std::filesystem::path& path, std::string_view what,
                              std::string_view detail) {
    std::string message = "results database '";
    message += path.string();
    message += "': ";
    message += what;
    message += ": ";
    message += detail;
    throw EnvironmentError(message);
}

bool is_blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n;") == std::string_view::npos;
}

// SQLITE_TRANSIENT spelled without the C-style cast of its macro: SQLite copies the value at bind
// time, so callers may bind temporaries and views whose storage dies before step().
const sqlite3_destructor_type kCopyValue =
    reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));

}  // namespace

// ---- Database ----

Database Database::open(const std::filesystem::path& path, int flags) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        // The OS reason (permissions, missing directory) is what the user can act on.
        const int os_error = db != nullptr ? sqlite3_system_errno(db) : 0;
        if (os_error != 0) {
            detail += " (";
            detail += std::strerror(os_error);
            detail += ")";
        }
        sqlite3_close_v2(db);
        throw_error(path, "cannot open", detail);
    }
    sqlite3_extended_result_codes(db, 1);
    return Database(db, path);
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

Database::~Database() { close(); }

void Database::close() noexcept {
    // _v2: statements still alive keep the connection until they are finalized, instead of failing.
    if (db_ != nullptr) sqlite3_close_v2(std::exchange(db_, nullptr));
}

void Database::exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        const std::string detail = error != nullptr ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        throw_error(path_, "cannot execute SQL", detail);
    }
}

Statement Database::prepare(std::string_view sql) const {
    if (sql.size() > static_cast<std::size_t>(INT_MAX)) {
        throw_error(path_, "cannot prepare statement", "SQL too long");
    }
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
    if (rc != SQLITE_OK) fail("cannot prepare statement");
    Statement statement(stmt, path_);  // owns stmt from here on, also if we throw below
    if (stmt == nullptr) throw_error(path_, "cannot prepare statement", "empty SQL");
    const auto consumed = static_cast<std::size_t>(tail - sql.data());
    if (!is_blank(sql.substr(consumed))) {
        throw_error(path_, "cannot prepare statement", "more than one SQL statement given");
    }
    return statement;
}

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::int64_t Database::changes() const { return sqlite3_changes64(db_); }

bool Database::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

void Database::fail(std::string_view what) const {
    throw_error(path_, what, db_ != nullptr ? sqlite3_errmsg(db_) : "database is closed");
}

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_path_(std::move(other.db_path_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        stmt_ = std::exchange(other.stmt_, nullptr);
        db_path_ = std::move(other.db_path_);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::fail(std::string_view what) const {
    // Read the message before reset(): the next call on the connection may overwrite it.
    const std::string detail = sqlite3_errmsg(sqlite3_db_handle(stmt_));
    sqlite3_reset(stmt_);
    throw_error(db_path_, what, detail);
}

void Statement::check_bind(int rc, int index) const {
    if (rc != SQLITE_OK) fail("cannot bind parameter " + std::to_string(index));
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
    check_bind(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_double(int index, double value) {
    check_bind(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
    check_bind(
        sqlite3_bind_text64(stmt_, index, value.data(), value.size(), kCopyValue, SQLITE_UTF8),
        index);
    return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::byte> value) {
    // A null pointer would bind NULL, not an empty blob.
    static constexpr std::byte kEmpty{};
    const void* data = value.empty() ? &kEmpty : value.data();
    check_bind(sqlite3_bind_blob64(stmt_, index, data, value.size(), kCopyValue), index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    check_bind(sqlite3_bind_null(stmt_, index), index);
    return *this;
}

Statement& Statement::bind_optional_int64(int index, std::optional<std::int64_t> value) {
    return value ? bind_int64(index, *value) : bind_null(index);
}

Statement& Statement::bind_optional_double(int index, std::optional<double> value) {
    return value ? bind_double(index, *value) : bind_null(index);
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("query failed");
}

void Statement::run() {
    if (step()) {
        sqlite3_reset(stmt_);
        throw_error(db_path_, "query failed", "statement returned rows where none were expected");
    }
}

void Statement::reset() noexcept {
    // sqlite3_reset repeats the last step's error code; that error was already reported by step().
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

bool Statement::column_is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
    return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
    // Pointer first, then size: that order is what SQLite documents as safe.
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return std::string(reinterpret_cast<const char*>(text), size);
}

std::vector<std::byte> Statement::column_blob(int column) const {
    const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_, column));
    if (data == nullptr) return {};
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return std::vector<std::byte>(data, data + size);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
    if (column_is_null(column)) return std::nullopt;
    return column_int64(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
    if (column_is_null(column)) return std::nullopt;
    return column_double(column);
}

// ---- Transaction ----

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    // Some errors (disk full, I/O) make SQLite roll back on its own; then there is nothing to undo.
    if (!done_ && db_.in_transaction()) {
        sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    done_ = true;
}

}  // namespace inferbench::store
