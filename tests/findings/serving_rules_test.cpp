// The serving cells' rules on hand-made requests (every chunk with its arrival time): TTFT dominated by queueing,
// decode gaps that coincide with other requests' prefills; each where it fires and where it stays silent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "findings/findings.hpp"
#include "findings/rules.hpp"
#include "common/scratch_dir.hpp"
#include "common/serving_fixture.hpp"
#include "findings/serving_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using namespace testing;

TEST(ServingRules, TtftFarAboveTheServersPromptTimeIsQueueing) {
    // 30 requests: TTFT 60 ms (10 ms waited before the send), the server's prompt time 8 ms.
    std::vector<ServedRequest> requests;
    for (int i = 0; i < 30; ++i) requests.push_back(steady_request(i, i * kMs * 100, 60 * kMs, 10, 5 * kMs, 8.0, 10 * kMs));
    const auto found = ttft_queueing(serving_evidence(std::move(requests)));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.ttft_queueing");
    EXPECT_THAT(found[0].statement, HasSubstr("median is 60.0 ms where the server's own prompt time"));
    EXPECT_THAT(found[0].statement, HasSubstr("is 8.0 ms, so 87% of the time"));
    EXPECT_THAT(found[0].statement, HasSubstr("waiting for a free slot in the server"));
    EXPECT_THAT(found[0].statement, HasSubstr("median wait before the send 10.0 ms; 30 requests"));
}

TEST(ServingRules, TtftWaitedForInTheClientSaysSo) {
    std::vector<ServedRequest> requests;
    for (int i = 0; i < 30; ++i) requests.push_back(steady_request(i, i * kMs * 100, 60 * kMs, 10, 5 * kMs, 8.0, 45 * kMs));
    const auto found = ttft_queueing(serving_evidence(std::move(requests)));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_THAT(found[0].statement, HasSubstr("waiting in the client for a free connection"));
}

TEST(ServingRules, TtftNearThePromptTimeOrWithoutServerTimingsIsSilent) {
    std::vector<ServedRequest> near, untimed, few;
    for (int i = 0; i < 30; ++i) {
        near.push_back(steady_request(i, i * kMs * 100, 12 * kMs, 10, 5 * kMs, 10.0));
        untimed.push_back(steady_request(i, i * kMs * 100, 60 * kMs, 10, 5 * kMs, -1));
    }
    for (int i = 0; i < 5; ++i) few.push_back(steady_request(i, i * kMs * 100, 60 * kMs, 10, 5 * kMs, 8.0));
    EXPECT_TRUE(ttft_queueing(serving_evidence(std::move(near))).empty());
    EXPECT_TRUE(ttft_queueing(serving_evidence(std::move(untimed))).empty());
    EXPECT_TRUE(ttft_queueing(serving_evidence(std::move(few))).empty());
    // A fast TTFT twice the prompt time but only 2 ms above it: the HTTP round trip, not queueing.
    std::vector<ServedRequest> fast;
    for (int i = 0; i < 30; ++i) fast.push_back(steady_request(i, i * kMs * 100, 4 * kMs, 10, 5 * kMs, 2.0));
    EXPECT_TRUE(ttft_queueing(serving_evidence(std::move(fast))).empty());
}

// Request 0 decodes steadily at 5 ms a token for 40 tokens; every 8th gap is stretched to 25 ms, and in each of
// those a new request (1, 2, ...) gets its first token when `coincide`, else far from any gap.
std::vector<ServedRequest> interfered(bool coincide) {
    std::vector<ServedRequest> requests;
    ServedRequest decoding = steady_request(0, 0, 20 * kMs, 0, 0, -1);
    std::int64_t t = 20 * kMs;
    decoding.chunks.push_back({t, 1});
    std::int64_t other = 1;
    for (int i = 1; i < 40; ++i) {
        const bool spike = i % 8 == 0;
        const std::int64_t gap = spike ? 25 * kMs : 5 * kMs;
        if (spike) {
            const std::int64_t first = coincide ? t + 20 * kMs : t + 400 * kMs * other;
            requests.push_back(steady_request(other, first - 15 * kMs, 15 * kMs, 3, 5 * kMs, -1));
            ++other;
        }
        t += gap;
        decoding.chunks.push_back({t, 1});
    }
    decoding.end_ns = t;
    decoding.output_tokens = 40;
    requests.insert(requests.begin(), decoding);
    return requests;
}

