#include "core/serving_figures.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace inferbench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// An ok request scheduled at `scheduled`, sent `delay` later, with chunks of `tokens` at `arrivals` (ms).
ServedRequest request(std::int64_t scheduled_ms, std::vector<std::int64_t> arrivals_ms,
                      std::vector<std::int64_t> tokens, std::int64_t usage = -1, std::int64_t delay_ms = 0) {
    ServedRequest r;
    r.scheduled_ns = scheduled_ms * kMs;
    r.sent_ns = (scheduled_ms + delay_ms) * kMs;
    for (std::size_t i = 0; i < arrivals_ms.size(); ++i) r.chunks.push_back({arrivals_ms[i] * kMs, tokens[i]});
    r.end_ns = arrivals_ms.empty() ? r.sent_ns : arrivals_ms.back() * kMs;
    r.output_tokens = usage;
    return r;
}

TEST(ServingFigures, TtftAndE2eCountFromTheScheduledTimeSoWaitingCounts) {
    const auto figures = request_figures(request(100, {150, 160, 170}, {1, 1, 1}, -1, 20));
    EXPECT_EQ(figures.send_delay_ns, 20 * kMs);
    EXPECT_EQ(figures.ttft_ns, 50 * kMs);
    EXPECT_EQ(figures.e2e_ns, 70 * kMs);
}

TEST(ServingFigures, TpotExcludesTheFirstTokenAndPrefersUsageCounts) {
    // Usage says 5 tokens in 3 chunks: TPOT = (e2e 90 - TTFT 10) / 4 = 20 ms.
    const auto r = request(0, {10, 50, 90}, {1, 2, 2}, 5);
    const auto figures = request_figures(r);
    EXPECT_EQ(figures.token_source, TokenCountSource::usage);
    EXPECT_EQ(figures.output_tokens, 5);
    EXPECT_EQ(figures.tpot_ns, 20 * kMs);
}

TEST(ServingFigures, WithoutUsageTheChunksAreCounted) {
    const auto r = request(0, {10, 50, 90}, {1, 2, 2});
    TokenCountSource source = TokenCountSource::unknown;
    EXPECT_EQ(output_token_count(r, &source), 5);
    EXPECT_EQ(source, TokenCountSource::chunks);
}

TEST(ServingFigures, AChunkOfUnknownTokensLeavesTheCountAndTpotUnknown) {
    const auto figures = request_figures(request(0, {10, 20}, {1, -1}));
    EXPECT_EQ(figures.token_source, TokenCountSource::unknown);
    EXPECT_EQ(figures.output_tokens, -1);
    EXPECT_FALSE(figures.tpot_ns);
    EXPECT_EQ(figures.ttft_ns, 10 * kMs);
}

TEST(ServingFigures, OneOutputTokenHasNoTpot) {
    const auto figures = request_figures(request(0, {10}, {1}, 1));
    EXPECT_EQ(figures.ttft_ns, 10 * kMs);
    EXPECT_FALSE(figures.tpot_ns);
}

TEST(ServingFigures, AUsageOnlyChunkBearsNoOutput) {
    // The final usage event (0 tokens) is neither the first token nor a gap.
    const auto r = request(0, {0, 10, 30, 31}, {0, 1, 1, 0}, 2);
    EXPECT_EQ(request_figures(r).ttft_ns, 10 * kMs);
    EXPECT_EQ(chunk_gaps_ns(r), (std::vector<std::int64_t>{20 * kMs}));
}

TEST(ServingFigures, AFailedRequestHasNoLatencyFigures) {
    auto r = request(0, {10, 20}, {1, 1});
    r.outcome = RequestOutcome::truncated;
    const auto figures = request_figures(r);
    EXPECT_FALSE(figures.ttft_ns);
    EXPECT_FALSE(figures.e2e_ns);
    EXPECT_FALSE(figures.tpot_ns);
    EXPECT_EQ(figures.output_tokens, 2);  // what arrived is still counted
}

TEST(ServingFigures, PerTokenLatencyCountsEachTokenOfAChunk) {
    // Gaps 30 ms (3 tokens) and 10 ms (1 token): per token 10, 10, 10, 10.
    const auto r = request(0, {5, 35, 45}, {2, 3, 1});
    EXPECT_EQ(chunk_gaps_ns(r), (std::vector<std::int64_t>{30 * kMs, 10 * kMs}));
    EXPECT_EQ(per_token_latencies_ns(r), (std::vector<std::int64_t>(4, 10 * kMs)));
}

TEST(ServingFigures, PerTokenLatencySkipsChunksOfUnknownTokens) {
    const auto r = request(0, {5, 35, 45}, {1, -1, 2});
    EXPECT_EQ(per_token_latencies_ns(r), (std::vector<std::int64_t>(2, 5 * kMs)));
}

TEST(ServingFigures, AChunkClaimingMoreTokensThanTheUsageGivesNoPerTokenLatency) {
    const auto r = request(0, {5, 35, 45}, {1, 1'000'000'000'000, 1}, 3);
    EXPECT_EQ(per_token_latencies_ns(r), (std::vector<std::int64_t>{10 * kMs}));
}

