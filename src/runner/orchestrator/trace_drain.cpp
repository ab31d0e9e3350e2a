#include "runner/orchestrator/trace_drain.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <span>

namespace inferbench::runner {
namespace {

// Often enough that a ring of a few hundred thousand records never fills at a null backend's pace
// (tens of millions of iterations a second) while the spool's writes keep up.
constexpr std::chrono::microseconds kDrainPause{500};

}  // namespace

TraceDrain::TraceDrain(TraceBuffer& trace, store::IterationSpool& spool)
    : trace_(trace), spool_(spool), thread_([this] { loop(); }) {}

TraceDrain::~TraceDrain() { finish(); }

// Takes the published records not yet taken (at most two runs of the ring: before and after its end).
// False once the spool failed.
bool TraceDrain::drain_once() {
    if (error_) return false;
    TraceHeader& header = trace_.header();
    const std::int64_t published = header.published.load(std::memory_order_acquire);
    std::int64_t from = header.consumed.load(std::memory_order_relaxed);
    const std::int64_t capacity = trace_.capacity();
    try {
        while (from < published) {
            const std::int64_t slot = from % capacity;
            const std::int64_t count = std::min(published - from, capacity - slot);
            spool_.append(std::span<const IterationRecord>(trace_.records() + slot, static_cast<std::size_t>(count)));
            from += count;
            header.consumed.store(from, std::memory_order_release);
            taken_.store(from, std::memory_order_relaxed);
        }
    } catch (const std::exception& e) {
        error_ = e.what();
        // Records the spool cannot take cannot be kept: the worker stops rather than measure in vain.
        header.stop_requested.store(1, std::memory_order_relaxed);
        return false;
    }
    return true;
}

void TraceDrain::loop() {
    while (!done_.load(std::memory_order_acquire)) {
        if (!drain_once()) return;
        std::this_thread::sleep_for(kDrainPause);
    }
}

std::optional<std::string> TraceDrain::finish() {
    if (thread_.joinable()) {
        done_.store(true, std::memory_order_release);
        thread_.join();
        drain_once();
    }
    return error_;
}

}  // namespace inferbench::runner
