#include "store/store_location.hpp"

#include <system_error>

#include "core/error.hpp"

namespace inferbench::store {
namespace {

constexpr std::string_view kSchemes[] = {"postgresql://", "postgres://"};

std::string_view after_scheme(std::string_view url) {
    for (const std::string_view scheme : kSchemes)
        if (url.starts_with(scheme)) return url.substr(scheme.size());
    return {};
}

// "user:secret@host" holds a password; so does a query's "password=..." (libpq reads both), and "sslpassword=..."
// (the client key's).
bool carries_password(std::string_view url) {
    const std::string_view rest = after_scheme(url);
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        if (authority.substr(0, at).find(':') != std::string_view::npos) return true;
    }
    const auto query = rest.find('?');
    if (query == std::string_view::npos) return false;
    std::string_view params = rest.substr(query + 1);
    while (!params.empty()) {
        const std::string_view param = params.substr(0, params.find('&'));
        if (param.starts_with("password=") || param.starts_with("sslpassword=")) return true;
        params.remove_prefix(param.size() == params.size() ? param.size() : param.size() + 1);
    }
    return false;
}

}  // namespace

bool is_postgres_url(std::string_view text) {
    for (const std::string_view scheme : kSchemes)
        if (text.starts_with(scheme)) return true;
    return false;
}

StoreLocation::StoreLocation(const std::filesystem::path& path) : path_(path), postgres_(is_postgres_url(path.native())) {}

StoreLocation::StoreLocation(const std::string& text) : StoreLocation(std::filesystem::path(text)) {}

StoreLocation::StoreLocation(const char* text) : StoreLocation(std::filesystem::path(text)) {}

void StoreLocation::require_no_password() const {
    if (!postgres_ || !carries_password(url())) return;
    // The URL itself is not repeated: it holds the secret.
    throw UserError(
        "--db: the PostgreSQL URL carries a password, which inferbench does not take (it would show in process "
        "lists, shell history and the stored plan); give the URL without it and put the password in PGPASSWORD, "
        "~/.pgpass or the file PGPASSFILE names");
}

bool store_file_missing(const StoreLocation& db) {
    std::error_code ignored;
    return !db.is_postgres() && !std::filesystem::exists(db.path(), ignored);
}

}  // namespace inferbench::store
