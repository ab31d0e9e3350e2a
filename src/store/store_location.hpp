// Where a results store lives: a SQLite file, or a PostgreSQL database named by a libpq URL
// (postgresql://user@host:port/db or postgres://...; parts left out come from PGHOST, PGPORT, PGUSER,
// PGDATABASE as libpq reads them). A URL never carries a password: libpq takes it from PGPASSWORD,
// ~/.pgpass or the file PGPASSFILE names, so that it shows in no process list, shell history or store.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace inferbench::store {

class StoreLocation {
public:
    // A text that starts with postgresql:// or postgres:// is a PostgreSQL URL; anything else a file path.
    // Implicit: every place that named a store by its file names one this way.
    StoreLocation(const std::filesystem::path& path);  // NOLINT(google-explicit-constructor)
    StoreLocation(const std::string& text);            // NOLINT(google-explicit-constructor)
    StoreLocation(const char* text);                   // NOLINT(google-explicit-constructor)

    bool is_postgres() const { return postgres_; }
    // The file of a SQLite store; for PostgreSQL the URL (what messages name), never holding a secret.
    const std::filesystem::path& path() const { return path_; }
    // The URL given to libpq.
    const std::string& url() const { return path_.native(); }

    // Throws UserError where the URL carries a password, saying where to put it instead.
    void require_no_password() const;

private:
    std::filesystem::path path_;
    bool postgres_ = false;
};

// True for postgresql://... and postgres://...
bool is_postgres_url(std::string_view text);

// True where `db` names a SQLite file that does not exist (a PostgreSQL URL always "exists": its server
// says otherwise when connected to).
bool store_file_missing(const StoreLocation& db);

}  // namespace inferbench::store
