// Which kind of results store a test binary's store tests run against: SQLite files (the default) or, where the
// environment says INFERBENCH_TEST_STORE=postgres, a fresh database of one PostgreSQL server per test binary
// (started on first use, stopped when the binary ends, also after failed tests: a global test environment).
// CTest runs the store tests both ways (tests/store/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "common/postgres_server.hpp"
#include "store/sqlite.hpp"
#include "store/store_location.hpp"

namespace inferbench::testing {

inline bool testing_postgres() {
    const char* kind = std::getenv("INFERBENCH_TEST_STORE");
    return kind != nullptr && std::string_view(kind) == "postgres";
}

class PostgresEnvironment : public ::testing::Environment {
public:
    static PostgresServer& server() {
        if (!server_) server_ = std::make_unique<PostgresServer>();
        return *server_;
    }
    void TearDown() override { server_.reset(); }

private:
    static inline std::unique_ptr<PostgresServer> server_;
};

// Registered once per binary, before main runs the tests.
inline ::testing::Environment* const kPostgresEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

// Where a test's store goes: `file` itself for SQLite, or a new empty PostgreSQL database's URL (held in a path, as
// --db holds either).
inline std::filesystem::path store_under_test(const std::filesystem::path& file) {
    if (!testing_postgres()) return file;
    return PostgresEnvironment::server().fresh_database();
}

// A connection to the store at `location` for a test's own SQL, in either dialect.
inline store::Database open_store_database(const store::StoreLocation& location) {
    if (location.is_postgres()) return store::Database::open_postgres(location.url());
    return store::Database::open(location.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
}

// Runs a test's SQL written for SQLite on either store: on PostgreSQL, "PRAGMA user_version = N" sets the version
// table, "PRAGMA foreign_keys = ON" goes (always on there), and "PRAGMA ignore_check_constraints = ON; UPDATE T SET
// C = ..." drops T's CHECK on C first (PostgreSQL's name for it: T_C_check), to store a value inferbench refuses.
inline void exec_in_dialect(store::Database& db, const std::string& sql) {
    if (db.dialect() == store::Dialect::sqlite) return db.exec(sql);
    std::string text = std::regex_replace(sql, std::regex(R"(PRAGMA user_version = (\d+))"),
                                          "UPDATE inferbench_schema SET version = $1");
    text = std::regex_replace(text, std::regex(R"(PRAGMA foreign_keys = ON;?)"), "");
    text = std::regex_replace(text, std::regex(R"(PRAGMA ignore_check_constraints = ON; UPDATE (\w+) SET (\w+))"),
                              "ALTER TABLE $1 DROP CONSTRAINT $1_$2_check; UPDATE $1 SET $2");
    if (text.find_first_not_of(" ;") != std::string::npos) db.exec(text);
}

}  // namespace inferbench::testing
