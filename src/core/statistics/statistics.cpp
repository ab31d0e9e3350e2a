#include "core/statistics/statistics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace inferbench {

namespace {

// Hyndman & Fan type 7 over n sorted values read through `at(rank)` as doubles.
template <typename At>
double type7(std::size_t n, double p, At at) {
    if (n == 0) return 0.0;
    const double h = static_cast<double>(n - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
    const auto lower = static_cast<std::size_t>(std::floor(h));
    const std::size_t upper = std::min(lower + 1, n - 1);
    const double low = at(lower);
    return low + (h - static_cast<double>(lower)) * (at(upper) - low);
}

// The summary's percentiles, each read through `percentile_of(p)`.
template <typename PercentileOf>
void set_percentiles(TimingSummary& s, PercentileOf percentile_of) {
    s.p50 = percentile_of(50);
    s.p90 = percentile_of(90);
    s.p95 = percentile_of(95);
    s.p99 = percentile_of(99);
    s.p999 = percentile_of(99.9);
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double p) {
    return type7(sorted.size(), p, [&](std::size_t rank) { return sorted[rank]; });
}

double percentile(const SortedValues& sorted, double p) {
    return type7(static_cast<std::size_t>(sorted.size()), p,
                 [&](std::size_t rank) { return static_cast<double>(sorted[static_cast<std::int64_t>(rank)]); });
}

TimingSummary summarize(const SortedValues& sorted, const Moments& moments) {
    TimingSummary s;
    if (sorted.empty()) return s;
    s.count = sorted.size();
    s.min = static_cast<double>(moments.min);
    s.max = static_cast<double>(moments.max);
    s.mean = moments.mean();
    s.stdev = moments.sample_stdev();
    s.cv_pct = s.mean > 0 ? 100.0 * s.stdev / s.mean : 0.0;
    set_percentiles(s, [&](double p) { return percentile(sorted, p); });
    return s;
}

namespace {

// LSD radix sort of int64 keys, 11 bits a pass; passes where every key has the same digit are skipped
// (nanosecond timings use the low three digits only).
void radix_sort(std::vector<std::uint64_t>& keys) {
    constexpr unsigned kBits = 11, kDigits = 6;
    constexpr std::size_t kBuckets = std::size_t{1} << kBits;
    constexpr std::uint64_t kMask = kBuckets - 1;
    std::vector<std::array<std::size_t, kBuckets>> counts(kDigits);
    for (auto& c : counts) c.fill(0);
    for (const std::uint64_t key : keys)
        for (unsigned d = 0; d < kDigits; ++d) ++counts[d][(key >> (d * kBits)) & kMask];
    std::vector<std::uint64_t> buffer(keys.size());
    for (unsigned d = 0; d < kDigits; ++d) {
        auto& count = counts[d];
        if (std::find(count.begin(), count.end(), keys.size()) != count.end()) continue;
        std::size_t offset = 0;
        for (auto& c : count) offset += std::exchange(c, offset);
        for (const std::uint64_t key : keys) buffer[count[(key >> (d * kBits)) & kMask]++] = key;
        keys.swap(buffer);
    }
}

}  // namespace

std::vector<double> sorted_values(std::span<const std::int64_t> values) {
    constexpr std::uint64_t kSign = std::uint64_t{1} << 63;  // negatives before positives, as unsigned
    std::vector<double> sorted;
    sorted.reserve(values.size());
    if (values.size() < 1024) {
        sorted.assign(values.begin(), values.end());
        std::sort(sorted.begin(), sorted.end());
        return sorted;
    }
    std::vector<std::uint64_t> keys;
    keys.reserve(values.size());
    for (const std::int64_t v : values) keys.push_back(static_cast<std::uint64_t>(v) ^ kSign);
    radix_sort(keys);
    for (const std::uint64_t key : keys) sorted.push_back(static_cast<double>(static_cast<std::int64_t>(key ^ kSign)));
    return sorted;
}

TimingSummary summarize(std::span<const std::int64_t> values) {
    return summarize_sorted(sorted_values(values));
}

TimingSummary summarize_sorted(std::span<const double> sorted) {
    TimingSummary s;
    if (sorted.empty()) return s;
    const auto n = static_cast<double>(sorted.size());
    s.count = static_cast<std::int64_t>(sorted.size());
    s.min = sorted.front();
    s.max = sorted.back();
    double sum = 0;
    for (double v : sorted) sum += v;
    s.mean = sum / n;
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stdev = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
    s.cv_pct = s.mean > 0 ? 100.0 * s.stdev / s.mean : 0.0;
    set_percentiles(s, [&](double p) { return percentile_sorted(sorted, p); });
    return s;
}

double throughput_per_s(std::int64_t batch_size, std::int64_t iterations, std::int64_t wall_ns) {
    if (wall_ns <= 0) return 0.0;
    return static_cast<double>(batch_size) * static_cast<double>(iterations) * 1e9 /
           static_cast<double>(wall_ns);
}

std::vector<std::string> timing_warnings(const TimingSummary& e2e, const WarningThresholds& thresholds) {
    std::vector<std::string> warnings;
    if (e2e.count < thresholds.min_iterations) {
        warnings.push_back(fmt::format(
            "only {} iterations measured (fewer than {}): percentiles are unreliable; raise --duration",
            e2e.count, thresholds.min_iterations));
    }
    if (e2e.cv_pct > thresholds.max_cv_pct) {
        warnings.push_back(fmt::format(
            "latency is unstable: coefficient of variation {:.1f}% exceeds {:.0f}%; check for other load, "
            "throttling or a too short warm-up",
            e2e.cv_pct, thresholds.max_cv_pct));
    }
    return warnings;
}

}  // namespace inferbench
