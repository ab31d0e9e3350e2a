#include "core/statistics/confidence.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace inferbench {
namespace {

// The continued fraction of I_x(a, b), evaluated by the modified Lentz method; it converges fast for
// x < (a + 1) / (a + b + 2), in O(sqrt(max(a, b))) terms at worst.
double beta_fraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300;
    constexpr double kEpsilon = 1e-15;
    const int max_terms = 200 + static_cast<int>(10 * std::sqrt(std::max(a, b)));
    const auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
    double c = 1;
    double d = 1 / guard(1 - (a + b) * x / (a + 1));
    double fraction = d;
    for (int m = 1; m <= max_terms; ++m) {
        const double dm = m;
        const double even = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
        d = 1 / guard(1 + even * d);
        c = guard(1 + even / c);
        fraction *= d * c;
        const double odd = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
        d = 1 / guard(1 + odd * d);
        c = guard(1 + odd / c);
        const double step = d * c;
        fraction *= step;
        if (std::fabs(step - 1) < kEpsilon) break;
    }
    return fraction;
}

double mean_of(std::span<const double> values) {
    double sum = 0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

double sample_stdev(std::span<const double> values, double mean) {
    double squares = 0;
    for (const double v : values) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

Interval around(double centre, std::span<const double> values, double confidence) {
    const double n = static_cast<double>(values.size());
    const double t = student_t_quantile((1 + confidence) / 2, n - 1);
    const double half = t * sample_stdev(values, mean_of(values)) / std::sqrt(n);
    return {centre - half, centre + half};
}

template <typename T>
std::optional<Interval> batch_means(std::span<const T> in_order, double confidence) {
    BatchMeans means(static_cast<std::int64_t>(in_order.size()));
    for (const T v : in_order) means.add(static_cast<double>(v));
    return means.interval(confidence);
}

// The largest k in [-1, n] with P(B <= k) <= level (B ~ Binomial(n, p)); P(B <= -1) = 0.
std::int64_t last_at_most(std::int64_t n, double p, double level) {
    std::int64_t low = -1, high = n;  // F(low) <= level; F(n) = 1
    while (high - low > 1) {
        const std::int64_t mid = low + (high - low) / 2;
        (binomial_cdf(mid, n, p) <= level ? low : high) = mid;
    }
    return low;
}

// The smallest k in [0, n] with P(B <= k) >= level.
std::int64_t first_at_least(std::int64_t n, double p, double level) {
    std::int64_t low = -1, high = n;  // F(high) >= level
    while (high - low > 1) {
        const std::int64_t mid = low + (high - low) / 2;
        (binomial_cdf(mid, n, p) >= level ? high : low) = mid;
    }
    return high;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
    if (!(a > 0) || !(b > 0)) throw std::invalid_argument("incomplete_beta: a and b must be positive");
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                  b * std::log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
    const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
    if (p < 0.5) return -student_t_quantile(1 - p, df);
    double high = 1;
    while (student_t_cdf(high, df) < p && high < 1e12) high *= 2;
    double low = 0;
    for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
        const double mid = (low + high) / 2;
        (student_t_cdf(mid, df) < p ? low : high) = mid;
    }
    return (low + high) / 2;
}

double binomial_cdf(std::int64_t k, std::int64_t n, double p) {
    if (k < 0) return 0;
    if (k >= n) return 1;
    return incomplete_beta(static_cast<double>(n - k), static_cast<double>(k + 1), 1 - p);
}

std::optional<Interval> t_interval(std::span<const double> values, double confidence) {
    if (values.size() < 2) return std::nullopt;
    return around(mean_of(values), values, confidence);
}

std::optional<Interval> batch_means_interval(std::span<const double> in_order, double confidence) {
    return batch_means(in_order, confidence);
}

std::optional<Interval> batch_means_interval(std::span<const std::int64_t> in_order, double confidence) {
    return batch_means(in_order, confidence);
}

namespace {

// The order-statistics interval's 1-based ranks for n values; nothing where they cannot bound it.
std::optional<std::pair<std::int64_t, std::int64_t>> quantile_ranks(std::int64_t n, double p, double confidence) {
    if (n == 0 || p <= 0 || p >= 1) return std::nullopt;
    const double tail = (1 - confidence) / 2;
    const std::int64_t low_rank = last_at_most(n, p, tail) + 1;    // 1-based; 0: no lower bound
    const std::int64_t high_rank = first_at_least(n, p, 1 - tail) + 1;  // n + 1: no upper bound
    if (low_rank < 1 || high_rank > n) return std::nullopt;
    return std::pair{low_rank, high_rank};
}

}  // namespace

std::optional<Interval> quantile_interval(std::span<const double> sorted, double p, double confidence) {
    const auto ranks = quantile_ranks(static_cast<std::int64_t>(sorted.size()), p, confidence);
    if (!ranks) return std::nullopt;
    return Interval{sorted[static_cast<std::size_t>(ranks->first - 1)], sorted[static_cast<std::size_t>(ranks->second - 1)]};
}

std::optional<Interval> quantile_interval(const SortedValues& sorted, double p, double confidence) {
    const auto ranks = quantile_ranks(sorted.size(), p, confidence);
    if (!ranks) return std::nullopt;
    return Interval{static_cast<double>(sorted[ranks->first - 1]), static_cast<double>(sorted[ranks->second - 1])};
}

BatchMeans::BatchMeans(std::int64_t count)
    : count_(count), batches_(std::min<std::int64_t>(kBatches, count)), batch_end_(batches_ > 0 ? count / batches_ : 0) {
    means_.reserve(static_cast<std::size_t>(batches_));
}

void BatchMeans::add(double value) {
    // Batch k holds [k n / b, (k + 1) n / b); a batch ends before the value that starts the next.
    sum_ += value;
    ++seen_;
    if (seen_ < batch_end_) return;
    total_ += sum_;
    means_.push_back(sum_ / static_cast<double>(batch_end_ - batch_begin_));
    sum_ = 0;
    batch_begin_ = batch_end_;
    const auto k = static_cast<std::int64_t>(means_.size());
    batch_end_ = k < batches_ ? (k + 1) * count_ / batches_ : count_ + 1;
}

std::optional<Interval> BatchMeans::interval(double confidence) const {
    if (count_ < 2) return std::nullopt;
    if (seen_ != count_) throw std::logic_error("batch means: fewer values than counted");
    return around(total_ / static_cast<double>(count_), means_, confidence);
}

}  // namespace inferbench
