#include "store/sqlite.hpp"

#include "store/postgres.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>
#include <utility>

namespace inferbench::store {
namespace {

constexpr std::chrono::milliseconds kLongestPause{50};

[[noreturn]] void throw_error(const std::filesystem::path& path, std::string_view what,
                              std::string_view detail, int code = SQLITE_ERROR, int os_error = 0) {
    std::string message = "results database '";
    message += path.string();
    message += "': ";
    message += what;
    message += ": ";
    message += detail;
    throw DatabaseError(message, code, os_error);
}

// The errno behind a failed call, where SQLite says the OS refused.
int os_error_of(sqlite3* db) {
    const int primary = sqlite3_extended_errcode(db) & 0xff;
    const bool from_os = primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN || primary == SQLITE_FULL;
    return from_os ? sqlite3_system_errno(db) : 0;
}

// SQLite's message, with the OS reason where the OS refused (it names permissions, space, ...).
std::string error_detail(sqlite3* db) {
    std::string detail = sqlite3_errmsg(db);
    const int primary = sqlite3_extended_errcode(db) & 0xff;
    const int os_error = os_error_of(db);
    if (primary != SQLITE_FULL && os_error != 0) {
        detail += " (";
        detail += std::strerror(os_error);
        detail += ")";
    }
    return detail;
}

// Why `path` cannot be opened as asked, as the OS says it (0: the OS does not object). SQLite retries
// a failed read-write open read-only, so its own errno is often that second attempt's: ENOENT for a
// file it was not allowed to create.
int os_refusal(const std::filesystem::path& path, int flags) {
    const bool write = (flags & SQLITE_OPEN_READWRITE) != 0;
    std::error_code error;
    if (std::filesystem::exists(path, error)) return ::access(path.c_str(), write ? R_OK | W_OK : R_OK) == 0 ? 0 : errno;
    if (error) return error.value();
    if ((flags & SQLITE_OPEN_CREATE) == 0) return ENOENT;
    const std::filesystem::path parent = path.parent_path().empty() ? "." : path.parent_path();
    return ::access(parent.c_str(), W_OK | X_OK) == 0 ? 0 : errno;
}

// "file:/abs/path?query", the path percent-encoded so that '?', '#' and '%' in it stay literal.
std::string file_uri(const std::filesystem::path& path, std::string_view query) {
    std::string uri = "file:";
    for (const char c : std::filesystem::absolute(path).string()) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) != 0 || std::strchr("/-._~", c) != nullptr) {
            uri += c;
        } else {
            static constexpr char kHex[] = "0123456789ABCDEF";
            uri += '%';
            uri += kHex[byte >> 4];
            uri += kHex[byte & 0xf];
        }
    }
    uri += '?';
    uri += query;
    return uri;
}

bool is_blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n;") == std::string_view::npos;
}

// SQLITE_TRANSIENT spelled without the C-style cast of its macro: SQLite copies the value at bind
// time, so callers may bind temporaries and views whose storage dies before step().
const sqlite3_destructor_type kCopyValue =
    reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));

}  // namespace

bool DatabaseError::disk_full() const {
    return primary_code() == SQLITE_FULL || os_error_ == ENOSPC || os_error_ == EDQUOT;
}

// ---- Database ----

// Lives on the heap beside the connection: SQLite's busy handler keeps a pointer to it.
struct Database::Waiting {
    std::filesystem::path path;
    WaitPolicy policy;
    std::chrono::steady_clock::time_point since;
    bool noticed = false;
    bool give_up_at_start = false;

    // One pause of a wait for the write lock (`retries` from 0 for each wait); false: give up.
    bool pause(int retries) {
        const auto now = std::chrono::steady_clock::now();
        const bool give_up = policy.give_up && policy.give_up();
        if (retries == 0) {
            since = now;
            give_up_at_start = give_up;
        }
        if (give_up && !give_up_at_start) return false;
        if (!noticed && now - since >= policy.notice_after) {
            noticed = true;
            if (policy.on_long_wait) policy.on_long_wait(path);
        }
        // 1, 2, 4, ... ms up to kLongestPause: quick when the other commit is short, cheap when it is long.
        const auto doubling = std::chrono::milliseconds(std::int64_t{1} << std::min(retries, 6));
        std::this_thread::sleep_for(std::min(doubling, kLongestPause));
        return true;
    }
};

