#include "core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;

// What a file that is not regular is, for "FILE is a directory".
std::string_view kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "is a directory";
    if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
    return "is not a regular file";
}

// Closes a descriptor however the scope is left.
struct Descriptor {
    int fd = -1;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// Flushes a folder's entries (the rename) to disk. Best effort: not every file system supports it.
void sync_folder(const fs::path& folder) {
    Descriptor dir{::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd >= 0) ::fsync(dir.fd);
}

}  // namespace

std::string errno_text(int error) {
    return error == 0 ? std::string("I/O error") : std::generic_category().message(error);
}

std::string read_regular_file(const fs::path& file) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    Descriptor in{::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (in.fd < 0) throw UserError(fmt::format("{}: cannot read: {}", file.string(), errno_text(errno)));
    struct stat info {};
    if (::fstat(in.fd, &info) != 0)
        throw UserError(fmt::format("{}: cannot read: {}", file.string(), errno_text(errno)));
    if (!S_ISREG(info.st_mode)) throw UserError(fmt::format("{} {}", file.string(), kind_of(info.st_mode)));
    std::string content;
    content.reserve(static_cast<std::size_t>(info.st_size));
    char buffer[1 << 16];
    for (;;) {
        const ssize_t got = ::read(in.fd, buffer, sizeof buffer);
        if (got == 0) break;
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw UserError(fmt::format("{}: cannot read: {}", file.string(), errno_text(errno)));
        content.append(buffer, static_cast<std::size_t>(got));
    }
    return content;
}

OutputFile::OutputFile(fs::path target) : target_(std::move(target)) {
    const fs::path parent = target_.parent_path();
    std::string folder = ((parent.empty() ? fs::path(".") : parent) / (std::string(kStagingPrefix) + "XXXXXX")).string();
    if (!::mkdtemp(folder.data())) fail(errno_text(errno));
    folder_ = folder;
    staging_ = folder_ / target_.filename();
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : target_(std::move(other.target_)),
      folder_(std::exchange(other.folder_, {})),
      staging_(std::move(other.staging_)) {}

OutputFile::~OutputFile() {
    if (folder_.empty()) return;
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
}

void OutputFile::fail(std::string_view cause) const {
    throw EnvironmentError(fmt::format("cannot write {}: {}", target_.string(), cause));
}

void OutputFile::write(std::string_view content) {
    Descriptor out{::open(staging_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)};
    if (out.fd < 0) fail(errno_text(errno));
    while (!content.empty()) {
        const ssize_t put = ::write(out.fd, content.data(), content.size());
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) fail(errno_text(put < 0 ? errno : ENOSPC));
        content.remove_prefix(static_cast<std::size_t>(put));
    }
    // A crash after the rename must not leave a complete-looking name with missing contents.
    if (::fsync(out.fd) != 0 && errno != EINVAL) fail(errno_text(errno));
    const int fd = std::exchange(out.fd, -1);
    if (::close(fd) != 0) fail(errno_text(errno));
}

void OutputFile::commit() {
    struct stat staged {};
    if (::lstat(staging_.c_str(), &staged) != 0) fail(fmt::format("nothing was written ({})", errno_text(errno)));
    if (!S_ISREG(staged.st_mode)) fail("the writer left something other than a file");
    struct stat existing {};
    if (::stat(target_.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
        struct stat link {};
        const bool is_link = ::lstat(target_.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
        fail(fmt::format("{} in its place; remove it or write elsewhere",
                         is_link ? "a link to a directory is" : "a directory is"));
    }
    if (::rename(staging_.c_str(), target_.c_str()) != 0) fail(errno_text(errno));
    std::error_code ignored;
    fs::remove(folder_, ignored);
    folder_.clear();
    sync_folder(target_.parent_path());
}

void remove_stale_staging(const fs::path& folder) {
    constexpr auto kStaleAfter = std::chrono::hours(1);
    const auto now = fs::file_time_type::clock::now();
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code entry_ec;
        const bool staging = it->path().filename().string().starts_with(kStagingPrefix) &&
                             it->is_directory(entry_ec) && !it->is_symlink(entry_ec);
        if (staging && now - it->last_write_time(entry_ec) > kStaleAfter && !entry_ec) fs::remove_all(it->path(), entry_ec);
    }
}

void write_file_atomically(const fs::path& file, std::string_view content) {
    OutputFile output(file);
    output.write(content);
    output.commit();
}

}  // namespace inferbench
