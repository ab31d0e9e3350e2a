// The harness's warm-up and measured loops. The measured loop is the hot path: two clock reads, one
// inference, one record written to preallocated (shared) memory, one release store. No I/O.
#pragma once

#include <atomic>
#include <cstdint>

#include "backends/backend.hpp"
#include "core/plan/loop_settings.hpp"
#include "core/spec.hpp"
#include "runner/worker/stop_rule.hpp"

namespace inferbench::runner {

// The cell's loop settings as the worker runs them: max_iterations becomes the record buffer's
// capacity (>= 1; the plan's 0, no limit, included) and min_iterations is kept within 1..capacity.
LoopSettings within_capacity(const LoopSettings& loop, std::int64_t capacity);

struct WarmupResult {
    std::int64_t iterations = 0;
    std::int64_t elapsed_ns = 0;
};

struct TraceSink {
    IterationRecord* records = nullptr;
    std::atomic<std::int64_t>* published = nullptr;
    // A ring (runner/wire/trace_buffer) of `capacity` records, where `consumed` says how far the orchestrator
    // took them out; none: `records` holds every record of the loop.
    const std::atomic<std::int64_t>* consumed = nullptr;
    std::int64_t capacity = 0;
};

// Work between iterations, outside the timed region, in the warm-up and the measured loop alike: it
// runs before each iteration's first clock read (e.g. runner/worker/cuda_conditions' L2 flush).
class BetweenIterations {
public:
    virtual ~BetweenIterations() = default;
    virtual void run() = 0;
};

// A ring full of records the orchestrator has not taken out yet: waits until it takes some, or a stop.
// Returns the records writable before the next wait (record `next` is the one to write); adds the time waited to
// `waited_ns`.
std::int64_t wait_for_room(const TraceSink& sink, std::int64_t next, const std::atomic<std::int32_t>& stop,
                           std::int64_t& waited_ns);

struct MeasureResult {
    std::int64_t iterations = 0;
    std::int64_t wall_ns = 0;  // first start to last end, less the waits for room in a full ring
    bool stopped = false;      // ended early by a stop request
    StopOutcome stop;          // whether the stopping criterion converged, and what it saw
};

// Runs until both the warm-up time and the warm-up iteration count are reached, or a stop request.
// `between` (optional) runs before each iteration.
WarmupResult run_warmup(Backend& backend, const LoopSettings& loop, const std::atomic<std::int32_t>& stop,
                        BetweenIterations* between = nullptr);

// Runs until the cell's stopping rule says so (runner/worker/stop_rule.hpp: fixed, stdrel or entropy), or a
// stop request. `between` (optional) runs before each iteration, untimed. With a ring sink the loop waits,
// untimed, where the ring is full; the stopping rule and wall_ns count the loop's time without those waits.
MeasureResult run_measured(Backend& backend, const LoopSettings& loop, TraceSink sink,
                           const std::atomic<std::int32_t>& stop, BetweenIterations* between = nullptr);

}  // namespace inferbench::runner