Database Database::open(const std::filesystem::path& path, int flags, std::string_view uri_query) {
    sqlite3* db = nullptr;
    const std::string name = uri_query.empty() ? path.string() : file_uri(path, uri_query);
    // NOMUTEX: a connection serves one thread (sqlite.hpp), so SQLite need not lock it on every call
    // (7% of the time of inserting millions of rows went to those locks).
    const int rc = sqlite3_open_v2(name.c_str(), &db,
                                   flags | SQLITE_OPEN_NOMUTEX | (uri_query.empty() ? 0 : SQLITE_OPEN_URI), nullptr);
    // A file SQLite may not write is opened read-only without a word; a writer must hear it now.
    const bool refused_write = rc == SQLITE_OK && (flags & SQLITE_OPEN_READWRITE) != 0 &&
                               sqlite3_db_readonly(db, "main") == 1;
    if (rc != SQLITE_OK || refused_write) {
        // The OS reason (permissions, read-only file system, missing directory) is what the user can act on.
        const int os_error = os_refusal(path, flags);
        const int code = db != nullptr ? sqlite3_extended_errcode(db) : rc;
        std::string detail = refused_write ? "cannot write to the file" : db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        if (os_error != 0) {
            detail += " (";
            detail += std::strerror(os_error);
            detail += ")";
        } else if (db != nullptr) {
            detail = error_detail(db);
        }
        sqlite3_close_v2(db);
        throw_error(path, "cannot open", detail, refused_write ? SQLITE_READONLY : code, os_error);
    }
    sqlite3_extended_result_codes(db, 1);
    return Database(db, path);
}

Database Database::open_postgres(const std::string& url) {
    auto connection = postgres::PgConnection::connect(url, url);
    std::filesystem::path reached = connection->reached();
    return Database(std::move(connection), std::move(reached));
}

Database::Database(std::shared_ptr<postgres::PgConnection> pg, std::filesystem::path path)
    : path_(std::move(path)), waiting_(std::make_unique<Waiting>()), pg_(std::move(pg)) {
    waiting_->path = path_;
}

Database::Database(sqlite3* db, std::filesystem::path path)
    : db_(db), path_(std::move(path)), waiting_(std::make_unique<Waiting>()) {
    waiting_->path = path_;
    sqlite3_busy_handler(db_, &Database::on_busy, waiting_.get());
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      waiting_(std::move(other.waiting_)),
      pg_(std::move(other.pg_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
        waiting_ = std::move(other.waiting_);
        pg_ = std::move(other.pg_);
    }
    return *this;
}

void Database::set_wait_policy(WaitPolicy policy) { waiting_->policy = std::move(policy); }

bool Database::wait_for_writer(int retries) { return waiting_->pause(retries); }

int Database::on_busy(void* waiting, int retries) {
    try {
        return static_cast<Waiting*>(waiting)->pause(retries) ? 1 : 0;
    } catch (...) {
        return 0;  // nothing may cross SQLite's C frames; a busy error follows
    }
}

Database::~Database() { close(); }

void Database::close() noexcept {
    // _v2: statements still alive keep the connection until they are finalized, instead of failing.
    if (db_ != nullptr) sqlite3_close_v2(std::exchange(db_, nullptr));
    pg_.reset();  // the server connection closes with its last statement
}

void Database::exec(const std::string& sql) {
    if (pg_) return pg_->exec(sql);
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        std::string detail = error != nullptr ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        if (detail == sqlite3_errmsg(db_)) detail = error_detail(db_);
        throw_error(path_, "cannot execute SQL", detail, sqlite3_extended_errcode(db_), os_error_of(db_));
    }
}

