#include "runner/worker/entropy_criterion.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace inferbench::runner {
namespace {

double count_log_count(std::int64_t c) { return c > 1 ? static_cast<double>(c) * std::log2(static_cast<double>(c)) : 0.0; }

}  // namespace

EntropyCriterion::EntropyCriterion(double max_angle_deg, double min_r2, std::int64_t bin_ns)
    : max_angle_deg_(max_angle_deg), min_r2_(min_r2), bin_ns_(std::max<std::int64_t>(bin_ns, 1)) {
    bins_.reserve(4096);
}

void EntropyCriterion::add(std::int64_t latency_ns) {
    ++count_;
    const std::int64_t bin = (latency_ns + bin_ns_ / 2) / bin_ns_;  // the nearest multiple of the bin width
    auto it = std::lower_bound(bins_.begin(), bins_.end(), bin, [](const auto& entry, std::int64_t key) {
        return entry.first < key;
    });
    if (it == bins_.end() || it->first != bin) it = bins_.insert(it, {bin, 0});
    count_log_count_ += count_log_count(it->second + 1) - count_log_count(it->second);
    ++it->second;
    window_[window_next_] = entropy();
    window_next_ = (window_next_ + 1) % kWindow;
    if (window_size_ < kWindow) ++window_size_;
}

double EntropyCriterion::entropy() const {
    if (count_ == 0) return 0;
    const auto n = static_cast<double>(count_);
    return std::max(0.0, std::log2(n) - count_log_count_ / n);
}

// Least squares over the window in time order: x = 0 .. m - 1, oldest first, in one pass over the ring's
// two plain ranges. Sums of x are closed forms; y is taken relative to the oldest value, so that nearly
// equal entropies lose no precision in the sums of squares; R² of a straight-line fit is sxy² / (sxx syy).
void EntropyCriterion::fit() {
    const std::size_t m = window_size_;
    const std::size_t oldest = window_size_ < kWindow ? 0 : window_next_;
    const double reference = window_[oldest];
    double sum_y = 0, sum_xy = 0, sum_yy = 0;
    std::size_t x = 0;
    const auto add_range = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i, ++x) {
            const double y = window_[i] - reference;
            sum_y += y;
            sum_xy += static_cast<double>(x) * y;
            sum_yy += y * y;
        }
    };
    add_range(oldest, oldest == 0 ? m : kWindow);
    add_range(0, oldest);
    const auto n = static_cast<double>(m);
    const double mean_x = (n - 1) / 2;
    const double sxx = n * (n * n - 1) / 12;
    const double sxy = sum_xy - mean_x * sum_y;
    const double syy = sum_yy - sum_y * sum_y / n;
    const double slope = sxy / sxx;
    angle_deg_ = std::atan(slope) * 180 / std::numbers::pi;
    r2_ = syy <= 0 ? 1.0 : std::min(1.0, sxy * sxy / (sxx * syy));
    fitted_ = true;
}

bool EntropyCriterion::finished() {
    if (window_size_ < 2 || count_ % 2 != 0) return false;
    fit();
    return angle_deg_ <= max_angle_deg_ && r2_ >= min_r2_;
}

}  // namespace inferbench::runner
