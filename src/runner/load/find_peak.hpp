// The server's find_peak: the highest target_qps whose run LoadGen would call VALID (p99 within the
// bound, early stopping satisfied at 99% confidence, every scheduled query issued), by bisection. The
// search starts from the capacity the warm-up's pace suggests: its upper end, 1.25 x that, must fail
// (else it doubles); then each step runs the middle of what is known to pass and known to fail, until the
// two are within `precision` of each other or `max_steps` have run, or nothing passed down to 1/16 of the
// capacity (the bound is out of reach: a peak of 0). Each step is a full server run,
// judged as a stored run is (core/statistics/scenario_verdict), so a step passes only when it is statistically shown;
// confirm_peak then runs the passing rates again, highest first, until one passes twice.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/plan/scenario_settings.hpp"

namespace inferbench::runner {

struct PeakStep {
    double qps = 0;
    std::int64_t queries = 0;  // completed
    std::int64_t p99_ns = 0;   // LoadGen's p99
    bool passed = false;
};

struct PeakSearch {
    double peak_qps = 0;  // the highest passing step's rate; 0 when none passed
    std::vector<PeakStep> steps;
    // The peak is max_qps, which passed: the true peak is at least that (a higher rate was not tried).
    bool at_max = false;
};

inline constexpr double kPeakPrecision = 0.02;
// Where no rate passed, the search gives up below this share of the capacity.
inline constexpr double kPeakFloor = 1.0 / 16;

// `max_qps`: the highest rate a step can run for its whole duration within max_iterations (a step cut short is
// INVALID, so every rate above it would fail for that reason alone); no rate above it is tried.
PeakSearch search_peak(double capacity_qps, const std::function<PeakStep(double qps)>& run_step,
                       int max_steps = kMaxPeakSteps, double precision = kPeakPrecision,
                       double max_qps = std::numeric_limits<double>::infinity());

// The highest rate whose Poisson schedule for `duration_ns` fits `max_queries`, with a tenth spare for the
// arrivals' randomness (their count varies by about its square root around rate x duration).
double max_peak_qps(std::int64_t max_queries, std::int64_t duration_ns);

// The run kept after a search is a new run at the peak, and near saturation a p99 varies from one run to
// the next: on an H200, a rate whose step passed (p99 11 ms against 15 ms) failed its next run (27 ms).
// So the peak is confirmed: the passing rates, highest first, are run again until one passes again, at
// most `max_tries` of them. The peak is the first confirmed; the rates before it passed once only.
inline constexpr int kPeakConfirmations = 3;

struct PeakConfirmation {
    double peak_qps = 0;         // confirmed; 0 when none of the rates tried passed again
    double last_tried_qps = 0;   // the rate of the last run made (the run kept)
    std::vector<double> failed;  // rates that passed their step but not their confirmation, in order
};

PeakConfirmation confirm_peak(const PeakSearch& search, const std::function<bool(double qps)>& run_passes,
                              int max_tries = kPeakConfirmations);

}  // namespace inferbench::runner
