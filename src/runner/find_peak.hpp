// The server's find_peak: the highest target_qps whose run LoadGen would call VALID (p99 within the
// bound, early stopping satisfied at 99% confidence, every scheduled query issued), by bisection. The
// search starts from the capacity the warm-up's pace suggests: its upper end, 1.25 x that, must fail
// (else it doubles); then each step runs the middle of what is known to pass and known to fail, until the
// two are within `precision` of each other or `max_steps` have run, or nothing passed down to 1/16 of the
// capacity (the bound is out of reach: a peak of 0). Each step is a full server run,
// judged as a stored run is (core/scenario_verdict), so a step passes only when it is statistically shown.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/scenario_settings.hpp"

namespace inferbench {

struct PeakStep {
    double qps = 0;
    std::int64_t queries = 0;  // completed
    std::int64_t p99_ns = 0;   // LoadGen's p99
    bool passed = false;
};

struct PeakSearch {
    double peak_qps = 0;  // the highest passing step's rate; 0 when none passed
    std::vector<PeakStep> steps;
};

inline constexpr double kPeakPrecision = 0.02;
// Where no rate passed, the search gives up below this share of the capacity.
inline constexpr double kPeakFloor = 1.0 / 16;

PeakSearch search_peak(double capacity_qps, const std::function<PeakStep(double qps)>& run_step,
                       int max_steps = kMaxPeakSteps, double precision = kPeakPrecision);

}  // namespace inferbench
