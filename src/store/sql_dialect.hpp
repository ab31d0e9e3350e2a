// What differs between SQLite and PostgreSQL in the store's SQL, in one place. Everything else is written once,
// in SQLite's spelling with ?N parameters, and translated here for PostgreSQL.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace inferbench::store {

enum class Dialect { sqlite, postgres };

// A statement's ?N parameters as PostgreSQL's $N (text in quotes left alone), and how many it numbers (the largest N).
struct TranslatedSql {
    std::string sql;
    int parameters = 0;
};
TranslatedSql postgres_parameters(std::string_view sql);

// A migration step, written for SQLite, as PostgreSQL DDL: INTEGER -> BIGINT (SQLite's integers have 64 bits),
// REAL -> DOUBLE PRECISION, BLOB -> BYTEA, an INTEGER PRIMARY KEY -> an identity column, WITHOUT ROWID dropped,
// and SQLite's random hex digits as PostgreSQL's.
std::string postgres_schema_sql(std::string_view sqlite_sql);

class Database;

// The libpq this binary uses, "15.18" (stored with a run's library versions).
std::string libpq_version();

// The schema version: SQLite keeps it in the file header (PRAGMA user_version), PostgreSQL in a table of its own
// (inferbench_schema); 0 for a new store.
int read_schema_version(const Database& db);
// Records `version`, inside the caller's transaction.
void write_schema_version(Database& db, int version);
// How many tables another program put where a new store would go: read together with the schema version, in
// one snapshot, so that a store another process is making meanwhile is not taken for another program's tables.
std::int64_t count_foreign_tables(const Database& db);

}  // namespace inferbench::store
