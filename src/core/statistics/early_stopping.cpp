#include "core/statistics/early_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/statistics/confidence.hpp"

namespace inferbench::early_stopping {

double odds(std::int64_t h, std::int64_t t, double p, double d) {
    return incomplete_beta(static_cast<double>(h), static_cast<double>(t + 1), p - d);
}

std::int64_t min_passing_queries(std::int64_t t, double p, double c, double d) {
    const double threshold = 1.0 - c;
    // odds() falls as h grows: double h until it passes, then halve the gap.
    std::int64_t failing = 0;
    std::int64_t passing = 1;
    while (odds(passing, t, p, d) >= threshold) {
        failing = passing;
        passing *= 2;
        if (passing > (std::int64_t{1} << 50)) throw std::logic_error("min_passing_queries: no passing count");
    }
    while (passing - failing > 1) {
        const std::int64_t middle = failing + (passing - failing) / 2;
        (odds(middle, t, p, d) < threshold ? passing : failing) = middle;
    }
    return passing;
}

PercentileEstimate percentile_estimate(const SortedValues& sorted_ns, double p, double c) {
    PercentileEstimate estimate;
    const auto n = static_cast<std::int64_t>(sorted_ns.size());
    estimate.queries_needed = min_passing_queries(1, p, c) + 1;
    if (n < estimate.queries_needed) return estimate;
    estimate.enough = true;
    // h(t) + t grows with t: the largest t it keeps within n, by halving [t that fits, t that does not].
    std::int64_t fits = 1;
    std::int64_t too_many = n;  // h >= 1, so h(n) + n > n
    while (too_many - fits > 1) {
        const std::int64_t middle = fits + (too_many - fits) / 2;
        (min_passing_queries(middle, p, c) + middle <= n ? fits : too_many) = middle;
    }
    estimate.discarded = fits - 1;
    estimate.estimate_ns = sorted_ns[n - fits];
    return estimate;
}

ServerCheck server_check(std::int64_t queries, std::int64_t overlatency, double p, double c) {
    ServerCheck check;
    check.overlatency = overlatency;
    check.queries_needed = min_passing_queries(overlatency, p, c) + overlatency;
    check.satisfied = queries >= check.queries_needed;
    return check;
}

std::int64_t loadgen_percentile(const SortedValues& sorted_ns, double p) {
    if (sorted_ns.empty()) return 0;
    const auto index = static_cast<std::int64_t>(static_cast<double>(sorted_ns.size()) * p);
    return sorted_ns[std::min(index, sorted_ns.size() - 1)];
}

}  // namespace inferbench::early_stopping
