// nvbench's "entropy" stopping criterion (NVIDIA/nvbench, nvbench/detail/entropy_criterion.cxx), fed the
// end-to-end latency of every measured iteration:
// - after each iteration, the Shannon entropy (bits) of the latencies seen so far: -sum p log2 p over
//   the distinct values, p = count / iterations; kept for the last 299 iterations;
// - finished, tested on even iteration counts, when the least-squares line through those entropies (x:
//   0, 1, 2, ... oldest first) rises at most max_angle degrees (atan of the slope; a falling entropy
//   passes) and explains at least min_r2 of their variance (R² = 1 where they do not vary at all).
//   A distribution that has been fully sampled stops gaining entropy.
// Two differences, both about the measurements rather than the rule: nvbench's samples are CUDA-event
// times, which come in steps of about 0.5 us, so equal values recur; our clock reads nanoseconds, where
// nearly every latency would be a value of its own and the entropy would be log2(n) whatever the data,
// so latencies are binned to kBinNs (0.5 us) first. And nvbench fits its ring buffer in storage order,
// which after the first 299 iterations is no longer time order; the fit here is in time order, as the
// rule intends. The entropy is updated in O(1) per iteration (log2 n - sum(c log2 c) / n, the same
// quantity); a latency bin never seen before may allocate.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace inferbench::runner {

class EntropyCriterion {
public:
    static constexpr std::size_t kWindow = 299;
    static constexpr std::int64_t kBinNs = 500;

    EntropyCriterion(double max_angle_deg, double min_r2, std::int64_t bin_ns = kBinNs);

    void add(std::int64_t latency_ns);
    bool finished();

    std::int64_t iterations() const { return count_; }
    double entropy() const;
    // The last fit tested by finished(): its angle in degrees and R².
    double angle_deg() const { return angle_deg_; }
    double r2() const { return r2_; }
    bool fitted() const { return fitted_; }  // angle_deg() and r2() are of the last fit; none before the first

private:
    void fit();

    double max_angle_deg_;
    double min_r2_;
    std::int64_t bin_ns_;
    std::int64_t count_ = 0;
    double count_log_count_ = 0;                          // sum over bins of c log2 c
    std::vector<std::pair<std::int64_t, std::int64_t>> bins_;  // bin -> count, sorted by bin
    std::array<double, kWindow> window_{};
    std::size_t window_size_ = 0;
    std::size_t window_next_ = 0;
    double angle_deg_ = 0;
    double r2_ = 0;
    bool fitted_ = false;  // the window has been fitted at least once: angle and R² mean something
};

}  // namespace inferbench::runner