TEST(ServingRules, GapSpikesAtOtherRequestsFirstTokensArePrefillInterference) {
    const auto found = prefill_interference(serving_evidence(interfered(true)));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.prefill_interference");
    EXPECT_THAT(found[0].statement, HasSubstr("4 of 4 chunk gaps above 3x the median gap (5.0 ms) end with another "
                                              "request's first token (100%, against 0% of the other 43 gaps)"));
    ASSERT_THAT(found[0].evidence.events, SizeIs(4));
    EXPECT_THAT(found[0].evidence.events[0], HasSubstr("request 0 gap 25.0 ms at 0.055 s (request 1's first token at 0.075 s)"));
    EXPECT_TRUE(found[0].evidence.window);
    EXPECT_THAT(describe(found[0].evidence), HasSubstr("events: request 0 gap 25.0 ms"));
}

TEST(ServingRules, GapSpikesAwayFromFirstTokensAreNoInterference) {
    EXPECT_TRUE(prefill_interference(serving_evidence(interfered(false))).empty());
}

TEST(ServingRules, FirstTokensInEveryGapAreChanceNotInterference) {
    // Heavy traffic: another request's first token 1 ms into every gap of request 0, spikes or not.
    auto requests = interfered(true);
    const auto chunks = requests[0].chunks;
    for (std::size_t k = 0; k < chunks.size(); ++k) {
        const std::int64_t first = chunks[k].arrival_ns + kMs;
        requests.push_back(steady_request(100 + static_cast<std::int64_t>(k), first - 15 * kMs, 15 * kMs, 1, 0, -1));
    }
    EXPECT_TRUE(prefill_interference(serving_evidence(std::move(requests))).empty());
}

TEST(ServingRules, ExplainRunsTheServingRules) {
    std::vector<BenchmarkEvidence> all;
    all.push_back(serving_evidence(interfered(true)));
    const auto found = explain(all);
    EXPECT_TRUE(std::any_of(found.begin(), found.end(), [](const Finding& f) { return f.id == "serving.prefill_interference"; }));
}

}  // namespace
}  // namespace inferbench::findings

namespace inferbench::findings {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using namespace testing;

std::vector<ServedRequest> with_failures(int ok, int http_503, int timeouts) {
    std::vector<ServedRequest> requests;
    std::int64_t i = 0;
    for (int k = 0; k < ok; ++k, ++i) requests.push_back(steady_request(i, i * 10 * kMs, 20 * kMs, 4, 5 * kMs, -1));
    for (int k = 0; k < http_503; ++k, ++i)
        requests.push_back(failed_request(i, i * 10 * kMs, RequestOutcome::http_status, 503));
    for (int k = 0; k < timeouts; ++k, ++i) requests.push_back(failed_request(i, i * 10 * kMs, RequestOutcome::timeout));
    return requests;
}

TEST(ServingRules, FailedRequestsAreCountedByKindAgainstGoodput) {
    const auto found = serving_errors(serving_evidence(with_failures(90, 6, 4), 7, ServingSlos{.ttft_ns = 100 * kMs}));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.errors");
    EXPECT_EQ(found[0].severity, Severity::problem);  // 10% failed: above the 1% the goodput target allows
    EXPECT_THAT(found[0].statement, HasSubstr("10 of 100 requests failed (10.0%): http_status x6 (HTTP 503 x6), timeout x4"));
    EXPECT_THAT(found[0].statement, HasSubstr("goodput 90.0% of requests meet every objective (TTFT 100 ms)"));
    EXPECT_THAT(found[0].statement, HasSubstr("(request 90: failed on purpose)"));
}

TEST(ServingRules, AFewFailuresWithoutSlosAreAWarning) {
    const auto found = serving_errors(serving_evidence(with_failures(199, 0, 1)));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].severity, Severity::warning);
    EXPECT_THAT(found[0].statement, HasSubstr("no objectives set: 99.5% of requests were answered in full"));
}

TEST(ServingRules, NoFailureIsSilentAndNoRequestIsNotMeasured) {
    EXPECT_TRUE(serving_errors(serving_evidence(with_failures(30, 0, 0))).empty());
    const auto found = serving_errors(serving_evidence({}));
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.not_measured");
    BenchmarkEvidence other;  // not a serving cell: nothing to say
    other.summary.benchmark.backend = "onnxruntime";
    EXPECT_TRUE(serving_errors(other).empty());
}

