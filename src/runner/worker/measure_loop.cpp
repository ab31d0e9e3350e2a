#include "runner/worker/measure_loop.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "core/clock.hpp"

namespace inferbench::runner {

LoopSettings within_capacity(const LoopSettings& loop, std::int64_t capacity) {
    LoopSettings bounded = loop;
    bounded.max_iterations = capacity;
    bounded.min_iterations = std::clamp<std::int64_t>(loop.min_iterations, 1, capacity);
    return bounded;
}

WarmupResult run_warmup(Backend& backend, const LoopSettings& loop, const std::atomic<std::int32_t>& stop,
                        BetweenIterations* between) {
    const std::int64_t begin = monotonic_ns();
    WarmupResult result;
    while (!stop.load(std::memory_order_relaxed)) {
        result.elapsed_ns = monotonic_ns() - begin;
        if (result.elapsed_ns >= loop.warmup_ns && result.iterations >= loop.warmup_iterations) break;
        if (between) between->run();
        DeviceTimes times;
        backend.infer(times);
        ++result.iterations;
    }
    return result;
}

std::int64_t wait_for_room(const TraceSink& sink, std::int64_t next, const std::atomic<std::int32_t>& stop,
                           std::int64_t& waited_ns) {
    const std::int64_t begin = monotonic_ns();
    std::int64_t room = 0;
    while ((room = sink.consumed->load(std::memory_order_acquire) + sink.capacity) <= next &&
           !stop.load(std::memory_order_relaxed))
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    waited_ns += monotonic_ns() - begin;
    return room;
}

namespace {

// The hot loop, compiled once per stopping rule.
template <typename Rule>
MeasureResult measure(Backend& backend, Rule rule, TraceSink sink, const std::atomic<std::int32_t>& stop,
                      BetweenIterations* between) {
    MeasureResult result;
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    std::int64_t i = 0;
    const bool ring = sink.consumed != nullptr;
    std::int64_t room = ring ? sink.capacity : std::numeric_limits<std::int64_t>::max();
    std::int64_t slot = 0;       // where record i goes
    std::int64_t waited_ns = 0;  // for room in the ring
    while (true) {
        if (i >= room) room = wait_for_room(sink, i, stop, waited_ns);
        if (stop.load(std::memory_order_relaxed)) {
            result.stopped = true;
            break;
        }
        if (between) between->run();
        DeviceTimes times;
        const std::int64_t start = monotonic_ns();
        backend.infer(times);
        const std::int64_t end = monotonic_ns();
        sink.records[slot] = IterationRecord{start, end - start, times.enqueue_ns, times.h2d_ns, times.compute_ns, times.d2h_ns};
        slot = ring && slot + 1 == sink.capacity ? 0 : slot + 1;
        if (i == 0) first_start = start;
        last_end = end;
        ++i;
        sink.published->store(i, std::memory_order_release);
        if (rule.done(i, end - waited_ns, end - start)) break;
    }
    result.iterations = i;
    result.wall_ns = i > 0 ? last_end - first_start - waited_ns : 0;
    result.stop = rule.outcome(result.stopped);
    return result;
}

}  // namespace

MeasureResult run_measured(Backend& backend, const LoopSettings& loop, TraceSink sink,
                           const std::atomic<std::int32_t>& stop, BetweenIterations* between) {
    // stop_timeout counts from here, a clock read before the first iteration's start.
    const std::int64_t begin = monotonic_ns();
    switch (loop.stop) {
        case StopCriterion::stdrel:
            return measure(backend, CriterionRule(loop, make_stdrel(loop), begin), sink, stop, between);
        case StopCriterion::entropy:
            return measure(backend, CriterionRule(loop, make_entropy(loop), begin), sink, stop, between);
        case StopCriterion::fixed: break;
    }
    return measure(backend, FixedRule(loop, begin), sink, stop, between);
}

}  // namespace inferbench::runner
