// LoadGen's early stopping against the numbers LoadGen itself prints (its summaries' "Early Stopping
// Result" lines, as published in MLPerf submissions and LoadGen issues) and against closed forms of the
// regularized incomplete beta function.
#include "core/statistics/early_stopping.hpp"
#include "core/statistics/confidence.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace inferbench::early_stopping {
namespace {

std::vector<std::int64_t> ramp(std::int64_t n) {
    std::vector<std::int64_t> values(static_cast<std::size_t>(n));
    std::iota(values.begin(), values.end(), 1);  // latency i + 1 ns: the k-th largest is n - k + 1
    return values;
}

TEST(EarlyStopping, IncompleteBetaMatchesClosedForms) {
    for (const double x : {0.01, 0.3, 0.5, 0.9, 0.999}) {
        EXPECT_NEAR(incomplete_beta(1, 1, x), x, 1e-12);
        EXPECT_NEAR(incomplete_beta(7, 1, x), std::pow(x, 7), 1e-12);
        EXPECT_NEAR(incomplete_beta(1, 5, x), 1 - std::pow(1 - x, 5), 1e-12);
    }
    EXPECT_EQ(incomplete_beta(3, 4, 0), 0);
    EXPECT_EQ(incomplete_beta(3, 4, 1), 1);
    // The binomial tail it stands for: P(at most 1 failure in 64 trials at 0.9) = 0.9^64 + 64 0.1 0.9^63.
    EXPECT_NEAR(odds(63, 1, 0.9), std::pow(0.9, 64) + 64 * 0.1 * std::pow(0.9, 63), 1e-12);
}

TEST(EarlyStopping, TheFewestQueriesLoadGenAsksFor) {
    // "Need to process at least 64 queries for early stopping" (p90) and "would need to process at least
    // 662 total queries" (p99), as LoadGen's summaries print them.
    EXPECT_EQ(min_passing_queries(1, 0.90) + 1, 64);
    EXPECT_EQ(min_passing_queries(1, 0.99) + 1, 662);
    // With no query over the bound: 0.99^h < 0.01 first at h = 459.
    EXPECT_EQ(min_passing_queries(0, 0.99), 459);
}

TEST(EarlyStopping, DiscardsWhatLoadGenDiscards) {
    // (queries processed, "Would discard N highest latency queries") from LoadGen summaries, p90.
    const std::pair<std::int64_t, std::int64_t> printed[] = {{100, 2}, {201, 9}, {659, 47}, {708, 51}, {79944, 7796}};
    for (const auto& [n, discarded] : printed) {
        const auto values = ramp(n);
        const PercentileEstimate estimate = percentile_estimate(values, 0.90);
        EXPECT_TRUE(estimate.enough) << n;
        EXPECT_EQ(estimate.discarded, discarded) << n;
        // The slowest kept: with t - 1 = discarded dropped, the t-th largest.
        EXPECT_EQ(estimate.estimate_ns, n - discarded) << n;
    }
}

TEST(EarlyStopping, TooFewQueriesGiveNoEstimate) {
    const auto values = ramp(58);  // "Only processed 58 queries. Need to process at least 64"
    const PercentileEstimate p90 = percentile_estimate(values, 0.90);
    EXPECT_FALSE(p90.enough);
    EXPECT_EQ(p90.queries_needed, 64);
    EXPECT_EQ(p90.estimate_ns, 0);
    EXPECT_FALSE(percentile_estimate(ramp(659), 0.99).enough) << "662 needed for p99";
    EXPECT_TRUE(percentile_estimate(ramp(708), 0.99).enough);
}

TEST(EarlyStopping, ServerNeedsMoreQueriesTheMoreAreOverTheBound) {
    EXPECT_EQ(server_check(459, 0, 0.99).queries_needed, 459);
    EXPECT_TRUE(server_check(459, 0, 0.99).satisfied);
    EXPECT_FALSE(server_check(458, 0, 0.99).satisfied);
    EXPECT_EQ(server_check(0, 1, 0.99).queries_needed, 662);
    const auto ten = server_check(2000, 10, 0.99);
    EXPECT_EQ(ten.overlatency, 10);
    EXPECT_EQ(ten.queries_needed, min_passing_queries(10, 0.99) + 10);
    EXPECT_FALSE(ten.satisfied);
    EXPECT_TRUE(server_check(ten.queries_needed, 10, 0.99).satisfied);
    // 1% over the bound never passes a p99 bound with confidence: the count needed outgrows the run.
    EXPECT_FALSE(server_check(100000, 1000, 0.99).satisfied);
}

TEST(EarlyStopping, LoadGensPercentileIsARank) {
    const auto values = ramp(100);
    EXPECT_EQ(loadgen_percentile(values, 0.99), 100);  // sorted[floor(100 x 0.99)] = sorted[99]
    EXPECT_EQ(loadgen_percentile(values, 0.90), 91);
    EXPECT_EQ(loadgen_percentile({}, 0.90), 0);
}

}  // namespace
}  // namespace inferbench::early_stopping
