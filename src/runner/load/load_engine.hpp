// The query engine of the load scenarios other than single_stream (core/plan/scenario_settings.hpp): queries
// arrive on a schedule (server's Poisson times, offline's all at once) or from closed-loop clients
// (concurrency, multi_stream: a client issues its next query when its last completes), wait in one FIFO
// queue, optionally go through a dynamic batcher, and are served by `streams` workers, each on its own
// thread with its own backend instance(s). A free worker takes the oldest waiting query, so the queue is
// served as one FIFO by several servers, and nothing issues queries apart from the workers: on time, the
// worker that takes a query begins it at its scheduled arrival. With several workers and a schedule
// (server), a query is taken when it arrives, by whichever free worker runs then, not reserved earlier by
// one that the machine may hold up meanwhile.
//
// Every query is one record (core/spec.hpp IterationRecord): start_ns its scheduled arrival, e2e_ns from
// there to its completion (so a late start counts against the system: no coordinated omission), queue_ns
// from arrival to the moment the backend began it. Records go to the trace as queries complete, then are
// put in arrival order when the run ends.
//
// The batcher (Triton's dynamic batcher): the worker at the head of the queue waits until B queries have
// arrived or the oldest has waited max_queue_delay, then runs those that arrived (up to B) as one batch on
// its instance of the smallest batch size that holds them (the batch padded to that size).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "backends/backend.hpp"
#include "runner/load/load_clock.hpp"
#include "runner/worker/measure_loop.hpp"

namespace inferbench::runner {

struct LoadInstance {
    Backend* backend = nullptr;
    std::int64_t batch_size = 1;
};
// One stream's instances, ascending by batch size; the last runs the cell's batch size.
using StreamInstances = std::vector<LoadInstance>;

struct LoadPlan {
    std::vector<std::int64_t> schedule_ns;  // open loop: arrival offsets from the start; empty: closed loop
    std::int64_t clients = 1;               // closed loop: queries in flight (multi_stream 1, concurrency N)
    std::int64_t duration_ns = 0;           // closed loop: clients issue new queries until this has passed ...
    std::int64_t min_queries = 1;           // ... and this many have completed
    std::int64_t inferences_per_query = 1;  // multi_stream: samples_per_query / batch size
    bool batcher = false;
    std::int64_t max_queue_delay_ns = 0;
    // Open loop: a query that waited longer than this for the backend ends the run (the system fell
    // behind), so an overloaded server is judged, not waited for.
    std::int64_t fall_behind_ns = kNoDeadline;
    std::int64_t lead_ns = 1'000'000;  // the first arrival is this far after the call (threads start meanwhile)
};

struct LoadResult {
    std::int64_t scheduled = 0;       // queries scheduled (open loop) or issued by the clients (closed loop)
    std::int64_t issued = 0;          // queries the backend began
    std::int64_t completed = 0;       // queries completed: the records written
    std::int64_t inferences = 0;      // infer() calls
    std::int64_t padded_samples = 0;  // samples the batcher's batches were padded with
    std::int64_t start_ns = 0;        // the first arrival
    std::int64_t wall_ns = 0;         // the first arrival to the last completion
    std::int64_t longest_wait_ns = 0;  // the longest a query waited before the backend began it
    bool fell_behind = false;         // ended early: a query waited longer than fall_behind_ns
    bool stopped = false;             // ended early by a stop request
};

// Runs `plan` on `streams` (one worker thread each; the caller's own when there is one), writing at most
// `capacity` records to `sink`. An exception of a backend ends the run and is thrown here.
LoadResult run_load(std::span<const StreamInstances> streams, const LoadPlan& plan, TraceSink sink,
                    std::int64_t capacity, const std::atomic<std::int32_t>& stop, LoadClock& clock);

}  // namespace inferbench::runner
