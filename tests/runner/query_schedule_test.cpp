// The server's Poisson arrivals: the same seed gives the same schedule, and the gaps are exponential at
// the asked rate (mean, coefficient of variation 1, counts per window with variance = mean, and the
// gaps' distribution against the exponential's by Kolmogorov-Smirnov).
#include "runner/load/query_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace inferbench::runner {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

std::vector<double> gaps_s(const std::vector<std::int64_t>& schedule) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < schedule.size(); ++i) gaps.push_back(static_cast<double>(schedule[i] - schedule[i - 1]) * 1e-9);
    return gaps;
}

TEST(QuerySchedule, SameSeedSameSchedule) {
    EXPECT_EQ(poisson_schedule(1000, kSecond, 1, 1'000'000, 7), poisson_schedule(1000, kSecond, 1, 1'000'000, 7));
    EXPECT_NE(poisson_schedule(1000, kSecond, 1, 1'000'000, 7), poisson_schedule(1000, kSecond, 1, 1'000'000, 8));
}

TEST(QuerySchedule, RunsUntilTheDurationAndTheMinimumWithinTheMaximum) {
    const auto schedule = poisson_schedule(1000, 2 * kSecond, 1, 1'000'000, 1);
    EXPECT_EQ(schedule.front(), 0);
    EXPECT_GE(schedule.back(), 2 * kSecond);
    EXPECT_LT(schedule[schedule.size() - 2], 2 * kSecond) << "stops at the first arrival past the duration";
    EXPECT_TRUE(std::is_sorted(schedule.begin(), schedule.end()));
    EXPECT_EQ(poisson_schedule(1000, 2 * kSecond, 5000, 1'000'000, 1).size(), 5000u) << "min_queries";
    EXPECT_EQ(poisson_schedule(1000, 2 * kSecond, 1, 700, 1).size(), 700u) << "max_queries";
    EXPECT_TRUE(poisson_schedule(0, kSecond, 1, 100, 1).empty());
}

TEST(QuerySchedule, GapsAreExponentialAtTheRate) {
    const double rate = 2500;
    const auto schedule = poisson_schedule(rate, 40 * kSecond, 1, 10'000'000, 42);
    auto gaps = gaps_s(schedule);
    const double n = static_cast<double>(gaps.size());
    ASSERT_GT(n, 90000);
    double mean = 0;
    for (double g : gaps) mean += g;
    mean /= n;
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    const double cv = std::sqrt(var / (n - 1)) / mean;
    // The mean of n exponential gaps has relative standard error 1/sqrt(n) (0.3% here): 1% is > 3 sigma.
    EXPECT_NEAR(mean * rate, 1.0, 0.01);
    EXPECT_NEAR(cv, 1.0, 0.015);
    // Kolmogorov-Smirnov against 1 - exp(-rate t): the 1% critical value is 1.63 / sqrt(n).
    std::sort(gaps.begin(), gaps.end());
    double d = 0;
    for (std::size_t i = 0; i < gaps.size(); ++i) {
        const double cdf = 1 - std::exp(-rate * gaps[i]);
        d = std::max({d, std::abs(cdf - static_cast<double>(i) / n), std::abs(cdf - static_cast<double>(i + 1) / n)});
    }
    EXPECT_LT(d, 1.63 / std::sqrt(n));
}

TEST(QuerySchedule, CountsPerWindowArePoisson) {
    // Arrivals in 10 ms windows at 2000/s: Poisson with mean 20, so variance 20 too (index of dispersion 1).
    const auto schedule = poisson_schedule(2000, 30 * kSecond, 1, 10'000'000, 3);
    std::vector<double> counts(3000, 0.0);
    for (const std::int64_t t : schedule)
        if (t < 30 * kSecond) counts[static_cast<std::size_t>(t / 10'000'000)] += 1;
    double mean = 0, var = 0;
    for (double c : counts) mean += c;
    mean /= static_cast<double>(counts.size());
    for (double c : counts) var += (c - mean) * (c - mean);
    var /= static_cast<double>(counts.size() - 1);
    EXPECT_NEAR(mean, 20, 0.5);
    EXPECT_NEAR(var / mean, 1.0, 0.1);
}

TEST(QuerySchedule, OfflineIsEverythingAtOnce) {
    EXPECT_EQ(offline_schedule(3), (std::vector<std::int64_t>{0, 0, 0}));
    // 1.1 x 2 s x 2 streams / 10 ms = 440 inferences, within [min, max].
    EXPECT_EQ(offline_inferences(0.010, 2, 2 * kSecond, 10, 1'000'000), 440);
    EXPECT_EQ(offline_inferences(0.010, 2, 2 * kSecond, 1000, 1'000'000), 1000);
    EXPECT_EQ(offline_inferences(0.010, 2, 2 * kSecond, 10, 100), 100);
    EXPECT_EQ(offline_inferences(0, 1, kSecond, 25, 1000), 25) << "no pace known: the minimum";
}

}  // namespace
}  // namespace inferbench::runner
