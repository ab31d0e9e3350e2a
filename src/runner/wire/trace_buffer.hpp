// Per-iteration records shared between a worker and its orchestrator through one memfd mapping.
// The worker writes records and publishes the count with a release store; nothing in its measured
// loop does I/O. The orchestrator reads what was published at any time, so even a worker killed
// mid-run leaves every completed iteration behind.
// A ring (the harness's single_stream loop) holds a fixed number of records whatever the loop's length:
// record i is at i % capacity, and the orchestrator takes records out as they come (runner/orchestrator/trace_drain),
// saying how far it took them in `consumed`; a worker that finds the ring full waits, untimed, for room.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "core/spec.hpp"

namespace inferbench::runner {

struct TraceHeader {
    std::atomic<std::int64_t> published{0};    // records [0, published) are complete
    std::atomic<std::int32_t> stop_requested{0};  // set by the orchestrator on Ctrl-C
    std::int32_t ring = 0;                        // 1: a ring, drained as it fills
    std::int64_t capacity = 0;
    std::atomic<std::int64_t> consumed{0};        // a ring's records [0, consumed) were taken out
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

class TraceBuffer {
public:
    // Orchestrator side: a new shared buffer for `capacity` records (pages are allocated on touch).
    static TraceBuffer create(std::int64_t capacity);
    // Orchestrator side: a ring of `capacity` records, for a loop of any length.
    static TraceBuffer create_ring(std::int64_t capacity);
    // Worker side: maps the buffer behind an inherited file descriptor.
    static TraceBuffer attach(int fd);

    TraceBuffer(TraceBuffer&& other) noexcept;
    TraceBuffer& operator=(TraceBuffer&& other) noexcept;
    TraceBuffer(const TraceBuffer&) = delete;
    TraceBuffer& operator=(const TraceBuffer&) = delete;
    ~TraceBuffer();

    int fd() const { return fd_; }
    TraceHeader& header() { return *header_; }
    const TraceHeader& header() const { return *header_; }
    std::int64_t capacity() const { return header_->capacity; }
    bool is_ring() const { return header_->ring != 0; }
    IterationRecord* records() { return records_; }
    // The records published so far.
    std::span<const IterationRecord> published() const;
    // Touches the first `count` records' pages so the measured loop takes no page faults there.
    void prefault(std::int64_t count);

private:
    TraceBuffer(int fd, void* mapping, std::size_t bytes);
    int fd_ = -1;
    void* mapping_ = nullptr;
    std::size_t bytes_ = 0;
    TraceHeader* header_ = nullptr;
    IterationRecord* records_ = nullptr;
};

}  // namespace inferbench::runner
