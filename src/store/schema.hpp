// The results database schema: connection settings and the ordered list of migrations.
#pragma once

#include "store/sqlite.hpp"

namespace inferbench::store {

// The newest schema version this binary knows (the number of migration steps).
int known_schema_version();

// PRAGMA user_version: 0 for a new, empty file.
int schema_version(const Database& db);

// Per-connection settings (busy timeout, foreign keys, WAL, synchronous=NORMAL), then every pending
// migration, each in its own transaction. Returns the schema version afterwards. Throws
// EnvironmentError, before changing anything, when the file was written by a newer inferbench.
int prepare_schema(Database& db);

}  // namespace inferbench::store
