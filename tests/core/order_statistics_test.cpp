// Order statistics selected in passes (core/statistics/order_statistics) give what the sorted values give: the timing
// summary of core/statistics/statistics (type 7 percentiles bit for bit, the mean bit for bit below 2^53, the sample stdev
// to 1e-12), the order-statistics intervals, LoadGen's early-stopping estimates and counts over a bound.
#include "core/statistics/order_statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/statistics/confidence.hpp"
#include "core/statistics/early_stopping.hpp"
#include "core/statistics/statistics.hpp"

namespace inferbench {
namespace {

// Everything the tests read of sorted values (what a summary reads).
struct Read {
    TimingSummary timing;
    std::optional<Interval> p50, p90, p99;
    early_stopping::PercentileEstimate p90_estimate, p99_estimate;
    std::int64_t loadgen_p99 = 0, above = 0;
};

Read read_all(const SortedValues& sorted, const Moments& moments, std::int64_t bound) {
    Read r;
    r.timing = summarize(sorted, moments);
    r.p50 = quantile_interval(sorted, 0.50);
    r.p90 = quantile_interval(sorted, 0.90);
    r.p99 = quantile_interval(sorted, 0.99);
    if (!sorted.empty()) {
        r.p90_estimate = early_stopping::percentile_estimate(sorted, 0.90);
        r.p99_estimate = early_stopping::percentile_estimate(sorted, 0.99);
    }
    r.loadgen_p99 = early_stopping::loadgen_percentile(sorted, 0.99);
    r.above = sorted.count_above(bound);
    return r;
}

struct Streamed {
    Read read;
    int passes = 0;
};

// The values as a summary of a stored benchmark reads them: a counting pass, the ranks asked of a recorder,
// then selection passes until every rank is known.
Streamed streamed(const std::vector<std::int64_t>& values, std::int64_t bound) {
    RankSelector selector;
    for (const std::int64_t v : values) selector.count(v);
    Streamed out;
    out.passes = 1;
    if (!values.empty()) {
        const SortedValues recorder = SortedValues::recorder(selector.moments().count);
        (void)read_all(recorder, selector.moments(), bound);
        selector.ask(recorder);
    }
    while (selector.needs_pass()) {
        for (const std::int64_t v : values) selector.take(v);
        selector.end_pass();
        ++out.passes;
    }
    out.read = read_all(selector.sorted(), selector.moments(), bound);
    return out;
}

// The same read of all the values held and sorted, with the summary of core/statistics/statistics' summarize().
Read reference(const std::vector<std::int64_t>& values, std::int64_t bound) {
    std::vector<std::int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> as_double(sorted.begin(), sorted.end());
    Read r = read_all(SortedValues(sorted), Moments{}, bound);
    r.timing = summarize(values);
    r.p50 = quantile_interval(std::span<const double>(as_double), 0.50);
    r.p90 = quantile_interval(std::span<const double>(as_double), 0.90);
    r.p99 = quantile_interval(std::span<const double>(as_double), 0.99);
    return r;
}

void expect_same(const std::vector<std::int64_t>& values, bool exact_mean = true) {
    const std::int64_t bound = values.empty() ? 0 : values[values.size() / 2];
    const Read want = reference(values, bound);
    const Read got = streamed(values, bound).read;
    EXPECT_EQ(got.timing.count, want.timing.count);
    EXPECT_EQ(got.timing.min, want.timing.min);
    EXPECT_EQ(got.timing.max, want.timing.max);
    if (exact_mean) {
        EXPECT_EQ(got.timing.mean, want.timing.mean);
    } else {
        // Summed as doubles in sorted order, partial sums beyond 2^53 round at every step (here by about 1e-13
        // of the mean); the exact sum rounds once.
        EXPECT_NEAR(got.timing.mean, want.timing.mean, std::abs(want.timing.mean) * 1e-9);
    }
    EXPECT_NEAR(got.timing.stdev, want.timing.stdev, want.timing.stdev * 1e-12);
    EXPECT_NEAR(got.timing.cv_pct, want.timing.cv_pct, std::abs(want.timing.cv_pct) * 1e-12);
    EXPECT_EQ(got.timing.p50, want.timing.p50);
    EXPECT_EQ(got.timing.p90, want.timing.p90);
    EXPECT_EQ(got.timing.p95, want.timing.p95);
    EXPECT_EQ(got.timing.p99, want.timing.p99);
    EXPECT_EQ(got.timing.p999, want.timing.p999);
    EXPECT_EQ(got.p50, want.p50);
    EXPECT_EQ(got.p90, want.p90);
    EXPECT_EQ(got.p99, want.p99);
    EXPECT_EQ(got.p90_estimate.enough, want.p90_estimate.enough);
    EXPECT_EQ(got.p90_estimate.estimate_ns, want.p90_estimate.estimate_ns);
    EXPECT_EQ(got.p99_estimate.estimate_ns, want.p99_estimate.estimate_ns);
    EXPECT_EQ(got.p99_estimate.discarded, want.p99_estimate.discarded);
    EXPECT_EQ(got.loadgen_p99, want.loadgen_p99);
    EXPECT_EQ(got.above, want.above);
}

TEST(OrderStatistics, RandomValuesAcrossManyMagnitudesGiveTheSortedValuesFigures) {
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> exponent(2, 10);
    std::vector<std::int64_t> values;
    for (int i = 0; i < 200'000; ++i) values.push_back(static_cast<std::int64_t>(std::pow(10.0, exponent(random))));
    expect_same(values);
}

TEST(OrderStatistics, SkewedLatenciesGiveTheSortedValuesFigures) {
    std::mt19937_64 random(11);
    std::lognormal_distribution<double> latency(13.8, 0.4);  // about 1 ms, a long right tail
    std::vector<std::int64_t> values;
    for (int i = 0; i < 300'000; ++i) values.push_back(static_cast<std::int64_t>(latency(random)));
    for (int i = 0; i < 50; ++i) values.push_back(2'000'000'000);  // far outliers
    expect_same(values);
}

TEST(OrderStatistics, TiedValuesGiveTheSortedValuesFigures) {
    std::vector<std::int64_t> values(150'000, 1'000'000);
    expect_same(values);
    values.assign(100'000, 40);  // below 4096: a bucket of its own
    values.push_back(41);
    expect_same(values);
}

TEST(OrderStatistics, ManyValuesInTheBucketOfAnAskedRankAreNarrowedInAnotherPass) {
    // 300 000 values within 256 ns of 1 ms: the first pass's bucket at 2^20 is 256 ns wide and holds them all,
    // more than are collected at once, so a pass splits it into 1 ns buckets.
    std::mt19937_64 random(3);
    std::uniform_int_distribution<std::int64_t> near(1'048'576, 1'048'576 + 255);
    std::vector<std::int64_t> values;
    for (int i = 0; i < 300'000; ++i) values.push_back(near(random));
    expect_same(values);
    EXPECT_EQ(streamed(values, 0).passes, 2) << "resolved from the split buckets, none collected";
}

TEST(OrderStatistics, NoneOneAndTwoValues) {
    expect_same({});
    expect_same({5});
    expect_same({0});
    expect_same({7, 3});
    expect_same({1'000'000'000'000, -2});
}

TEST(OrderStatistics, HugeAndNegativeValues) {
    std::mt19937_64 random(5);
    std::uniform_int_distribution<std::int64_t> any(std::numeric_limits<std::int64_t>::min() / 4,
                                                    std::numeric_limits<std::int64_t>::max() / 4);
    std::vector<std::int64_t> values;
    for (int i = 0; i < 100'000; ++i) values.push_back(any(random));
    values.push_back(std::numeric_limits<std::int64_t>::max());
    values.push_back(std::numeric_limits<std::int64_t>::min());
    // The sorted pass's double sum rounds above 2^53; the exact one is rounded once, at the end.
    expect_same(values, false);
}

TEST(OrderStatistics, ARankNotSelectedIsAnError) {
    RankSelector selector;
    for (std::int64_t v = 0; v < 10; ++v) selector.count(v);
    const SortedValues recorder = SortedValues::recorder(10);
    (void)recorder[3];
    selector.ask(recorder);
    const SortedValues sorted = selector.sorted();
    EXPECT_EQ(sorted[3], 3);
    EXPECT_THROW((void)sorted[4], std::logic_error);
    EXPECT_THROW((void)sorted.count_above(2), std::logic_error);
}

// Batch means as they were computed over the whole span: batch k is [k n / b, (k + 1) n / b).
std::optional<Interval> batch_means_of_span(std::span<const double> values) {
    const std::size_t n = values.size(), batches = std::min<std::size_t>(kBatches, n);
    std::vector<double> means(batches);
    double total = 0;
    for (std::size_t k = 0; k < batches; ++k) {
        const std::size_t begin = k * n / batches, end = (k + 1) * n / batches;
        double sum = 0;
        for (std::size_t i = begin; i < end; ++i) sum += values[i];
        total += sum;
        means[k] = sum / static_cast<double>(end - begin);
    }
    const auto around_means = t_interval(means);
    if (!around_means) return std::nullopt;
    const double shift = total / static_cast<double>(n) - (around_means->low + around_means->high) / 2;
    return Interval{around_means->low + shift, around_means->high + shift};
}

TEST(OrderStatistics, BatchMeansOneAtATimeEqualThoseOfTheWholeSpan) {
    std::mt19937_64 random(9);
    std::uniform_real_distribution<double> value(1, 1e6);
    for (const std::size_t n : {2u, 29u, 30u, 31u, 1000u, 12'345u}) {
        std::vector<double> values;
        for (std::size_t i = 0; i < n; ++i) values.push_back(std::floor(value(random)));
        BatchMeans means(static_cast<std::int64_t>(n));
        for (const double v : values) means.add(v);
        const auto got = means.interval();
        const auto want = batch_means_of_span(values);
        ASSERT_TRUE(got && want);
        EXPECT_NEAR(got->low, want->low, 1e-9 * std::abs(want->low)) << n;
        EXPECT_NEAR(got->high, want->high, 1e-9 * std::abs(want->high)) << n;
    }
}

}  // namespace
}  // namespace inferbench