TEST(ServingFigures, MeetsSlosChecksEachBoundThatIsSet) {
    const auto r = request(0, {10, 50, 90}, {1, 2, 2}, 5);  // TTFT 10, TPOT 20, e2e 90 ms
    EXPECT_TRUE(meets_slos(r, {}));
    EXPECT_TRUE(meets_slos(r, {.ttft_ns = 10 * kMs, .tpot_ns = 20 * kMs, .e2e_ns = 90 * kMs}));
    EXPECT_FALSE(meets_slos(r, {.ttft_ns = 9 * kMs}));
    EXPECT_FALSE(meets_slos(r, {.tpot_ns = 19 * kMs}));
    EXPECT_FALSE(meets_slos(r, {.e2e_ns = 89 * kMs}));
    auto failed = r;
    failed.outcome = RequestOutcome::http_status;
    EXPECT_FALSE(meets_slos(failed, {}));
}

TEST(ServingFigures, ATpotBoundHoldsForOneOutputTokenAndFailsForAnUnknownCount) {
    EXPECT_TRUE(meets_slos(request(0, {10}, {1}, 1), {.tpot_ns = 1}));
    EXPECT_FALSE(meets_slos(request(0, {10, 11}, {1, -1}), {.tpot_ns = 1 * kMs}));
}

// n ok requests, each TTFT `ttft` ms and TPOT `tpot` ms (11 tokens, one per chunk).
std::vector<ServedRequest> uniform(std::size_t n, std::int64_t ttft, std::int64_t tpot) {
    std::vector<ServedRequest> requests;
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::int64_t> arrivals, tokens;
        for (std::int64_t t = 0; t < 11; ++t) {
            arrivals.push_back(ttft + t * tpot);
            tokens.push_back(1);
        }
        requests.push_back(request(0, arrivals, tokens, 11));
        requests.back().index = static_cast<std::int64_t>(i);
    }
    return requests;
}

TEST(LlmServerVerdict, NoBoundNoVerdict) { EXPECT_FALSE(judge_llm_server(uniform(10, 5, 2), {.e2e_ns = 1})); }

TEST(LlmServerVerdict, ValidWhenBothP99sAreWithinAndEarlyStoppingIsSatisfied) {
    // With no request over the bound, early stopping needs 459 (0.99^459 < 0.01).
    const auto verdict = judge_llm_server(uniform(459, 5, 2), {.ttft_ns = 5 * kMs, .tpot_ns = 2 * kMs});
    ASSERT_TRUE(verdict);
    EXPECT_TRUE(verdict->valid) << verdict->reasons.front();
    EXPECT_EQ(verdict_word(*verdict), "VALID");
    EXPECT_EQ(verdict->ttft->percentile_ns, 5 * kMs);
    EXPECT_EQ(verdict->tpot->percentile_ns, 2 * kMs);
    EXPECT_EQ(verdict->ttft->check.queries_needed, 459);
}

TEST(LlmServerVerdict, TooFewRequestsFailEarlyStopping) {
    const auto verdict = judge_llm_server(uniform(458, 5, 2), {.ttft_ns = 5 * kMs});
    ASSERT_TRUE(verdict);
    EXPECT_FALSE(verdict->valid);
    ASSERT_EQ(verdict->reasons.size(), 1U);
    EXPECT_NE(verdict->reasons[0].find("early stopping on TTFT"), std::string::npos) << verdict->reasons[0];
    EXPECT_FALSE(verdict->tpot);
}

TEST(LlmServerVerdict, ATpotP99OverTheBoundIsInvalid) {
    auto requests = uniform(1000, 5, 2);
    const auto slow = uniform(20, 5, 3);  // 2% of requests at TPOT 3 ms: the p99
    requests.insert(requests.end(), slow.begin(), slow.end());
    const auto verdict = judge_llm_server(requests, {.ttft_ns = 5 * kMs, .tpot_ns = 2 * kMs});
    ASSERT_TRUE(verdict);
    EXPECT_FALSE(verdict->valid);
    EXPECT_TRUE(verdict->ttft->met());
    EXPECT_EQ(verdict->tpot->percentile_ns, 3 * kMs);
    EXPECT_EQ(verdict->tpot->check.overlatency, 20);
}

TEST(LlmServerVerdict, FailedRequestsCountAgainstBothAndWarmupIsLeftOut) {
    auto requests = uniform(1000, 5, 2);
    for (std::size_t i = 0; i < 20; ++i) requests[i].outcome = RequestOutcome::timeout;
    auto warm = uniform(5, 500, 500);
    for (auto& r : warm) r.warmup = true;
    requests.insert(requests.end(), warm.begin(), warm.end());
    const auto verdict = judge_llm_server(requests, {.ttft_ns = 5 * kMs, .tpot_ns = 2 * kMs});
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->requests, 1000);
    EXPECT_EQ(verdict->failed, 20);
    EXPECT_FALSE(verdict->valid);
    EXPECT_TRUE(verdict->ttft->percentile_failed);  // 2% failed: the p99 rank is a failed request
    EXPECT_EQ(verdict->ttft->check.overlatency, 20);
    EXPECT_EQ(verdict->tpot->check.overlatency, 20);
}

TEST(LlmServerVerdict, FewFailuresStillNeedEarlyStoppingToPass) {
    auto requests = uniform(2000, 5, 2);
    requests[0].outcome = RequestOutcome::connect_failed;
    const auto verdict = judge_llm_server(requests, {.ttft_ns = 5 * kMs});
    ASSERT_TRUE(verdict);
    EXPECT_FALSE(verdict->ttft->percentile_failed);
    EXPECT_EQ(verdict->ttft->check.overlatency, 1);
    EXPECT_EQ(verdict->valid, verdict->ttft->check.satisfied);
    EXPECT_TRUE(verdict->valid);  // h(1) + 1 = 662 <= 2000
}

}  // namespace
}  // namespace inferbench
