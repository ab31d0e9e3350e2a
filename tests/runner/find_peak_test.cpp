// find_peak's bisection against systems whose highest passing rate is known.
#include "runner/load/find_peak.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace inferbench::runner {
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

// A system faster than max_iterations lets a step run for its duration: no rate above max_qps is tried (its
// step would be cut short, INVALID for that alone), and passing at max_qps ends the search there, said so.
TEST(FindPeak, NoRateAboveWhatMaxIterationsHoldsIsTried) {
    const PeakSearch search = search_peak(1000, passes_up_to(3000), kMaxPeakSteps, kPeakPrecision, 800);
    ASSERT_EQ(search.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(search.steps.front().qps, 800);
    EXPECT_DOUBLE_EQ(search.peak_qps, 800);
    EXPECT_TRUE(search.at_max);

    const PeakSearch below = search_peak(1000, passes_up_to(700), kMaxPeakSteps, kPeakPrecision, 800);
    EXPECT_DOUBLE_EQ(below.steps.front().qps, 800);
    EXPECT_FALSE(below.at_max);
    EXPECT_LE(below.peak_qps, 700);
    EXPECT_GE(below.peak_qps, 700 * (1 - 2 * kPeakPrecision));
    for (const PeakStep& step : below.steps) EXPECT_LE(step.qps, 800);
}

TEST(FindPeak, TheHighestRateAStepsScheduleFitsInMaxIterations) {
    EXPECT_DOUBLE_EQ(max_peak_qps(1'000'000, 1'000'000'000), 900'000);  // a tenth spare
    EXPECT_DOUBLE_EQ(max_peak_qps(1'000'000, 5'000'000'000), 180'000);
    EXPECT_TRUE(std::isinf(max_peak_qps(0, 1'000'000'000)));  // max_iterations 0: no limit
}

PeakSearch searched(std::initializer_list<std::pair<double, bool>> steps) {
    PeakSearch search;
    for (const auto& [qps, passed] : steps) search.steps.push_back({qps, 1000, 0, passed});
    return search;
}

TEST(ConfirmPeak, TheHighestPassingRateThatPassesAgain) {
    // The H200's search: 585.8 passed its step and then failed its second run; 565.6, next below, passes again.
    const PeakSearch search = searched({{1293, false}, {646, false}, {323, true}, {485, true}, {566, true},
                                        {606, false}, {586, true}, {596, false}});
    std::vector<double> tried;
    const PeakConfirmation c = confirm_peak(search, [&](double qps) {
        tried.push_back(qps);
        return qps < 570;
    });
    EXPECT_EQ(tried, (std::vector<double>{586, 566}));
    EXPECT_EQ(c.peak_qps, 566);
    EXPECT_EQ(c.last_tried_qps, 566);
    EXPECT_EQ(c.failed, std::vector<double>{586});
}

TEST(ConfirmPeak, AtMostItsTriesAndNothingWhereNothingPassed) {
    const PeakSearch search = searched({{400, true}, {300, true}, {200, true}, {100, true}, {500, false}});
    int runs = 0;
    const PeakConfirmation none = confirm_peak(search, [&](double) { return ++runs, false; });
    EXPECT_EQ(runs, kPeakConfirmations);
    EXPECT_EQ(none.peak_qps, 0);
    EXPECT_EQ(none.last_tried_qps, 200) << "the run kept is the last made";
    EXPECT_EQ(none.failed, (std::vector<double>{400, 300, 200}));
    runs = 0;
    const PeakConfirmation nothing = confirm_peak(searched({{1250, false}, {625, false}}), [&](double) { return ++runs, true; });
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(nothing.peak_qps, 0);
    EXPECT_EQ(nothing.last_tried_qps, 0);
}

}  // namespace
}  // namespace inferbench::runner
