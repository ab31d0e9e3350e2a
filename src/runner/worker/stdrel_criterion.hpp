// nvbench's "stdrel" stopping criterion (NVIDIA/nvbench, nvbench/detail/stdrel_criterion.cxx), fed the
// end-to-end latency of every measured iteration:
// - noise = the sample standard deviation (n - 1) of all iterations so far over their mean: the
//   iterations' relative standard deviation (their coefficient of variation), not the standard error
//   of the mean. It exists from 5 iterations on (nvbench: fewer give no standard deviation).
// - finished when the iterations' summed time exceeds min_time and either the current noise is below
//   max_noise, or (every 16th iteration, once 64 noise values exist) the noise has settled: the
//   standard deviation of the last 512 noise values around the current one is below 5% of it. The
//   second test ends benchmarks whose noise is steady above max_noise; nvbench counts both as finished,
//   we do not: a noise that plateaued above max_noise ends the loop as not converged (runner/worker/stop_rule).
// The mean and variance are updated in O(1) per iteration (Welford), equal to nvbench's two-pass
// figures up to rounding; nothing allocates after construction.
#pragma once

#include <array>
#include <cstdint>

namespace inferbench::runner {

class StdrelCriterion {
public:
    static constexpr std::size_t kWindow = 512;           // noise values kept for the settled test
    static constexpr std::size_t kSettleAfter = 64;       // noise values needed before that test
    static constexpr std::int64_t kSettleEvery = 16;      // iterations between two settled tests
    static constexpr double kSettledSpread = 0.05;        // relative spread of the window below which noise settled
    static constexpr std::int64_t kMinimumForNoise = 5;   // iterations before a noise exists

    // max_noise as a fraction (0.005 for 0.5%).
    StdrelCriterion(double max_noise, std::int64_t min_time_ns);

    void add(std::int64_t latency_ns);
    // nvbench's is_finished(); settled() then says which test ended it.
    bool finished();
    bool settled() const { return settled_; }

    std::int64_t iterations() const { return count_; }
    // How many noise values the settled test looked at: at most kWindow, and never more than the
    // iterations that have a noise (iterations() - kMinimumForNoise + 1).
    std::size_t noise_values() const { return window_size_; }
    // The current noise (a fraction); NaN before kMinimumForNoise iterations.
    double noise() const;

private:
    double spread_of_window(double reference) const;

    double max_noise_;
    double min_time_ns_;
    std::int64_t count_ = 0;
    double total_ns_ = 0;
    double mean_ = 0;
    double squares_ = 0;  // sum of squared deviations from the running mean
    std::array<double, kWindow> window_{};
    std::size_t window_size_ = 0;
    std::size_t window_next_ = 0;
    bool settled_ = false;
};

}  // namespace inferbench::runner
