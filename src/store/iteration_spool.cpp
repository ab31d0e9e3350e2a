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

}  // namespace

IterationSpool::IterationSpool() {
    fd_ = ::open(temporary_folder().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) fail("cannot make a temporary file", errno);
}

IterationSpool::~IterationSpool() {
    if (fd_ >= 0) ::close(fd_);
}

void IterationSpool::append(std::span<const IterationRecord> records) {
    const auto* data = reinterpret_cast<const char*>(records.data());
    std::size_t left = records.size_bytes();
    auto offset = static_cast<off_t>(static_cast<std::size_t>(count_) * kRecordBytes);
    while (left > 0) {
        const ssize_t written = ::pwrite(fd_, data, left, offset);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) fail("cannot write", written < 0 ? errno : ENOSPC);
        data += written;
        left -= static_cast<std::size_t>(written);
        offset += written;
    }
    count_ += static_cast<std::int64_t>(records.size());
}

std::optional<IterationRecord> IterationSpool::read_one(std::int64_t index) const {
    if (index < 0 || index >= count_) return std::nullopt;
    IterationRecord record;
    const auto offset = static_cast<off_t>(static_cast<std::size_t>(index) * kRecordBytes);
    if (::pread(fd_, &record, kRecordBytes, offset) != static_cast<ssize_t>(kRecordBytes)) fail("cannot read", errno);
    return record;
}

std::optional<IterationRecord> IterationSpool::front() const { return read_one(0); }

std::optional<IterationRecord> IterationSpool::back() const { return read_one(count_ - 1); }

void IterationSpool::for_each_chunk(const std::function<void(std::span<const IterationRecord>)>& take) const {
    std::vector<IterationRecord> chunk;
    for (std::int64_t first = 0; first < count_;) {
        const auto n = static_cast<std::size_t>(std::min<std::int64_t>(count_ - first, kChunkRecords));
        chunk.resize(n);
        auto* data = reinterpret_cast<char*>(chunk.data());
        std::size_t left = n * kRecordBytes;
        auto offset = static_cast<off_t>(static_cast<std::size_t>(first) * kRecordBytes);
        while (left > 0) {
            const ssize_t got = ::pread(fd_, data, left, offset);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) fail("cannot read", got < 0 ? errno : EIO);
            data += got;
            left -= static_cast<std::size_t>(got);
            offset += got;
        }
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
