// A serving sweep's Pareto front, goodput knee and saturation point on hand-made points.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/serving_sweep.hpp"
#include "core/error.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SweepPoint point(std::int64_t id, double load, double user, double system, std::optional<std::int64_t> gpus = 2) {
    SweepPoint p;
    p.benchmark_id = id;
    p.load = load;
    p.user_tokens_per_s = user;
    p.system_tokens_per_s = system;
    p.gpus = gpus;
    return p;
}

SweepPoint with_goodput(SweepPoint p, std::optional<double> fraction) {
    p.goodput_fraction = fraction;
    return p;
}

SweepPoint with_ttft(SweepPoint p, double p50_ms) {
    p.ttft_p50_ns = p50_ms * 1e6;
    return p;
}

TEST(ServingSweep, PerGpuIsSystemOverGpusAndUnknownWithoutACount) {
    EXPECT_DOUBLE_EQ(*tokens_per_s_per_gpu(point(1, 1, 50, 400, 4)), 100.0);
    EXPECT_FALSE(tokens_per_s_per_gpu(point(1, 1, 50, 400, std::nullopt)));
    auto unknown_rate = point(1, 1, 50, 400, 4);
    unknown_rate.system_tokens_per_s.reset();
    EXPECT_FALSE(tokens_per_s_per_gpu(unknown_rate));
}

TEST(ServingSweep, LoadOrderIsAscendingAndRefusesRepeatedOrNonPositiveLoads) {
    const std::vector<SweepPoint> points = {point(1, 8, 1, 1), point(2, 1, 1, 1), point(3, 4, 1, 1)};
    EXPECT_THAT(load_order(points), ElementsAre(1u, 2u, 0u));
    const std::vector<SweepPoint> repeated = {point(1, 2, 1, 1), point(2, 2, 1, 1)};
    try {
        load_order(repeated);
        FAIL() << "expected a UserError";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("benchmarks 1 and 2 have the same load 2"));
    }
    const std::vector<SweepPoint> zero = {point(1, 0, 1, 1)};
    EXPECT_THROW(load_order(zero), UserError);
}

TEST(ServingSweep, ParetoFrontKeepsOnlyUndominatedPointsInAscendingPerUserRate) {
    // Concurrency 1..16 of a server that saturates at 8: per-user rate falls with load, throughput rises and then
    // falls back at 16 (dominated by 8, which is faster per user and higher per GPU).
    const std::vector<SweepPoint> points = {point(1, 1, 100, 100), point(2, 2, 95, 190), point(3, 4, 80, 320),
                                            point(4, 8, 50, 400), point(5, 16, 24, 384)};
    const auto front = pareto_front(points);
    EXPECT_EQ(front.axis, ThroughputAxis::per_gpu);
    EXPECT_THAT(front.points, ElementsAre(3u, 2u, 1u, 0u));
    EXPECT_TRUE(front.left_out.empty());
}

TEST(ServingSweep, ParetoFrontDropsEqualPointsDominatedInOneCoordinate) {
    const std::vector<SweepPoint> points = {point(1, 1, 50, 100), point(2, 2, 50, 120), point(3, 3, 50, 120)};
    // 1 is dominated (same per-user, lower throughput); 2 and 3 tie and neither dominates the other.
    EXPECT_THAT(pareto_front(points).points, ElementsAre(1u, 2u));
}

TEST(ServingSweep, ParetoFrontUsesPerServerWhenAGpuCountIsUnknownAndLeavesOutPartialPoints) {
    std::vector<SweepPoint> points = {point(1, 1, 100, 100, std::nullopt), point(2, 2, 90, 180), point(3, 4, 1, 1)};
    points[2].user_tokens_per_s.reset();  // no request finished
    const auto front = pareto_front(points);
    EXPECT_EQ(front.axis, ThroughputAxis::per_server);
    EXPECT_EQ(to_string(front.axis), "output tokens/s per server");
    EXPECT_THAT(front.points, ElementsAre(1u, 0u));
    EXPECT_THAT(front.left_out, ElementsAre(2u));
}

TEST(ServingSweep, KneeIsTheHighestLoadBeforeGoodputFirstFalls) {
    // Given out of order; 8 misses the target, 16 meets it again (noise): the knee stays at 4.
    const std::vector<SweepPoint> points = {with_goodput(point(1, 8, 1, 1), 0.90), with_goodput(point(2, 1, 1, 1), 1.0),
                                            with_goodput(point(3, 16, 1, 1), 0.995), with_goodput(point(4, 4, 1, 1), 0.99),
                                            with_goodput(point(5, 2, 1, 1), 1.0)};
    const auto knee = goodput_knee(points);
    EXPECT_DOUBLE_EQ(knee.target, 0.99);
    ASSERT_TRUE(knee.point);
    EXPECT_EQ(*knee.point, 3u);  // load 4: exactly at the target counts
    ASSERT_TRUE(knee.next);
    EXPECT_EQ(*knee.next, 0u);  // load 8
    EXPECT_TRUE(knee.why_none.empty());
}

