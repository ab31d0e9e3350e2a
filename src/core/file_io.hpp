// Files a user names: an input read only when it is a regular file, and an output that is complete
// or absent. An output is written in a private folder next to it and renamed over its final name
// only when complete, so a full disk leaves no truncated file, and a link planted at the final name is
// replaced, never written through.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace inferbench {

// The whole content of a regular file. Throws UserError naming the file and why: "is a directory",
// "is a FIFO, not a regular file", or the system's reason (No such file or directory, Permission denied).
std::string read_regular_file(const std::filesystem::path& file);

class OutputFile {
public:
    // Creates the private folder (mode 0700, hidden, beside `target`); throws EnvironmentError naming
    // `target` when it cannot.
    explicit OutputFile(std::filesystem::path target);
    OutputFile(OutputFile&& other) noexcept;
    OutputFile& operator=(OutputFile&&) = delete;
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile();  // removes what was not committed

    const std::filesystem::path& target() const { return target_; }
    // Where the content goes before commit(): a writer that opens files by name (the workbooks,
    // gnuplot) is given this path. Nobody else can enter its folder, so nothing can be planted there.
    const std::filesystem::path& staging_path() const { return staging_; }

    // Writes `content` to staging_path(), created anew (O_EXCL | O_NOFOLLOW) and synced.
    void write(std::string_view content);
    // Renames staging_path() over target(). An existing file or link there is replaced (the link's
    // target is left alone); a directory there, or a link to one, is refused.
    void commit();

    // Throws EnvironmentError "cannot write <target>: <cause>".
    [[noreturn]] void fail(std::string_view cause) const;

private:
    std::filesystem::path target_;
    std::filesystem::path folder_;  // empty once committed or moved from
    std::filesystem::path staging_;
};

// The name prefix of staging folders (OutputFile's, and any writer's that renames a whole folder into place).
inline constexpr std::string_view kStagingPrefix = ".inferbench-tmp-";

// Removes the staging folders that writers killed mid-write left in `folder`. Only those older than an
// hour: a live writer (in this or another process) finishes long before.
void remove_stale_staging(const std::filesystem::path& folder);

// OutputFile(file).write(content) and commit().
void write_file_atomically(const std::filesystem::path& file, std::string_view content);

// The system's text for an errno value ("No space left on device").
std::string errno_text(int error);

}  // namespace inferbench
