#include "runner/wire/trace_buffer.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::runner {
namespace {

constexpr std::size_t kHeaderBytes = 64;  // records start on their own cache line
static_assert(sizeof(TraceHeader) <= kHeaderBytes);

std::size_t bytes_for(std::int64_t capacity) {
    return kHeaderBytes + static_cast<std::size_t>(capacity) * sizeof(IterationRecord);
}

void* map_shared(int fd, std::size_t bytes) {
    void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED)
        throw EnvironmentError(fmt::format("cannot map the iteration trace ({} bytes): {}", bytes, std::strerror(errno)));
    return mapping;
}

}  // namespace

TraceBuffer::TraceBuffer(int fd, void* mapping, std::size_t bytes)
    : fd_(fd),
      mapping_(mapping),
      bytes_(bytes),
      header_(static_cast<TraceHeader*>(mapping)),
      records_(reinterpret_cast<IterationRecord*>(static_cast<char*>(mapping) + kHeaderBytes)) {}

TraceBuffer TraceBuffer::create(std::int64_t capacity) {
    capacity = std::max<std::int64_t>(capacity, 1);
    const int fd = memfd_create("inferbench-trace", 0);
    if (fd < 0) throw EnvironmentError(fmt::format("memfd_create failed: {}", std::strerror(errno)));
    const std::size_t bytes = bytes_for(capacity);
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        const int err = errno;
        close(fd);
        throw EnvironmentError(fmt::format("cannot size the iteration trace: {}", std::strerror(err)));
    }
    void* mapping = map_shared(fd, bytes);
    auto* header = new (mapping) TraceHeader();
    header->capacity = capacity;
    return TraceBuffer(fd, mapping, bytes);
}

TraceBuffer TraceBuffer::create_ring(std::int64_t capacity) {
    TraceBuffer buffer = create(capacity);
    buffer.header_->ring = 1;
    return buffer;
}

TraceBuffer TraceBuffer::attach(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kHeaderBytes)
        throw EnvironmentError("the iteration trace descriptor is not valid");
    const auto bytes = static_cast<std::size_t>(st.st_size);
    void* mapping = map_shared(fd, bytes);
    TraceBuffer buffer(fd, mapping, bytes);
    if (bytes < bytes_for(buffer.header_->capacity)) throw EnvironmentError("the iteration trace is truncated");
    return buffer;
}

TraceBuffer::TraceBuffer(TraceBuffer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      header_(std::exchange(other.header_, nullptr)),
      records_(std::exchange(other.records_, nullptr)) {}

TraceBuffer& TraceBuffer::operator=(TraceBuffer&& other) noexcept {
    // Swap: `other` releases what this buffer held when it is destroyed.
    std::swap(fd_, other.fd_);
    std::swap(mapping_, other.mapping_);
    std::swap(bytes_, other.bytes_);
    std::swap(header_, other.header_);
    std::swap(records_, other.records_);
    return *this;
}

TraceBuffer::~TraceBuffer() {
    if (mapping_) munmap(mapping_, bytes_);
    if (fd_ >= 0) close(fd_);
}

std::span<const IterationRecord> TraceBuffer::published() const {
    const std::int64_t count = std::min(header_->published.load(std::memory_order_acquire), header_->capacity);
    return {records_, static_cast<std::size_t>(count)};
}

void TraceBuffer::prefault(std::int64_t count) {
    count = std::clamp<std::int64_t>(count, 0, header_->capacity);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    auto* begin = reinterpret_cast<volatile char*>(records_);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(IterationRecord);
    for (std::size_t offset = 0; offset < bytes; offset += page) begin[offset] = 0;
}

}  // namespace inferbench::runner
