// One stage's time on one thread (its wall span on core/clock and the thread's CPU time), and several threads' spans
// of the same stage of one batch folded into the one PipelineStageTime stored for it.
#pragma once

#include <cstdint>

#include "core/pipeline.hpp"

namespace inferbench::pipeline {

// The CPU time this thread has used (CLOCK_THREAD_CPUTIME_ID), in ns.
std::int64_t thread_cpu_ns() noexcept;

struct StageSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t cpu_ns = kStageNotMeasured;
};

// Started when made; stop() gives the span from then, with the thread's CPU time in between.
class StageTimer {
public:
    StageTimer() noexcept;
    StageSpan stop() const noexcept;

private:
    std::int64_t start_ns_;
    std::int64_t start_cpu_ns_;
};

// Adds one thread's span of `images` images to a batch's stage: the earliest start, the latest end, the CPU times
// summed (kStageNotMeasured stays so where any span did not read it). `into.images == 0` means no span yet.
void add_span(PipelineStageTime& into, const StageSpan& span, std::int64_t images) noexcept;

}  // namespace inferbench::pipeline
