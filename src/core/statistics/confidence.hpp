// Confidence intervals of benchmark figures, as pure functions: the distributions they need (Student's
// t, the binomial, both through the regularized incomplete beta function) and the three intervals the
// summaries use.
//
// - Mean of one benchmark's iterations: non-overlapping batch means. Consecutive iterations are
//   autocorrelated (clocks, temperature, caches and the OS drift together), so s / sqrt(n) of the
//   iterations understates the uncertainty of their mean; means of long consecutive batches are close
//   to independent and normal (Schmeiser 1982: 10 to 30 batches). kBatches batches of consecutive
//   iterations (n <= kBatches: each iteration a batch of its own), mean +- t(b - 1) s_b / sqrt(b).
// - A percentile of one benchmark: order statistics (distribution-free, as MLPerf LoadGen's early
//   stopping bounds its percentiles): the number of iterations below the true p-quantile is
//   Binomial(n, p), so [x(l), x(u)] covers it with probability F(u - 1) - F(l - 1); l and u are the
//   ranks that leave at most (1 - confidence) / 2 on each side. It assumes independent iterations.
// - Mean of several values taken as independent (the means of a cell's repeats): Student's t,
//   mean +- t(n - 1) s / sqrt(n).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/statistics/order_statistics.hpp"

namespace inferbench {

inline constexpr double kConfidence = 0.95;
inline constexpr int kBatches = 30;

// A two-sided confidence interval.
struct Interval {
    double low = 0, high = 0;
    double half_width() const { return (high - low) / 2; }
    friend bool operator==(const Interval&, const Interval&) = default;
};

// How far an interval reaches from its centre, relative: the larger of its two sides over the centre (an
// interval cut at the fastest iteration is no longer symmetric).
inline double relative_half_width(const Interval& interval, double centre) {
    return std::max(centre - interval.low, interval.high - centre) / centre;
}

// I_x(a, b) for a, b > 0 and x in [0, 1] (continued fraction, modified Lentz).
double incomplete_beta(double a, double b, double x);
// P(T <= t) for Student's t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);
// The t with P(T <= t) = p, p in (0, 1).
double student_t_quantile(double p, double df);
// P(B <= k) for B ~ Binomial(n, p).
double binomial_cdf(std::int64_t k, std::int64_t n, double p);

// mean +- t(n - 1) s / sqrt(n); nullopt for fewer than 2 values.
std::optional<Interval> t_interval(std::span<const double> values, double confidence = kConfidence);

// Batch means of values in the order they were measured, centred on the mean of all of them;
// nullopt for fewer than 2 values.
std::optional<Interval> batch_means_interval(std::span<const double> in_order, double confidence = kConfidence);
std::optional<Interval> batch_means_interval(std::span<const std::int64_t> in_order, double confidence = kConfidence);

// The same, of values given one at a time in measured order, their count known beforehand.
class BatchMeans {
public:
    explicit BatchMeans(std::int64_t count);
    void add(double value);
    std::optional<Interval> interval(double confidence = kConfidence) const;

private:
    std::int64_t count_ = 0, batches_ = 0, seen_ = 0, batch_end_ = 0, batch_begin_ = 0;
    double sum_ = 0, total_ = 0;
    std::vector<double> means_;
};

// The p-quantile's (p in (0, 1)) interval from sorted values; nullopt where the values cannot bound it
// on both sides (too few of them for so extreme a quantile: a p99 needs about 300 for its upper bound).
std::optional<Interval> quantile_interval(std::span<const double> sorted, double p, double confidence = kConfidence);
std::optional<Interval> quantile_interval(const SortedValues& sorted, double p, double confidence = kConfidence);

}  // namespace inferbench
