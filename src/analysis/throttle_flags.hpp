// Which measured iterations ran throttled, from the GPU telemetry around them. Derived when a benchmark
// is summarized, from its stored iterations and samples and the run's stored default applications
// clock: nothing is stored, so the flags of an old run follow today's rule and another threshold needs
// no new run.
//
// A sample shows throttling where a throttling clock-event reason is set (clock_event::throttling_bits:
// power cap, HW slowdown, sync boost, thermal and power-brake slowdowns; not "GPU idle" nor the
// applications or display clock settings), or where its SM clock is below the floor (throttle_threshold
// x the GPU's default applications clock) while the GPU is not idle (gpu_idle, core/samples.hpp: the
// GPU idle reason, or a utilization of about 0; an idle GPU lowers its clock by design). A sample with neither reading (no reasons, and no clock or no floor) is skipped.
//
// An iteration [start, start + e2e] is judged by the samples around it: the last one at or before its
// start, those during it, and the first one at or after its end. It is flagged where any of them shows
// throttling; clear where none does and they cover it (the first and last exist and no two consecutive
// ones are more than kMaxSampleGapNs apart); otherwise not known (before the first sample, after the
// last, or in a gap of the telemetry) — never "not throttled". Where it is not covered, a sample during
// it that shows throttling still flags it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/samples.hpp"
#include "core/spec.hpp"

namespace inferbench::analysis {

// Samples further apart than this do not cover what lies between them: 2.5 periods at the slowest
// sampling rate (1 Hz), so one missed round is bridged and a stalled sampler is not.
inline constexpr std::int64_t kMaxSampleGapNs = 2'500'000'000;

enum class IterationState : std::uint8_t { clear, flagged, unknown };

struct ThrottleCriteria {
    std::optional<double> floor_mhz;  // throttle_threshold x default applications clock; none: clocks not judged
};

// Whether one sample shows throttling; nullopt where it has neither reading.
std::optional<bool> sample_throttled(const GpuSample& sample, const ThrottleCriteria& criteria);

struct IterationFlags {
    std::vector<IterationState> states;  // one per iteration, in the order given
    std::int64_t flagged = 0, clear = 0, unknown = 0;
    std::uint64_t reasons = 0;       // the throttling reasons set in the samples that flagged iterations
    bool clock_below_floor = false;  // an SM clock under the floor flagged one
};

// `gpu`: the samples of the benchmark's GPU, of every phase (the load and teardown ones bound the edges).
IterationFlags flag_iterations(std::span<const IterationRecord> iterations, std::span<const GpuSample> gpu,
                               const ThrottleCriteria& criteria);

}  // namespace inferbench::analysis
