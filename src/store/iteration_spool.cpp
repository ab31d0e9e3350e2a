#include "store/iteration_spool.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::store {
namespace {

std::string temporary_folder() {
    const char* tmpdir = std::getenv("TMPDIR");
    return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

[[noreturn]] void fail(const std::string& what, int error) {
    throw EnvironmentError(
        fmt::format("iterations kept in {}: {}: {}{}", temporary_folder(), what, std::strerror(error),
                    error == ENOSPC ? "; free space there or set TMPDIR to a folder with room" : ""));
}

constexpr std::size_t kRecordBytes = sizeof(IterationRecord);

// pread or pwrite until all `left` bytes moved: 0, or the errno of the failure (`short_errno` where the call
// moved nothing: the end of the file, or a full disk).
template <typename Call, typename Byte>
int transfer_all(Call call, int fd, Byte* data, std::size_t left, off_t offset, int short_errno) {
    while (left > 0) {
        const ssize_t moved = call(fd, data, left, offset);
        if (moved < 0 && errno == EINTR) continue;
        if (moved <= 0) return moved < 0 ? errno : short_errno;
        data += moved;
        left -= static_cast<std::size_t>(moved);
        offset += moved;
    }
    return 0;
}

}  // namespace

IterationSpool::IterationSpool() {
    fd_ = ::open(temporary_folder().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) fail("cannot make a temporary file", errno);
}

IterationSpool::~IterationSpool() {
    if (fd_ >= 0) ::close(fd_);
}

void IterationSpool::append(std::span<const IterationRecord> records) {
    const auto offset = static_cast<off_t>(static_cast<std::size_t>(count_) * kRecordBytes);
    const auto* data = reinterpret_cast<const char*>(records.data());
    if (const int error = transfer_all(::pwrite, fd_, data, records.size_bytes(), offset, ENOSPC))
        fail("cannot write", error);
    count_ += static_cast<std::int64_t>(records.size());
}

std::optional<IterationRecord> IterationSpool::read_one(std::int64_t index) const {
    if (index < 0 || index >= count_) return std::nullopt;
    IterationRecord record;
    const auto offset = static_cast<off_t>(static_cast<std::size_t>(index) * kRecordBytes);
    if (const int error = transfer_all(::pread, fd_, reinterpret_cast<char*>(&record), kRecordBytes, offset, EIO))
        fail("cannot read", error);
    return record;
}

std::optional<IterationRecord> IterationSpool::front() const { return read_one(0); }

std::optional<IterationRecord> IterationSpool::back() const { return read_one(count_ - 1); }

void IterationSpool::for_each_chunk(const std::function<void(std::span<const IterationRecord>)>& take) const {
    std::vector<IterationRecord> chunk;
    for (std::int64_t first = 0; first < count_;) {
        const auto n = static_cast<std::size_t>(std::min<std::int64_t>(count_ - first, kChunkRecords));
        chunk.resize(n);
        const auto offset = static_cast<off_t>(static_cast<std::size_t>(first) * kRecordBytes);
        if (const int error = transfer_all(::pread, fd_, reinterpret_cast<char*>(chunk.data()), n * kRecordBytes, offset, EIO))
            fail("cannot read", error);
        take(chunk);
        first += static_cast<std::int64_t>(n);
    }
}

std::vector<IterationRecord> IterationSpool::read_all() const {
    std::vector<IterationRecord> all;
    all.reserve(static_cast<std::size_t>(count_));
    for_each_chunk([&](std::span<const IterationRecord> chunk) { all.insert(all.end(), chunk.begin(), chunk.end()); });
    return all;
}

}  // namespace inferbench::store
