#include "runner/measure_loop.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace inferbench {

LoopLimits loop_limits(const BenchmarkSpec& spec, std::int64_t capacity) {
    LoopLimits limits;
    limits.warmup_ns = spec.warmup_ns;
    limits.warmup_iterations = spec.warmup_iterations;
    limits.duration_ns = spec.duration_ns;
    limits.max_iterations = capacity;
    limits.min_iterations = std::clamp<std::int64_t>(spec.min_iterations, 1, capacity);
    return limits;
}

WarmupResult run_warmup(Backend& backend, const LoopLimits& limits, const std::atomic<std::int32_t>& stop) {
    const std::int64_t begin = monotonic_ns();
    WarmupResult result;
    while (!stop.load(std::memory_order_relaxed)) {
        result.elapsed_ns = monotonic_ns() - begin;
        if (result.elapsed_ns >= limits.warmup_ns && result.iterations >= limits.warmup_iterations) break;
        DeviceTimes times;
        backend.infer(times);
        ++result.iterations;
    }
    return result;
}

MeasureResult run_measured(Backend& backend, const LoopLimits& limits, TraceSink sink,
                           const std::atomic<std::int32_t>& stop) {
    MeasureResult result;
    const std::int64_t deadline = monotonic_ns() + limits.duration_ns;
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    std::int64_t i = 0;
    while (true) {
        if (stop.load(std::memory_order_relaxed)) {
            result.stopped = true;
            break;
        }
        DeviceTimes times;
        const std::int64_t start = monotonic_ns();
        backend.infer(times);
        const std::int64_t end = monotonic_ns();
        sink.records[i] = IterationRecord{start, end - start, times.enqueue_ns, times.h2d_ns, times.compute_ns, times.d2h_ns};
        if (i == 0) first_start = start;
        last_end = end;
        ++i;
        sink.published->store(i, std::memory_order_release);
        if (i >= limits.max_iterations || (end >= deadline && i >= limits.min_iterations)) break;
    }
    result.iterations = i;
    result.wall_ns = i > 0 ? last_end - first_start : 0;
    return result;
}

}  // namespace inferbench
