#include "core/temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench {

TempDir::TempDir(std::string_view purpose) {
    std::error_code ec;
    const auto base = std::filesystem::temp_directory_path(ec);
    std::string pattern =
        ((ec ? std::filesystem::path("/tmp") : base) / fmt::format("inferbench-{}-XXXXXX", purpose)).string();
    if (!mkdtemp(pattern.data()))
        throw EnvironmentError(
            fmt::format("cannot create a temporary folder {} for {}: {} (set TMPDIR to a writable folder)", pattern,
                        purpose, std::strerror(errno)));
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

}  // namespace inferbench
