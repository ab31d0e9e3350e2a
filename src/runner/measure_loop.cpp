#include "runner/measure_loop.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace inferbench {

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

MeasureResult run_measured(Backend& backend, const LoopSettings& loop, TraceSink sink,
                           const std::atomic<std::int32_t>& stop, BetweenIterations* between) {
    MeasureResult result;
    const std::int64_t deadline = monotonic_ns() + loop.duration_ns;
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    std::int64_t i = 0;
    while (true) {
        if (stop.load(std::memory_order_relaxed)) {
            result.stopped = true;
            break;
        }
        if (between) between->run();
        DeviceTimes times;
        const std::int64_t start = monotonic_ns();
        backend.infer(times);
        const std::int64_t end = monotonic_ns();
        sink.records[i] = IterationRecord{start, end - start, times.enqueue_ns, times.h2d_ns, times.compute_ns, times.d2h_ns};
        if (i == 0) first_start = start;
        last_end = end;
        ++i;
        sink.published->store(i, std::memory_order_release);
        if (i >= loop.max_iterations || (end >= deadline && i >= loop.min_iterations)) break;
    }
    result.iterations = i;
    result.wall_ns = i > 0 ? last_end - first_start : 0;
    return result;
}

}  // namespace inferbench
