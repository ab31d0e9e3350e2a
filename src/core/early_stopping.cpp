#include "core/early_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inferbench::early_stopping {
namespace {

// The continued fraction of I(x; a, b) (its even and odd steps), evaluated by the modified Lentz method;
// it converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double x, double a, double b) {
    constexpr double kTiny = 1e-300;
    constexpr double kEpsilon = 1e-15;
    constexpr int kMaxSteps = 10'000'000;
    const auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
    double c = 1.0;
    double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    double fraction = d;
    for (int m = 1; m < kMaxSteps; ++m) {
        const double md = m;
        const double even = md * (b - md) * x / ((a + 2 * md - 1) * (a + 2 * md));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        fraction *= d * c;
        const double odd = -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        const double step = d * c;
        fraction *= step;
        if (std::abs(step - 1.0) < kEpsilon) break;
    }
    return fraction;
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
    if (!(a > 0) || !(b > 0)) throw std::invalid_argument("regularized_incomplete_beta: a and b must be positive");
    if (x <= 0) return 0.0;
    if (x >= 1) return 1.0;
    const double log_front =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
    return 1.0 - std::exp(log_front) * beta_continued_fraction(1.0 - x, b, a) / b;
}

double odds(std::int64_t h, std::int64_t t, double p, double d) {
    return regularized_incomplete_beta(p - d, static_cast<double>(h), static_cast<double>(t + 1));
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

PercentileEstimate percentile_estimate(std::span<const std::int64_t> sorted_ns, double p, double c) {
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
    estimate.estimate_ns = sorted_ns[static_cast<std::size_t>(n - fits)];
    return estimate;
}

ServerCheck server_check(std::int64_t queries, std::int64_t overlatency, double p, double c) {
    ServerCheck check;
    check.overlatency = overlatency;
    check.queries_needed = min_passing_queries(overlatency, p, c) + overlatency;
    check.satisfied = queries >= check.queries_needed;
    return check;
}

std::int64_t loadgen_percentile(std::span<const std::int64_t> sorted_ns, double p) {
    if (sorted_ns.empty()) return 0;
    const auto index = static_cast<std::size_t>(static_cast<double>(sorted_ns.size()) * p);
    return sorted_ns[std::min(index, sorted_ns.size() - 1)];
}

}  // namespace inferbench::early_stopping
