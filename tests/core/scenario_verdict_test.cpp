// LoadGen's verdicts on hand-made latencies: what makes each scenario VALID, and each INVALID reason.
#include "core/statistics/scenario_verdict.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace inferbench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

ScenarioSettings server(std::int64_t bound_ns) {
    ScenarioSettings s;
    s.scenario = Scenario::server;
    s.latency_bound_ns = bound_ns;
    return s;
}

ScenarioFacts kept_up(std::int64_t queries) {
    ScenarioFacts facts;
    facts.scheduled = facts.issued = queries;
    facts.schedule_span_ns = 10'000 * kMs;
    facts.duration_ns = 5'000 * kMs;
    return facts;
}

// n latencies of `fast`, of which the `slow` last are `slow_ns` instead, ascending.
std::vector<std::int64_t> latencies(std::int64_t n, std::int64_t fast_ns, std::int64_t slow, std::int64_t slow_ns) {
    std::vector<std::int64_t> values(static_cast<std::size_t>(n - slow), fast_ns);
    values.insert(values.end(), static_cast<std::size_t>(slow), slow_ns);
    return values;
}

TEST(ScenarioVerdict, SingleStreamIsValidWithEnoughQueriesForItsEstimate) {
    ScenarioSettings s;
    const auto few = latencies(63, 2 * kMs, 0, 0);
    const auto v = judge_scenario(s, few, {});
    EXPECT_EQ(verdict_word(v), "INVALID");
    ASSERT_EQ(v.reasons.size(), 1u);
    EXPECT_EQ(v.reasons[0], "63 queries; LoadGen's early stopping needs at least 64 for the p90 estimate: measure longer");
    const auto enough = latencies(100, 2 * kMs, 5, 3 * kMs);
    const auto ok = judge_scenario(s, enough, {});
    EXPECT_EQ(verdict_word(ok), "VALID");
    ASSERT_TRUE(ok.estimate);
    EXPECT_EQ(ok.estimate->discarded, 2);
    EXPECT_EQ(ok.estimate->estimate_ns, 3 * kMs) << "the third slowest of 100";
    EXPECT_EQ(ok.percentile_ns, 2 * kMs) << "LoadGen's p90: sorted[90]";
    EXPECT_FALSE(ok.estimate_p99) << "p99's estimate needs 662 queries";
}

TEST(ScenarioVerdict, MultiStreamNeedsQueriesForItsP99) {
    ScenarioSettings s;
    s.scenario = Scenario::multi_stream;
    EXPECT_EQ(verdict_word(judge_scenario(s, latencies(661, kMs, 0, 0), {})), "INVALID");
    const auto v = judge_scenario(s, latencies(662, kMs, 1, 9 * kMs), {});
    EXPECT_EQ(verdict_word(v), "VALID");
    EXPECT_EQ(v.estimate->estimate_ns, 9 * kMs) << "t = 1 at 662 queries: nothing discarded";
}

TEST(ScenarioVerdict, ServerP99OverTheBound) {
    // 2000 queries, 40 (2%) at 18.2 ms: LoadGen's p99 is sorted[1980], one of them.
    const auto v = judge_scenario(server(15 * kMs), latencies(2000, 5 * kMs, 40, 18'200'000), kept_up(2000));
    EXPECT_EQ(verdict_word(v), "INVALID");
    ASSERT_EQ(v.reasons.size(), 1u);
    EXPECT_EQ(v.reasons[0], "p99 (LoadGen rank) 18.20 ms > bound 15.00 ms");
    EXPECT_EQ(v.server->overlatency, 40);
}

TEST(ScenarioVerdict, ServerWithinTheBoundAndShown) {
    const auto v = judge_scenario(server(15 * kMs), latencies(2000, 5 * kMs, 5, 20 * kMs), kept_up(2000));
    EXPECT_EQ(verdict_word(v), "VALID");
    EXPECT_TRUE(v.server->satisfied);
    EXPECT_EQ(v.percentile_ns, 5 * kMs);
}

TEST(ScenarioVerdict, ServerWithinTheBoundButNotShownYet) {
    // 6 of 700 over the bound: p99 (sorted[693]) is within it, but early stopping wants more queries.
    const auto v = judge_scenario(server(15 * kMs), latencies(700, 5 * kMs, 6, 20 * kMs), kept_up(700));
    EXPECT_EQ(verdict_word(v), "INVALID");
    ASSERT_EQ(v.reasons.size(), 1u);
    EXPECT_EQ(v.reasons[0].rfind("early stopping: with 6 of 700 queries over the bound, ", 0), 0u) << v.reasons[0];
    EXPECT_NE(v.reasons[0].find("queries are needed to show p99 <= bound at 99% confidence; measure longer"),
              std::string::npos);
}

TEST(ScenarioVerdict, ServerThatFellBehind) {
    ScenarioFacts facts = kept_up(10000);
    facts.issued = 9100;
    facts.fell_behind = true;
    const auto v = judge_scenario(server(15 * kMs), latencies(9100, 5 * kMs, 0, 0), facts);
    EXPECT_EQ(verdict_word(v), "INVALID");
    ASSERT_EQ(v.reasons.size(), 1u);
    EXPECT_EQ(v.reasons[0], "issued 91% of the scheduled queries (9100 of 10000): the system fell behind");
}

TEST(ScenarioVerdict, ABoundBelowOneInferenceIsSaidSo) {
    ScenarioFacts facts = kept_up(1000);
    facts.fastest_service_ns = 2'300'000;
    const auto v = judge_scenario(server(kMs), latencies(1000, 2'300'000, 0, 0), facts);
    EXPECT_EQ(verdict_word(v), "INVALID");
    EXPECT_EQ(v.reasons.at(0), "the bound 1.00 ms is below one inference (the fastest took 2.30 ms)");
}

TEST(ScenarioVerdict, AScheduleCutShortOfTheDuration) {
    ScenarioFacts facts = kept_up(1000);
    facts.schedule_span_ns = 1'200 * kMs;
    const auto v = judge_scenario(server(15 * kMs), latencies(1000, kMs, 0, 0), facts);
    EXPECT_EQ(verdict_word(v), "INVALID");
    EXPECT_EQ(v.reasons.at(0),
              "the schedule spans 1.200 s, less than the duration 5s: max_iterations cut it; raise max_iterations (0: "
              "no limit)");
}

TEST(ScenarioVerdict, OfflineAndConcurrencyHaveNone) {
    for (const Scenario scenario : {Scenario::offline, Scenario::concurrency}) {
        ScenarioSettings s;
        s.scenario = scenario;
        const auto v = judge_scenario(s, latencies(10, kMs, 0, 0), {});
        EXPECT_FALSE(v.valid);
        EXPECT_EQ(verdict_word(v), "");
    }
    EXPECT_EQ(judge_scenario(server(kMs), {}, kept_up(0)).reasons.at(0), "no query completed");
}

}  // namespace
}  // namespace inferbench
