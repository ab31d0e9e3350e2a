#include "runner/entropy_criterion.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace inferbench {
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

// Least squares over the window in time order: x = 0 .. m - 1, oldest first.
void EntropyCriterion::fit() {
    const std::size_t m = window_size_;
    const std::size_t oldest = window_size_ < kWindow ? 0 : window_next_;
    const auto y = [&](std::size_t i) { return window_[(oldest + i) % kWindow]; };
    double mean_y = 0;
    for (std::size_t i = 0; i < m; ++i) mean_y += y(i);
    mean_y /= static_cast<double>(m);
    const double mean_x = (static_cast<double>(m) - 1) / 2;
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double dx = static_cast<double>(i) - mean_x;
        sxy += dx * (y(i) - mean_y);
        sxx += dx * dx;
    }
    const double slope = sxy / sxx;
    const double intercept = mean_y - slope * mean_x;
    double total = 0, residual = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double predicted = slope * static_cast<double>(i) + intercept;
        total += (y(i) - mean_y) * (y(i) - mean_y);
        residual += (y(i) - predicted) * (y(i) - predicted);
    }
    angle_deg_ = std::atan(slope) * 180 / std::numbers::pi;
    r2_ = total == 0 ? 1.0 : 1 - residual / total;
}

bool EntropyCriterion::finished() {
    if (window_size_ < 2 || count_ % 2 != 0) return false;
    fit();
    return angle_deg_ <= max_angle_deg_ && r2_ >= min_r2_;
}

}  // namespace inferbench