TEST(ServingSweep, KneeAtTheHighestLoadIsALowerBoundWithNoNext) {
    const std::vector<SweepPoint> points = {with_goodput(point(1, 1, 1, 1), 1.0), with_goodput(point(2, 2, 1, 1), 1.0)};
    const auto knee = goodput_knee(points, 0.95);
    ASSERT_TRUE(knee.point);
    EXPECT_EQ(*knee.point, 1u);
    EXPECT_FALSE(knee.next);
}

TEST(ServingSweep, NoKneeWhereTheLowestLoadMissesOrItsGoodputIsUnknown) {
    const std::vector<SweepPoint> missing = {with_goodput(point(1, 1, 1, 1), 0.5), with_goodput(point(2, 2, 1, 1), 1.0)};
    const auto knee = goodput_knee(missing);
    EXPECT_FALSE(knee.point);
    EXPECT_THAT(knee.why_none, HasSubstr("the lowest load (1) has a goodput of 50.0%, under the target 99.0%"));
    const std::vector<SweepPoint> unknown = {with_goodput(point(1, 1, 1, 1), std::nullopt)};
    EXPECT_THAT(goodput_knee(unknown).why_none, HasSubstr("unknown"));
    // An unknown goodput after known ones ends the knee's run there: nothing past it is claimed.
    const std::vector<SweepPoint> gap = {with_goodput(point(1, 1, 1, 1), 1.0), with_goodput(point(2, 2, 1, 1), std::nullopt),
                                         with_goodput(point(3, 4, 1, 1), 1.0)};
    const auto stopped = goodput_knee(gap);
    EXPECT_EQ(*stopped.point, 0u);
    EXPECT_EQ(*stopped.next, 1u);
}

TEST(ServingSweep, SaturationIsTheLowestLoadAfterWhichThroughputStopsWhileTtftGrows) {
    // 1 -> 2 -> 4 scale; 4 -> 8 gains 5% for +100% load (under 20% of it) with TTFT +80%; 16 gains nothing more.
    const std::vector<SweepPoint> points = {with_ttft(point(1, 1, 100, 100), 50), with_ttft(point(2, 2, 95, 190), 52),
                                            with_ttft(point(3, 4, 90, 360), 55), with_ttft(point(4, 8, 47, 378), 99),
                                            with_ttft(point(5, 16, 23, 380), 400)};
    const auto s = saturation(points);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->point, 2u);
    EXPECT_EQ(s->next, 3u);
    EXPECT_DOUBLE_EQ(s->load_growth, 1.0);
    EXPECT_NEAR(s->throughput_growth, 0.05, 1e-12);
    EXPECT_NEAR(s->ttft_growth, 0.8, 1e-12);
    EXPECT_DOUBLE_EQ(s->peak_tokens_per_s, 380);
}

TEST(ServingSweep, AFlatStepThatThroughputLaterClimbsPastIsNoSaturation) {
    // 2 -> 4 is flat with TTFT up, but 8 is far above 2 again: the flat step was noise, the server not saturated.
    const std::vector<SweepPoint> points = {with_ttft(point(1, 1, 100, 100), 50), with_ttft(point(2, 2, 95, 190), 50),
                                            with_ttft(point(3, 4, 50, 195), 80), with_ttft(point(4, 8, 90, 700), 85)};
    EXPECT_FALSE(saturation(points));
}

TEST(ServingSweep, FlatThroughputWithoutTtftGrowthIsNoSaturation) {
    // A client-bound sweep: throughput flat, TTFT flat (requests do not wait).
    const std::vector<SweepPoint> points = {with_ttft(point(1, 1, 100, 100), 50), with_ttft(point(2, 2, 50, 101), 51),
                                            with_ttft(point(3, 4, 25, 102), 52)};
    EXPECT_FALSE(saturation(points));
}

TEST(ServingSweep, SaturationSkipsPointsWithoutBothFiguresAndNeedsTwo) {
    std::vector<SweepPoint> points = {with_ttft(point(1, 1, 100, 100), 50), with_ttft(point(2, 2, 95, 102), 90)};
    points[1].system_tokens_per_s.reset();
    EXPECT_FALSE(saturation(points));
    points.push_back(with_ttft(point(3, 4, 25, 103), 200));
    const auto s = saturation(points);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->point, 0u);
    EXPECT_EQ(s->next, 2u);
}

}  // namespace
}  // namespace inferbench::analysis

