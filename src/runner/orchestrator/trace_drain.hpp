// The orchestrator's side of a ring trace (runner/wire/trace_buffer): a thread that takes the records a worker
// publishes out of the ring as they come, into a spool file (store/iteration_spool), and says so in the
// ring's `consumed`, so that the worker's memory and the orchestrator's stay the ring's whatever the loop's
// length. The spool is stored in the benchmark's one transaction once the cell ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "runner/wire/trace_buffer.hpp"
#include "store/iteration_spool.hpp"

namespace inferbench::runner {

class TraceDrain {
public:
    // Starts taking records out of `trace` (a ring) into `spool`; both outlive the drain.
    TraceDrain(TraceBuffer& trace, store::IterationSpool& spool);
    TraceDrain(const TraceDrain&) = delete;
    TraceDrain& operator=(const TraceDrain&) = delete;
    ~TraceDrain();

    // Once the worker has ended: stops the thread and takes what is left. Returns why records could not be
    // kept (the spool's disk full), where that happened; the worker was then asked to stop.
    std::optional<std::string> finish();
    // Records taken out so far.
    std::int64_t taken() const { return taken_.load(std::memory_order_relaxed); }

private:
    bool drain_once();
    void loop();

    TraceBuffer& trace_;
    store::IterationSpool& spool_;
    std::atomic<bool> done_{false};
    std::atomic<std::int64_t> taken_{0};
    std::optional<std::string> error_;
    std::thread thread_;
};

}  // namespace inferbench::runner
