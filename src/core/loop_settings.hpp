// The measured loop's settings: one struct that travels unchanged from the plan (RunSettings::loop)
// through each cell (BenchmarkSpec::loop) to the worker's warm-up and measured loops, and to a backend
// that runs its own loop. The member initialisers are the plan's defaults.
#pragma once

#include <cstdint>

namespace inferbench {

struct LoopSettings {
    std::int64_t warmup_ns = 1'000'000'000;   // warm-up lasts at least this long ...
    std::int64_t warmup_iterations = 1;       // ... and at least this many iterations
    std::int64_t duration_ns = 5'000'000'000;  // measured phase lasts at least this long ...
    std::int64_t min_iterations = 10;         // ... and at least this many iterations
    // ... but stops here (bounds memory and database); 0: no limit. Inside a worker the loop gets the
    // trace buffer's capacity here instead (runner/measure_loop: within_capacity), never 0.
    std::int64_t max_iterations = 1'000'000;

    friend bool operator==(const LoopSettings&, const LoopSettings&) = default;
};

}  // namespace inferbench
