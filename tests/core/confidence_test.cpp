// The confidence intervals against values computed by hand (and printed tables of Student's t and the
// binomial), so that an interval in a report can be checked with a pencil.
#include "core/statistics/confidence.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace inferbench {
namespace {

TEST(Confidence, StudentTQuantilesMatchTheTables) {
    // Two-sided 95%: t(0.975, df) from any table.
    EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
    EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
    EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764, 1e-4);
    EXPECT_NEAR(student_t_quantile(0.975, 29), 2.0452, 1e-4);
    EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.9600, 1e-4);  // the normal's
    EXPECT_NEAR(student_t_quantile(0.025, 4), -2.7764, 1e-4);
    EXPECT_NEAR(student_t_cdf(0, 7), 0.5, 1e-12);
}

TEST(Confidence, BinomialCdfMatchesTheSumOfItsTerms) {
    // Binomial(20, 0.5): P(B <= 5) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20 = 21700 / 1048576.
    EXPECT_NEAR(binomial_cdf(5, 20, 0.5), 21700.0 / 1048576.0, 1e-12);
    EXPECT_NEAR(binomial_cdf(6, 20, 0.5), (21700.0 + 38760.0) / 1048576.0, 1e-12);
    EXPECT_NEAR(binomial_cdf(14, 20, 0.5), 1 - 21700.0 / 1048576.0, 1e-12);  // symmetric
    EXPECT_EQ(binomial_cdf(-1, 20, 0.5), 0);
    EXPECT_EQ(binomial_cdf(20, 20, 0.5), 1);
    // Binomial(3, 0.1): P(B <= 0) = 0.9^3.
    EXPECT_NEAR(binomial_cdf(0, 3, 0.1), 0.729, 1e-12);
}

TEST(Confidence, TIntervalOfThreeValues) {
    // 10, 12, 14: mean 12, s = 2, t(0.975, 2) = 4.302653; half-width 4.302653 x 2 / sqrt(3) = 4.968275.
    const std::vector<double> values = {10, 12, 14};
    const auto ci = t_interval(values);
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, 12 - 4.968275, 1e-5);
    EXPECT_NEAR(ci->high, 12 + 4.968275, 1e-5);
    EXPECT_FALSE(t_interval(std::vector<double>{5}));
}

TEST(Confidence, BatchMeansOfFewValuesIsTheTInterval) {
    // Six values, each its own batch: mean 3.5, s = sqrt(3.5) = 1.870829, t(0.975, 5) = 2.570582;
    // half-width 2.570582 x 1.870829 / sqrt(6) = 1.963314.
    const std::vector<double> values = {1, 2, 3, 4, 5, 6};
    const auto ci = batch_means_interval(values);
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, 3.5 - 1.963314, 1e-5);
    EXPECT_NEAR(ci->high, 3.5 + 1.963314, 1e-5);
}

TEST(Confidence, BatchMeansAverageConsecutiveIterations) {
    // 60 values in 30 batches of two: k and k + 2, so batch k's mean is k + 1 (1 .. 30). Their mean 15.5,
    // s = sqrt(77.5) = 8.803408, t(0.975, 29) = 2.045230: half-width 2.045230 x 8.803408 / sqrt(30) = 3.287247.
    // Taken as 60 independent values the half-width would be 2.27 (s = 8.79, t(0.975, 59) = 2.00, over
    // sqrt(60)).
    std::vector<std::int64_t> values;
    for (std::int64_t k = 0; k < 30; ++k) {
        values.push_back(k);
        values.push_back(k + 2);
    }
    const auto ci = batch_means_interval(values);
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, 15.5 - 3.287247, 1e-5);
    EXPECT_NEAR(ci->high, 15.5 + 3.287247, 1e-5);
    EXPECT_FALSE(batch_means_interval(std::vector<std::int64_t>{1}));
}

TEST(Confidence, MedianOfTwentyValuesFromTheSixthToTheFifteenth) {
    // Binomial(20, 0.5): P(B <= 5) = 0.0207 <= 0.025 < P(B <= 6) = 0.0577, so the lower bound is the 6th
    // value; P(B <= 13) = 0.9423 < 0.975 <= P(B <= 14) = 0.9793, so the upper bound is the 15th (the
    // textbook ranks for n = 20).
    std::vector<double> sorted;
    for (int i = 1; i <= 20; ++i) sorted.push_back(i * 10.0);
    const auto ci = quantile_interval(sorted, 0.5);
    ASSERT_TRUE(ci);
    EXPECT_EQ(ci->low, 60);
    EXPECT_EQ(ci->high, 150);
}

TEST(Confidence, ExtremePercentilesNeedEnoughValues) {
    // p99 of 100 values: P(B <= 99) = 1 - 0.99^100 = 0.634 < 0.975, so no value bounds it from above.
    std::vector<double> hundred(100);
    for (int i = 0; i < 100; ++i) hundred[static_cast<std::size_t>(i)] = i;
    EXPECT_FALSE(quantile_interval(hundred, 0.99));
    // A million values: about n p +- 1.96 sqrt(n p (1 - p)) = 990000 +- 195 ranks.
    std::vector<double> million(1'000'000);
    for (std::size_t i = 0; i < million.size(); ++i) million[i] = static_cast<double>(i);
    const auto ci = quantile_interval(million, 0.99);
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, 990000 - 195, 3);
    EXPECT_NEAR(ci->high, 990000 + 195, 3);
}

}  // namespace
}  // namespace inferbench
