#include "serving/arrival_schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "serving/random_draws.hpp"

namespace inferbench::serving {
namespace {

struct Moments {
    double mean = 0;
    double cv = 0;
};

Moments gap_moments(const std::vector<std::int64_t>& offsets) {
    double sum = 0;
    double sum_sq = 0;
    const auto n = static_cast<double>(offsets.size() - 1);
    for (std::size_t i = 1; i < offsets.size(); ++i) {
        const auto gap = static_cast<double>(offsets[i] - offsets[i - 1]);
        sum += gap;
        sum_sq += gap * gap;
    }
    const double mean = sum / n;
    return {mean, std::sqrt(sum_sq / n - mean * mean) / mean};
}

TEST(ArrivalSchedule, GapsHaveMeanOneOverRateAndCvOneOverSqrtBurstiness) {
    for (const double burstiness : {0.25, 0.5, 1.0, 2.0, 8.0}) {
        const auto offsets = arrival_offsets(20.0, burstiness, 200'001, 7);
        const Moments m = gap_moments(offsets);
        SCOPED_TRACE(burstiness);
        // 200,000 gaps: the sample mean's relative error is about cv / 447, far inside 2%.
        EXPECT_NEAR(m.mean, 50e6, 0.02 * 50e6);
        EXPECT_NEAR(m.cv, 1.0 / std::sqrt(burstiness), 0.04 / std::sqrt(burstiness));
    }
}

TEST(ArrivalSchedule, FirstAtZeroNonDecreasingAndSeeded) {
    const auto a = arrival_offsets(100.0, 0.5, 1000, 42);
    ASSERT_EQ(a.size(), 1000U);
    EXPECT_EQ(a.front(), 0);
    for (std::size_t i = 1; i < a.size(); ++i) EXPECT_GE(a[i], a[i - 1]);
    EXPECT_EQ(a, arrival_offsets(100.0, 0.5, 1000, 42));
    EXPECT_NE(a, arrival_offsets(100.0, 0.5, 1000, 43));
    EXPECT_TRUE(arrival_offsets(100.0, 1.0, 0, 1).empty());
}

TEST(ArrivalSchedule, PinnedValuesStayTheSame) {
    // What a seed gives must not change between builds or machines: stored runs name their seed.
    EXPECT_EQ(arrival_offsets(10.0, 1.0, 4, 1), (std::vector<std::int64_t>{0, 246958431, 253900690, 305506699}));
    EXPECT_EQ(arrival_offsets(10.0, 0.3, 4, 1), (std::vector<std::int64_t>{0, 1051528, 30771272, 133497446}));
    EXPECT_EQ(arrival_offsets(10.0, 4.0, 4, 1), (std::vector<std::int64_t>{0, 171983401, 214521965, 296925839}));
}

TEST(ArrivalSchedule, RefusesRatesBurstinessAndCountsOutOfBounds) {
    EXPECT_THROW(arrival_offsets(0.0, 1.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(-1.0, 1.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(std::nan(""), 1.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(INFINITY, 1.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(2 * kMaxArrivalRate, 1.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(1.0, 0.0, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(1.0, 2 * kMaxBurstiness, 10, 1), UserError);
    EXPECT_THROW(arrival_offsets(1.0, 1.0, -1, 1), UserError);
    EXPECT_THROW(arrival_offsets(1.0, 1.0, kMaxArrivals + 1, 1), UserError);
    try {
        arrival_offsets(1.0, 0.0, 10, 1);
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("burstiness"), std::string::npos);
    }
}

TEST(ArrivalSchedule, SlowRateStaysInRange) {
    const auto offsets = arrival_offsets(1e-9, kMinBurstiness, 100, 3);
    for (const auto t : offsets) EXPECT_LE(t, std::int64_t{1'000'000'000'000'000'000});
}

TEST(RandomDraws, NormalHasMeanZeroAndUnitDeviation) {
    SplitMix64 random(11);
    double sum = 0;
    double sum_sq = 0;
    constexpr int kDraws = 200'000;
    for (int i = 0; i < kDraws; ++i) {
        const double x = normal_draw(random);
        sum += x;
        sum_sq += x * x;
    }
    EXPECT_NEAR(sum / kDraws, 0.0, 0.01);
    EXPECT_NEAR(sum_sq / kDraws, 1.0, 0.02);
}

TEST(RandomDraws, GammaMeanIsItsShape) {
    for (const double shape : {0.1, 0.7, 1.0, 3.5}) {
        SplitMix64 random(5);
        double sum = 0;
        constexpr int kDraws = 200'000;
        for (int i = 0; i < kDraws; ++i) {
            const double x = gamma_draw(random, shape);
            ASSERT_GE(x, 0.0);
            sum += x;
        }
        EXPECT_NEAR(sum / kDraws, shape, 0.02 * shape + 0.002) << shape;
    }
}

TEST(RandomDraws, UnitDrawIsNeverZero) {
    SplitMix64 random(0);
    for (int i = 0; i < 10'000; ++i) {
        const double u = unit_draw(random);
        ASSERT_GT(u, 0.0);
        ASSERT_LE(u, 1.0);
    }
}

}  // namespace
}  // namespace inferbench::serving
