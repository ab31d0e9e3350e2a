#include "runner/load/find_peak.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace inferbench::runner {

PeakSearch search_peak(double capacity_qps, const std::function<PeakStep(double qps)>& run_step, int max_steps,
                       double precision, double max_qps) {
    PeakSearch search;
    double passing = 0;  // known to pass (0: nothing yet)
    double failing = std::min(1.25 * std::max(capacity_qps, 1e-3), max_qps);
    const auto run = [&](double qps) {
        search.steps.push_back(run_step(qps));
        return search.steps.back().passed;
    };
    // The upper end must fail; while it passes, the capacity was underestimated.
    while (static_cast<int>(search.steps.size()) < max_steps && run(failing)) {
        passing = failing;
        if (failing >= max_qps) {
            search.peak_qps = passing;
            search.at_max = true;
            return search;
        }
        failing = std::min(failing * 2, max_qps);
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

double max_peak_qps(std::int64_t max_queries, std::int64_t duration_ns) {
    if (max_queries <= 0 || duration_ns <= 0) return std::numeric_limits<double>::infinity();
    return 0.9 * static_cast<double>(max_queries) * 1e9 / static_cast<double>(duration_ns);
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

}  // namespace inferbench::runner
