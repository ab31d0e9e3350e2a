// find_peak's bisection against systems whose highest passing rate is known.
#include "runner/find_peak.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

std::function<PeakStep(double)> passes_up_to(double limit) {
    return [limit](double qps) { return PeakStep{qps, 1000, 0, qps <= limit}; };
}

TEST(FindPeak, BisectsToWithinItsPrecision) {
    const PeakSearch search = search_peak(1000, passes_up_to(730));
    EXPECT_LE(search.peak_qps, 730);
    EXPECT_GE(search.peak_qps, 730 * (1 - 2 * kPeakPrecision));
    EXPECT_LE(static_cast<int>(search.steps.size()), kMaxPeakSteps);
    EXPECT_DOUBLE_EQ(search.steps.front().qps, 1250) << "first: 1.25 x the capacity, which must fail";
    EXPECT_FALSE(search.steps.front().passed);
}

TEST(FindPeak, WidensWhenTheCapacityWasUnderestimated) {
    const PeakSearch search = search_peak(1000, passes_up_to(3000));
    EXPECT_TRUE(search.steps[0].passed);   // 1250
    EXPECT_TRUE(search.steps[1].passed);   // 2500
    EXPECT_FALSE(search.steps[2].passed);  // 5000
    EXPECT_LE(search.peak_qps, 3000);
    EXPECT_GE(search.peak_qps, 2500);
}

TEST(FindPeak, NothingPassingIsAPeakOfZeroFoundWithoutCrawlingToZero) {
    const PeakSearch search = search_peak(1000, passes_up_to(0));
    EXPECT_EQ(search.peak_qps, 0);
    // 1250, 625, 312.5, 156.25, 78.125; the next, 39, is below 1/16 of the capacity.
    ASSERT_EQ(search.steps.size(), 5u);
    EXPECT_DOUBLE_EQ(search.steps.back().qps, 78.125);
}

}  // namespace
}  // namespace inferbench
