// The progress line's estimate of the time a plan has left (ProgressEvent::eta_ns), cell by cell: what the
// finished cells spent beside their measured phase (the worker's start, loading, warm-up, a cooldown), plus
// each cell's measured phase, which lasts its planned time (the duration, find_peak's steps) or longer where
// its minimum query count needs more: min_iterations at the query time a finished cell of the same model,
// backend, device and precision took, scaled by the batch size (single_stream at batch 8 on a busy CPU ran
// 64 queries of 0.8 s, ten times its 5 s duration); a server's min_iterations at its target rate.
#pragma once

#include <cstdint>
#include <span>

#include "core/spec.hpp"

namespace inferbench::runner {

// A cell that ran (not skipped), as far as the estimate needs it.
struct FinishedCell {
    const BenchmarkSpec* spec = nullptr;
    std::int64_t wall_ns = 0;      // from its start to its record kept, all of it
    std::int64_t measured_ns = 0;  // its measured phase; 0 unknown
    std::int64_t queries = 0;      // the queries measured
};

// The estimated time of one cell yet to run.
std::int64_t estimate_cell_ns(const BenchmarkSpec& spec, std::span<const FinishedCell> finished);

}  // namespace inferbench::runner
