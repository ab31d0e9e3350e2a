// One GPU's telemetry samples in time order, and the time windows where something held: the shared
// reading of "what the GPU did when" of the telemetry summary, the throttle flags of iterations
// (analysis/throttle_flags) and the findings' throttling rule.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "core/samples.hpp"

namespace inferbench::analysis {

using GpuSeries = std::vector<const GpuSample*>;  // one GPU's samples, by time

struct Interval {
    std::int64_t start_ns = 0, end_ns = 0;
};

// Each GPU's samples (of `phase`, or of every phase), by time; stable for samples of one time.
std::map<int, GpuSeries> gpu_series(std::span<const GpuSample> gpu, std::optional<SamplePhase> phase);

// The windows where `held(sample)`, each sample standing for the time to the next one (the last one for
// none), adjacent windows merged.
std::vector<Interval> windows_where(std::span<const GpuSample* const> series,
                                    const std::function<bool(const GpuSample&)>& held);

std::int64_t total_ns(std::span<const Interval> intervals);
// Whether `t` lies in one of them (start included, end not).
bool inside(std::span<const Interval> intervals, std::int64_t t);

}  // namespace inferbench::analysis
