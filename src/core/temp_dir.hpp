// A private temporary folder (mkdtemp under the system's temporary directory), removed with everything in
// it when the object goes, so that files a tool or library writes there never outlive their use.
#pragma once

#include <filesystem>
#include <string_view>

namespace inferbench {

class TempDir {
public:
    // "<tmp>/inferbench-<purpose>-XXXXXX"; throws EnvironmentError when it cannot be created.
    explicit TempDir(std::string_view purpose);
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir();

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace inferbench
