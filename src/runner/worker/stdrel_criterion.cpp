#include "runner/worker/stdrel_criterion.hpp"

#include <cmath>
#include <limits>

namespace inferbench::runner {

StdrelCriterion::StdrelCriterion(double max_noise, std::int64_t min_time_ns)
    : max_noise_(max_noise), min_time_ns_(static_cast<double>(min_time_ns)) {}

void StdrelCriterion::add(std::int64_t latency_ns) {
    const auto x = static_cast<double>(latency_ns);
    ++count_;
    total_ns_ += x;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(count_);
    squares_ += delta * (x - mean_);
    const double current = noise();
    if (!std::isfinite(current)) return;  // as nvbench: only finite noise values are kept
    window_[window_next_] = current;
    window_next_ = (window_next_ + 1) % kWindow;
    if (window_size_ < kWindow) ++window_size_;
}

double StdrelCriterion::noise() const {
    if (count_ < kMinimumForNoise) return std::numeric_limits<double>::quiet_NaN();
    return std::sqrt(squares_ / static_cast<double>(count_ - 1)) / mean_;
}

double StdrelCriterion::spread_of_window(double reference) const {
    double squares = 0;
    for (std::size_t i = 0; i < window_size_; ++i) squares += (window_[i] - reference) * (window_[i] - reference);
    return std::sqrt(squares / static_cast<double>(window_size_ - 1)) / reference;
}

bool StdrelCriterion::finished() {
    settled_ = false;
    if (total_ns_ <= min_time_ns_ || window_size_ == 0) return false;
    const double current = window_[(window_next_ + kWindow - 1) % kWindow];
    if (current < max_noise_) return true;
    if (window_size_ > kSettleAfter && count_ % kSettleEvery == 0 && spread_of_window(current) < kSettledSpread) {
        settled_ = true;
        return true;
    }
    return false;
}

}  // namespace inferbench::runner
