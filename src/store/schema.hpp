// The results database schema: connection settings and the ordered list of migrations.
#pragma once

#include "store/sqlite.hpp"

namespace inferbench::store {

// The newest schema version this binary knows (the number of migration steps).
int known_schema_version();

// PRAGMA user_version: 0 for a new, empty file.
int schema_version(const Database& db);

// Per-connection settings (foreign keys, WAL, synchronous=NORMAL), then every pending migration, each
// in its own transaction. Returns the schema version afterwards. Throws EnvironmentError, before
// changing anything, when the file was written by a newer inferbench or has a version none writes.
int prepare_schema(Database& db);

// For a connection that cannot write: returns the schema version, or throws EnvironmentError where
// the file needs migrations (or is newer, or has a version no inferbench writes).
int check_read_only_schema(const Database& db);

// Throws EnvironmentError unless the file already is an inferbench results store (a schema version above 0):
// an empty file or another program's SQLite database is refused by the commands that only read, before
// anything is written to it.
void require_store(const Database& db);

// Throws EnvironmentError where a file that is not yet an inferbench store already holds another program's
// tables: a store is created in a new or empty file only.
void require_no_foreign_tables(const Database& db);

// Throws EnvironmentError, saying how to recover, unless PRAGMA quick_check finds the file intact.
// Run before writing: appending to a damaged file would bury the new results in it.
void require_intact(const Database& db);

}  // namespace inferbench::store