TEST(ServingRules, ASweepWhoseThroughputStopsWhileTtftGrowsSaturates) {
    const std::vector<BenchmarkEvidence> all = {sweep_cell(1, 1, 100, 50), sweep_cell(2, 2, 190, 52),
                                                sweep_cell(3, 4, 360, 55), sweep_cell(4, 8, 378, 99)};
    const auto found = serving_saturation(all);
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.saturation");
    EXPECT_EQ(found[0].benchmarks, (std::vector<std::int64_t>{1, 2, 3, 4}));
    EXPECT_THAT(found[0].statement,
                HasSubstr("llama-tiny openai cpu fp32, concurrency saturates at concurrency 4: concurrency 8 (+100% "
                          "load) changed output tokens/s by +5.0% (360.0 to 378.0) while the median TTFT rose +80% "
                          "(55.0 to 99.0 ms)"));
}

TEST(ServingRules, ASweepThatStillScalesDoesNotSaturate) {
    const std::vector<BenchmarkEvidence> all = {sweep_cell(1, 1, 100, 50), sweep_cell(2, 2, 190, 52),
                                                sweep_cell(3, 4, 360, 55)};
    EXPECT_TRUE(serving_saturation(all).empty());
}

TEST(ServingRules, TtftGrowingWithLoadWhilePrefillDoesNotIsQueueing) {
    const std::vector<BenchmarkEvidence> all = {sweep_cell(1, 1, 100, 20, 8.0), sweep_cell(2, 8, 400, 90, 8.5)};
    const auto found = sweep_ttft_queueing(all);
    ASSERT_THAT(found, SizeIs(1));
    EXPECT_EQ(found[0].id, "serving.ttft_queueing");
    EXPECT_THAT(found[0].statement, HasSubstr("from concurrency 1 to concurrency 8 the median TTFT grows 4.5x (20.0 to "
                                              "90.0 ms) while the server's own prompt time grows 1.06x (8.0 to 8.5 ms)"));
    // Prefill itself slowing as much (longer prompts, a busy server): not queueing.
    const std::vector<BenchmarkEvidence> slower = {sweep_cell(1, 1, 100, 20, 8.0), sweep_cell(2, 8, 400, 90, 30.0)};
    EXPECT_TRUE(sweep_ttft_queueing(slower).empty());
    // Without the server's timings nothing is said.
    const std::vector<BenchmarkEvidence> untimed = {sweep_cell(1, 1, 100, 20), sweep_cell(2, 8, 400, 90)};
    EXPECT_TRUE(sweep_ttft_queueing(untimed).empty());
}

}  // namespace
}  // namespace inferbench::findings

namespace inferbench::findings {
namespace {

// The stored sweep (common/serving_fixture.hpp) as `explain` reads it: the requests loaded into the evidence, the
// summaries' serving figures, each rule on them.
TEST(ServingRules, ExplainOfAStoredSweepFindsSaturationQueueingAndNothingElseOfServing) {
    inferbench::testing::ScratchDir dir;
    inferbench::testing::write_serving_fixture(dir.file("results.db"));
    const auto results = store::ResultsStore::open(dir.file("results.db"), store::ResultsStore::Access::read);
    const auto evidence = load_evidence(results, results.benchmarks(), devices::Catalog{});
    ASSERT_EQ(evidence.size(), 4u);
    EXPECT_EQ(evidence[0].requests.size(), static_cast<std::size_t>(inferbench::testing::kServingRequests));
    ASSERT_TRUE(evidence[0].summary.serving);
    std::vector<std::string> ids;
    for (const auto& f : explain(evidence))
        if (f.id.starts_with("serving.")) ids.push_back(f.id + " " + std::to_string(f.benchmarks.front()));
    std::sort(ids.begin(), ids.end());
    // Concurrency 8's TTFT (40 ms) is five times the server's prompt time (8 ms); the sweep saturates at 4; no
    // request failed, no gap spikes.
    EXPECT_EQ(ids, (std::vector<std::string>{"serving.saturation 1", "serving.ttft_queueing 1", "serving.ttft_queueing 4"}));
}

}  // namespace
}  // namespace inferbench::findings
