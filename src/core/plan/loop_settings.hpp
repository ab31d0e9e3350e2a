// The measured loop's settings: one struct that travels unchanged from the plan (RunSettings::loop)
// through each cell (BenchmarkSpec::loop) to the worker's warm-up and measured loops, and to a backend
// that runs its own loop. The member initialisers are the plan's defaults.
#pragma once

#include <cstdint>

#include "core/plan/stop_criterion.hpp"

namespace inferbench {

struct LoopSettings {
    std::int64_t warmup_ns = 1'000'000'000;   // warm-up lasts at least this long ...
    std::int64_t warmup_iterations = 1;       // ... and at least this many iterations
    std::int64_t duration_ns = 5'000'000'000;  // measured phase lasts at least this long ...
    std::int64_t min_iterations = 10;         // ... and at least this many iterations
    // ... but stops here (bounds memory and database); 0: no limit. Inside a worker the loop gets the
    // trace buffer's capacity here instead (runner/worker/measure_loop: within_capacity), never 0.
    std::int64_t max_iterations = 1'000'000;

    // When the measured loop ends (core/plan/stop_criterion.hpp; runner/worker/stop_rule.hpp computes it): fixed
    // uses the duration and min_iterations above; stdrel and entropy take min_iterations as nvbench's
    // min_samples (checked only after that many iterations), give up at stop_timeout_ns of measuring,
    // and ignore duration_ns. max_iterations bounds every criterion.
    StopCriterion stop = StopCriterion::fixed;
    double max_noise_pct = 0.5;                 // stdrel: relative standard deviation, percent
    std::int64_t min_time_ns = 500'000'000;      // stdrel: summed iteration times before it may stop
    std::int64_t stop_timeout_ns = 15'000'000'000;  // stdrel, entropy: not converged after this much measuring
    double max_angle_deg = 0.048;               // entropy: steepest trend of the entropy, degrees
    double min_r2 = 0.36;                       // entropy: least R² of its linear fit

    friend bool operator==(const LoopSettings&, const LoopSettings&) = default;
};

// The longest the measured phase may take: the duration for fixed, stop_timeout for the others (for
// budgets: telemetry memory, the progress estimate, the pages touched before measuring).
inline std::int64_t planned_measure_ns(const LoopSettings& loop) {
    return loop.stop == StopCriterion::fixed ? loop.duration_ns : loop.stop_timeout_ns;
}

}  // namespace inferbench
