#include "core/statistics/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace inferbench {
namespace {

TEST(Statistics, HandComputedSummaryOfFiveValues) {
    // values 10, 20, 30, 40, 100: mean 40; deviations -30 -20 -10 0 60; squares 900+400+100+0+3600 = 5000;
    // sample variance 5000 / 4 = 1250; stdev 35.3553...; cv 88.388%.
    const std::vector<std::int64_t> values = {30, 10, 100, 20, 40};
    const TimingSummary s = summarize(values);
    EXPECT_EQ(s.count, 5);
    EXPECT_DOUBLE_EQ(s.min, 10);
    EXPECT_DOUBLE_EQ(s.max, 100);
    EXPECT_DOUBLE_EQ(s.mean, 40);
    EXPECT_NEAR(s.stdev, 35.355339059, 1e-8);
    EXPECT_NEAR(s.cv_pct, 88.388347648, 1e-8);
    // Type 7: h = 4 * p; p50 -> h = 2 -> 30; p90 -> h = 3.6 -> 40 + 0.6 * 60 = 76;
    // p95 -> h = 3.8 -> 40 + 0.8 * 60 = 88; p99 -> h = 3.96 -> 97.6; p99.9 -> h = 3.996 -> 99.76.
    EXPECT_DOUBLE_EQ(s.p50, 30);
    EXPECT_DOUBLE_EQ(s.p90, 76);
    EXPECT_DOUBLE_EQ(s.p95, 88);
    EXPECT_NEAR(s.p99, 97.6, 1e-9);
    EXPECT_NEAR(s.p999, 99.76, 1e-9);
}

TEST(Statistics, PercentileInterpolatesBetweenRanks) {
    const std::vector<double> sorted = {1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 0), 1);
    EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 100), 4);
    EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 50), 2.5);   // h = 1.5
    EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 25), 1.75);  // h = 0.75
    EXPECT_DOUBLE_EQ(percentile_sorted(std::vector<double>{}, 50), 0);
}

TEST(Statistics, SingleValueHasNoSpread) {
    const std::vector<std::int64_t> values = {7};
    const TimingSummary s = summarize(values);
    EXPECT_DOUBLE_EQ(s.stdev, 0);
    EXPECT_DOUBLE_EQ(s.cv_pct, 0);
    EXPECT_DOUBLE_EQ(s.p99, 7);
}

// Past a thousand values the integers are radix sorted: the same order as a comparison sort, negative
// and 63-bit values included, and the same summary.
TEST(Statistics, SortedValuesMatchAComparisonSort) {
    std::vector<std::int64_t> values;
    std::uint64_t state = 42;
    for (int i = 0; i < 100'000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto r = static_cast<std::int64_t>(state >> 1);
        values.push_back(i % 7 == 0 ? r : i % 5 == 0 ? -(r % 1'000'000) : 900'000 + r % 50'000);
    }
    values.push_back(std::numeric_limits<std::int64_t>::min());
    values.push_back(std::numeric_limits<std::int64_t>::max());
    std::vector<double> expected(values.begin(), values.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted_values(values), expected);
    const std::vector<std::int64_t> same(5000, 7);
    EXPECT_EQ(sorted_values(same), std::vector<double>(5000, 7.0)) << "every digit alike: no pass";
    EXPECT_DOUBLE_EQ(summarize(values).p50, percentile_sorted(expected, 50));
}

TEST(Statistics, EmptyInputGivesZeroCount) { EXPECT_EQ(summarize(std::vector<std::int64_t>{}).count, 0); }

TEST(Statistics, ThroughputIsBatchTimesIterationsOverWallTime) {
    EXPECT_DOUBLE_EQ(throughput_per_s(8, 100, 2'000'000'000), 400.0);
    EXPECT_DOUBLE_EQ(throughput_per_s(1, 10, 0), 0.0);
}

TEST(Statistics, WarnsAboutUnstableAndTooFewIterations) {
    TimingSummary s;
    s.count = 5;
    s.cv_pct = 25;
    const auto warnings = timing_warnings(s);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("only 5 iterations"), std::string::npos);
    EXPECT_NE(warnings[1].find("unstable"), std::string::npos);
    s.count = 1000;
    s.cv_pct = 2;
    EXPECT_TRUE(timing_warnings(s).empty());
}

}  // namespace
}  // namespace inferbench
