// What a benchmark's measure conditions did to its numbers: the throttle flags of its iterations under
// its throttle_policy (which iterations the statistics keep), and the notes its L2 flush, sync mode and
// cooldown call for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_context.hpp"
#include "core/plan/measure_conditions.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

struct ThrottleSummary {
    ThrottlePolicy policy = ThrottlePolicy::flag;
    double threshold = 0.75;
    std::optional<double> default_clock_mhz;  // of the benchmark's GPU, as its run recorded it
    std::int64_t iterations = 0;              // judged: every measured iteration
    std::int64_t flagged = 0;
    std::int64_t unknown = 0;                 // not covered by the telemetry: not known either way
    std::int64_t discarded = 0;               // discard: the flagged ones, left out of the statistics
    std::uint64_t reasons = 0;                // throttling reasons seen where iterations were flagged
    bool clock_below_floor = false;

    std::optional<double> floor_mhz() const;  // threshold x default clock
    // flagged / iterations, where anything was judged (a lower bound where some are not known).
    std::optional<double> flagged_share() const;
};

struct ThrottleJudgement {
    std::optional<ThrottleSummary> summary;  // CUDA benchmarks with iterations, under flag or discard
    std::vector<IterationRecord> kept;       // discard with something flagged: the iterations the statistics use
};

// Flags the iterations of a CUDA benchmark (analysis/throttle_flags) against its GPU's samples and the
// default clock in `gpus`; nothing under keep, nor for CPU benchmarks. `iterations`: the benchmark's, in measured
// order (held in memory: each is flagged by the samples around it).
ThrottleJudgement judge_throttling(const store::MeasuredBenchmark& measured, std::span<const IterationRecord> iterations,
                                   const MeasureConditions& conditions, const std::map<int, GpuFacts>& gpus);
// Whether judge_throttling judges this benchmark's iterations: a CUDA one under throttle_policy flag or discard.
bool judges_throttling(const store::BenchmarkRecord& benchmark, const MeasureConditions& conditions);

// "12.5% of iterations ran throttled (SW power cap; SM clock under 1485 MHz = 0.75 x 1980 MHz): ...", or
// nothing where none was flagged or left unknown.
std::vector<std::string> throttle_notes(const ThrottleSummary& throttle);

// Notes of the L2 flush (what throughput and energy then count), of a sync mode set on a context that
// existed already, and of a cooldown that ended at cooldown_max before the GPU was back near idle.
std::vector<std::string> condition_notes(const store::MeasuredBenchmark& measured, const MeasureConditions& conditions,
                                         const std::map<int, GpuFacts>& gpus);

}  // namespace inferbench::analysis