Statement Database::prepare(std::string_view sql) const {
    if (pg_) return Statement(pg_->prepare(sql, pg_));
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

std::int64_t Database::last_insert_rowid() const {
    return pg_ ? pg_->last_insert_id() : sqlite3_last_insert_rowid(db_);
}

std::int64_t Database::changes() const { return pg_ ? pg_->changes() : sqlite3_changes64(db_); }

bool Database::in_transaction() const { return pg_ ? pg_->in_transaction() : sqlite3_get_autocommit(db_) == 0; }

bool Database::read_only() const { return !pg_ && sqlite3_db_readonly(db_, "main") == 1; }

void Database::fail(std::string_view what) const {
    if (pg_) pg_->fail(what, "no row where one was expected");
    if (db_ == nullptr) throw_error(path_, what, "database is closed", SQLITE_MISUSE);
    throw_error(path_, what, error_detail(db_), sqlite3_extended_errcode(db_), os_error_of(db_));
}

// ---- Statement ----

Statement::Statement(sqlite3_stmt* stmt, std::filesystem::path db_path) : stmt_(stmt), db_path_(std::move(db_path)) {}

Statement::Statement(std::unique_ptr<postgres::PgStatement> pg) : pg_(std::move(pg)) {}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_path_(std::move(other.db_path_)), pg_(std::move(other.pg_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        stmt_ = std::exchange(other.stmt_, nullptr);
        db_path_ = std::move(other.db_path_);
        pg_ = std::move(other.pg_);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::fail(std::string_view what) const {
    // Read the message before reset(): the next call on the connection may overwrite it.
    sqlite3* db = sqlite3_db_handle(stmt_);
    const std::string detail = error_detail(db);
    const int code = sqlite3_extended_errcode(db);
    const int os_error = os_error_of(db);
    sqlite3_reset(stmt_);
    throw_error(db_path_, what, detail, code, os_error);
}

void Statement::check_bind(int rc, int index) const {
    if (rc != SQLITE_OK) fail("cannot bind parameter " + std::to_string(index));
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
    if (pg_) {
        pg_->bind(index, std::to_string(value));
        return *this;
    }
    check_bind(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_double(int index, double value) {
    if (pg_) {
        char text[32];
        const auto end = std::to_chars(text, text + sizeof text, value).ptr;  // shortest text that reads back exactly
        pg_->bind(index, std::string(text, end));
        return *this;
    }
    check_bind(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
    if (pg_) {
        pg_->bind(index, std::string(value));
        return *this;
    }
    check_bind(
        sqlite3_bind_text64(stmt_, index, value.data(), value.size(), kCopyValue, SQLITE_UTF8),
        index);
    return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::byte> value) {
    if (pg_) {
        pg_->bind(index, std::string(reinterpret_cast<const char*>(value.data()), value.size()), true);
        return *this;
    }
    // A null pointer would bind NULL, not an empty blob.
    static constexpr std::byte kEmpty{};
    const void* data = value.empty() ? &kEmpty : value.data();
    check_bind(sqlite3_bind_blob64(stmt_, index, data, value.size(), kCopyValue), index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    if (pg_) {
        pg_->bind_null(index);
        return *this;
    }
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
    if (pg_) return pg_->step();
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("query failed");
}

void Statement::run() {
    if (pg_) return pg_->run();
    if (step()) {
        sqlite3_reset(stmt_);
        throw_error(db_path_, "query failed", "statement returned rows where none were expected");
    }
}

void Statement::reset() noexcept {
    if (pg_) return pg_->reset();
    // sqlite3_reset repeats the last step's error code; that error was already reported by step().
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return pg_ ? pg_->column_count() : sqlite3_column_count(stmt_); }

bool Statement::column_is_null(int column) const {
    return pg_ ? pg_->column_is_null(column) : sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
    return pg_ ? pg_->column_int64(column) : sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const {
    return pg_ ? pg_->column_double(column) : sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
    if (pg_) return pg_->column_text(column);
    // Pointer first, then size: that order is what SQLite documents as safe.
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return std::string(reinterpret_cast<const char*>(text), size);
}

std::vector<std::byte> Statement::column_blob(int column) const {
    if (pg_) return pg_->column_blob(column);
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

namespace {
// The advisory lock of one_at_a_time transactions: any fixed number, the same in every inferbench.
constexpr std::string_view kOneWriterLock = "SELECT pg_advisory_xact_lock(7526810944461324849)";
}  // namespace

Transaction::Transaction(Database& db, Writers writers) : db_(db) {
    if (db_.dialect() == Dialect::sqlite) {
        db_.exec("BEGIN IMMEDIATE");
        return;
    }
    db_.exec(writers == Writers::one_at_a_time ? "BEGIN; " + std::string(kOneWriterLock) : "BEGIN");
}

Transaction::~Transaction() {
    // Some errors (disk full, I/O) make SQLite roll back on its own; then there is nothing to undo.
    if (done_) return;
    if (db_.dialect() == Dialect::sqlite) {
        if (db_.in_transaction()) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        return;
    }
    try {
        db_.in_transaction();  // reads the answers of pipelined statements: the error among them is already known
    } catch (const DatabaseError&) {
    }
    try {
        if (db_.in_transaction()) db_.exec("ROLLBACK");
    } catch (const DatabaseError&) {
        // A lost connection: the server rolls the transaction back itself.
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    done_ = true;
}

}  // namespace inferbench::store
