#include "pipeline/stage_timer.hpp"

#include <algorithm>
#include <ctime>

#include "core/clock.hpp"

namespace inferbench::pipeline {

std::int64_t thread_cpu_ns() noexcept {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return kStageNotMeasured;
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

StageTimer::StageTimer() noexcept : start_ns_(monotonic_ns()), start_cpu_ns_(thread_cpu_ns()) {}

StageSpan StageTimer::stop() const noexcept {
    const std::int64_t end_cpu = thread_cpu_ns();
    const std::int64_t cpu =
        start_cpu_ns_ == kStageNotMeasured || end_cpu == kStageNotMeasured ? kStageNotMeasured : end_cpu - start_cpu_ns_;
    return {start_ns_, monotonic_ns(), cpu};
}

void add_span(PipelineStageTime& into, const StageSpan& span, std::int64_t images) noexcept {
    if (into.images == 0) {
        into.start_ns = span.start_ns;
        into.end_ns = span.end_ns;
        into.cpu_ns = span.cpu_ns;
        into.images = images;
        return;
    }
    into.start_ns = std::min(into.start_ns, span.start_ns);
    into.end_ns = std::max(into.end_ns, span.end_ns);
    into.cpu_ns = into.cpu_ns == kStageNotMeasured || span.cpu_ns == kStageNotMeasured ? kStageNotMeasured
                                                                                     : into.cpu_ns + span.cpu_ns;
    into.images += images;
}

}  // namespace inferbench::pipeline