namespace inferbench::analysis {
namespace {

store::BenchmarkRecord serving_cell_record(std::int64_t id, std::string variant, std::string scenario_json) {
    store::BenchmarkRecord b;
    b.benchmark_id = id;
    b.run_id = 1;
    b.model = "llama-tiny";
    b.backend = "openai";
    b.device = "cpu";
    b.precision = "fp32";
    b.variant = std::move(variant);
    b.status = BenchmarkStatus::ok;
    b.settings_json = std::move(scenario_json);
    return b;
}

ServingSummary serving_of(double system, double user_p50, double ttft_p50_ns, std::int64_t sent, std::int64_t ok) {
    ServingSummary s;
    s.counts.sent = sent;
    s.counts.ok = ok;
    s.output_tokens_per_s = system;
    TimingSummary per_user;
    per_user.count = ok;
    per_user.p50 = user_p50;
    s.output_tokens_per_s_per_user = per_user;
    LatencyDistribution ttft;
    ttft.ns.count = ok;
    ttft.ns.p50 = ttft_p50_ns;
    ttft.ns.p99 = 2 * ttft_p50_ns;
    s.ttft = ttft;
    return s;
}

TEST(ServingSweeps, CellsOfOneServerGroupByLoadKindAndVariantWithoutTheLoad) {
    const ServingSummary a = serving_of(100, 50, 1e7, 10, 10), b = serving_of(180, 45, 2e7, 10, 9);
    const std::string concurrency2 = R"({"duration_ns": 1000000000, "scenario": {"scenario": "concurrency", "concurrency": 2}})";
    const std::string concurrency1 = R"({"duration_ns": 1000000000, "scenario": {"scenario": "concurrency", "concurrency": 1}})";
    const std::string rate = R"({"duration_ns": 1000000000, "scenario": {"scenario": "server", "target_qps": 4.5}})";
    const std::vector<ServingCell> cells = {
        {serving_cell_record(1, "slots=4 concurrency=2", concurrency2), &b, 1},
        {serving_cell_record(2, "slots=4 concurrency=1", concurrency1), &a, 1},
        {serving_cell_record(3, "slots=8 concurrency=1", concurrency1), &a, std::nullopt},
        {serving_cell_record(4, "slots=4 target_qps=4.5", rate), &a, 1},
        {serving_cell_record(5, "slots=4", "{}"), &a, 1},  // no scenario stored: not a sweep's
    };
    const auto sweeps = serving_sweeps(cells);
    ASSERT_EQ(sweeps.size(), 3u);
    EXPECT_EQ(sweeps[0].name, "llama-tiny openai cpu fp32 slots=4, concurrency");
    ASSERT_EQ(sweeps[0].points.size(), 2u);
    EXPECT_EQ(sweeps[0].points[0].benchmark_id, 2);  // ascending load
    EXPECT_DOUBLE_EQ(sweeps[0].points[1].load, 2);
    EXPECT_DOUBLE_EQ(*sweeps[0].points[1].system_tokens_per_s, 180);
    EXPECT_DOUBLE_EQ(*sweeps[0].points[1].user_tokens_per_s, 45);
    EXPECT_DOUBLE_EQ(*sweeps[0].points[1].goodput_fraction, 0.9);  // no SLOs: the share answered in full
    EXPECT_DOUBLE_EQ(*sweeps[0].points[1].ttft_p99_ns, 4e7);
    EXPECT_FALSE(sweeps[0].points[1].tpot_p50_ns);  // not measured: unknown, not 0
    EXPECT_EQ(sweeps[1].name, "llama-tiny openai cpu fp32 slots=8, concurrency");
    EXPECT_FALSE(sweeps[1].points[0].gpus);
    EXPECT_EQ(sweeps[2].kind, LoadKind::request_rate);
    EXPECT_DOUBLE_EQ(sweeps[2].points[0].load, 4.5);
}

TEST(ServingSweeps, GoodputUnderSlosIsTheSummarysFraction) {
    ServingSummary s = serving_of(100, 50, 1e7, 10, 10);
    s.goodput = Goodput{ServingSlos{.ttft_ns = 5'000'000}, 7, 7.0, 0.7};
    const std::vector<ServingCell> cells = {
        {serving_cell_record(1, "", R"({"duration_ns": 1000000000, "scenario": {"scenario": "concurrency", "concurrency": 3}})"), &s, std::nullopt}};
    const auto point = sweep_point(cells[0]);
    ASSERT_TRUE(point);
    EXPECT_DOUBLE_EQ(*point->second.goodput_fraction, 0.7);
}

}  // namespace
}  // namespace inferbench::analysis
