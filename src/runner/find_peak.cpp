#include "runner/find_peak.hpp"

#include <algorithm>
#include <functional>

namespace inferbench {

PeakSearch search_peak(double capacity_qps, const std::function<PeakStep(double qps)>& run_step, int max_steps,
                       double precision) {
    PeakSearch search;
    double passing = 0;  // known to pass (0: nothing yet)
    double failing = 1.25 * std::max(capacity_qps, 1e-3);
    const auto run = [&](double qps) {
        search.steps.push_back(run_step(qps));
        return search.steps.back().passed;
    };
    // The upper end must fail; while it passes, the capacity was underestimated.
    while (static_cast<int>(search.steps.size()) < max_steps && run(failing)) {
        passing = failing;
        failing *= 2;
    }
    while (static_cast<int>(search.steps.size()) < max_steps && failing - passing > precision * failing) {
        const double middle = (passing + failing) / 2;
        // Nothing passing even far below the capacity: the bound is out of reach (or the host too noisy),
        // and slower steps would only take longer (each runs its minimum of queries).
        if (passing == 0 && middle < kPeakFloor * capacity_qps) break;
        (run(middle) ? passing : failing) = middle;
    }
    search.peak_qps = passing;
    return search;
}

PeakConfirmation confirm_peak(const PeakSearch& search, const std::function<bool(double qps)>& run_passes,
                              int max_tries) {
    std::vector<double> passing;
    for (const PeakStep& step : search.steps)
        if (step.passed) passing.push_back(step.qps);
    std::sort(passing.begin(), passing.end(), std::greater<>());
    passing.erase(std::unique(passing.begin(), passing.end()), passing.end());
    PeakConfirmation confirmation;
    for (const double qps : passing) {
        if (static_cast<int>(confirmation.failed.size()) >= max_tries) break;
        confirmation.last_tried_qps = qps;
        if (run_passes(qps)) {
            confirmation.peak_qps = qps;
            break;
        }
        confirmation.failed.push_back(qps);
    }
    return confirmation;
}

}  // namespace inferbench
