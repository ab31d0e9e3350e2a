#include "analysis/serving_metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "core/error.hpp"
#include "core/temp_dir.hpp"

namespace inferbench::analysis {
namespace {

constexpr std::int64_t kMs = 1'000'000;

ServedRequest served(std::int64_t index, std::int64_t scheduled_ms, std::int64_t sent_ms, std::int64_t end_ms,
                     std::vector<std::pair<std::int64_t, std::int64_t>> chunks_ms, std::int64_t usage = -1) {
    ServedRequest r;
    r.index = index;
    r.scheduled_ns = scheduled_ms * kMs;
    r.sent_ns = sent_ms * kMs;
    r.end_ns = end_ms * kMs;
    for (const auto& [arrival, tokens] : chunks_ms) r.chunks.push_back({arrival * kMs, tokens});
    r.output_tokens = usage;
    return r;
}

ServedRequest failed(std::int64_t index, std::int64_t at_ms, std::int64_t end_ms, RequestOutcome outcome,
                     std::int64_t status = 0) {
    ServedRequest r = served(index, at_ms, at_ms, end_ms, {});
    r.outcome = outcome;
    r.http_status = status;
    r.error = "failed";
    return r;
}

// A warm-up request (slow: in no figure), two ok ones and two failures. Known answers:
//   #1 one token per chunk, usage 3: TTFT 10, e2e 50, TPOT (50 - 10) / 2 = 20, gaps 20 20, per token 20 20.
//   #2 waited 20 ms for a connection, chunks of 2 and 3 tokens, no usage (5 counted from the chunks):
//      TTFT 40 (the wait counts), e2e 100, TPOT (100 - 40) / 4 = 15, gap 60, per token 20 20 20.
//   #3 HTTP 503, #4 a timeout ending at 300: the window is 100 (first send) to 300 (last end) = 200 ms.
std::vector<ServedRequest> cell() {
    ServedRequest warm = served(0, 0, 0, 90, {{80, 1}, {90, 1}}, 2);
    warm.warmup = true;
    return {warm, served(1, 100, 100, 150, {{110, 1}, {130, 1}, {150, 1}, {150, 0}}, 3),
            served(2, 100, 120, 200, {{140, 2}, {200, 3}}), failed(3, 150, 160, RequestOutcome::http_status, 503),
            failed(4, 150, 300, RequestOutcome::timeout)};
}

TEST(ServingMetrics, CountsEachOutcomeAndLeavesWarmupOut) {
    const auto s = serving_summary(cell(), {});
    EXPECT_EQ(s.counts.sent, 4);
    EXPECT_EQ(s.counts.ok, 2);
    EXPECT_EQ(s.counts.failed(), 2);
    EXPECT_EQ(s.counts.warmup, 1);
    using Count = std::pair<RequestOutcome, std::int64_t>;
    EXPECT_EQ(s.counts.failures, (std::vector<Count>{{RequestOutcome::http_status, 1}, {RequestOutcome::timeout, 1}}));
    EXPECT_EQ(s.counts.http_statuses, (std::vector<std::pair<std::int64_t, std::int64_t>>{{503, 1}}));
    EXPECT_EQ(s.token_counting.from_usage, 1);
    EXPECT_EQ(s.token_counting.from_chunks, 1);
    EXPECT_EQ(s.output_tokens, 8);
}

TEST(ServingMetrics, LatencyDistributionsOfTheOkRequests) {
    const auto s = serving_summary(cell(), {});
    ASSERT_TRUE(s.ttft && s.tpot && s.e2e && s.chunk_gap && s.per_token);
    EXPECT_EQ(s.ttft->ns.count, 2);
    EXPECT_DOUBLE_EQ(s.ttft->ns.min, 10.0 * kMs);
    EXPECT_DOUBLE_EQ(s.ttft->ns.max, 40.0 * kMs);
    EXPECT_DOUBLE_EQ(s.tpot->ns.mean, 17.5 * kMs);
    EXPECT_DOUBLE_EQ(s.e2e->ns.max, 100.0 * kMs);
    // vLLM's ITL sees a 60 ms gap; per token, the 3 tokens of that chunk came 20 ms apart.
    EXPECT_EQ(s.chunk_gap->ns.count, 3);
    EXPECT_DOUBLE_EQ(s.chunk_gap->ns.max, 60.0 * kMs);
    EXPECT_DOUBLE_EQ(s.chunk_gap->ns.p50, 20.0 * kMs);
    EXPECT_EQ(s.per_token->ns.count, 5);
    EXPECT_DOUBLE_EQ(s.per_token->ns.max, 20.0 * kMs);
    EXPECT_DOUBLE_EQ(s.per_token->ns.min, 20.0 * kMs);
}

TEST(ServingMetrics, ThroughputsOverTheMeasuredWindow) {
    const auto s = serving_summary(cell(), {});
    EXPECT_EQ(s.window_start_ns, 100 * kMs);
    EXPECT_EQ(s.window_end_ns, 300 * kMs);
    ASSERT_TRUE(s.output_tokens_per_s && s.requests_per_s && s.output_tokens_per_s_per_user);
    EXPECT_DOUBLE_EQ(*s.output_tokens_per_s, 40.0);               // 8 tokens in 0.2 s
    EXPECT_DOUBLE_EQ(*s.requests_per_s, 10.0);                    // 2 ok requests in 0.2 s
    EXPECT_DOUBLE_EQ(s.output_tokens_per_s_per_user->min, 50.0);  // 1 / 20 ms
    EXPECT_NEAR(s.output_tokens_per_s_per_user->max, 1000.0 / 15.0, 1e-9);
    EXPECT_FALSE(s.goodput);
    EXPECT_FALSE(s.verdict);
}

TEST(ServingMetrics, GoodputCountsFailedRequestsAgainstIt) {
    const auto s = serving_summary(cell(), {.ttft_ns = 20 * kMs});
    ASSERT_TRUE(s.goodput);
    EXPECT_EQ(s.goodput->good, 1);  // #1 only: #2's TTFT is 40 ms
    EXPECT_DOUBLE_EQ(s.goodput->fraction, 0.25);
    EXPECT_DOUBLE_EQ(s.goodput->per_s, 5.0);
    ASSERT_TRUE(s.verdict);
    EXPECT_FALSE(s.verdict->valid);
    EXPECT_EQ(s.verdict->failed, 2);
}

TEST(ServingMetrics, EnergyFromGpuSamplesElseNotMeasured) {
    const auto without = serving_summary(cell(), {});
    EXPECT_FALSE(without.energy_j);
    EXPECT_FALSE(without.tokens_per_joule);
    EXPECT_NE(std::find(without.notes.begin(), without.notes.end(),
                        "energy not measured: no GPU samples of the server's device and no RAPL readings of the CPU package"),
              without.notes.end());
    GpuSample first, last;
    first.t_ns = 100 * kMs;
    first.energy_mj = 1'000;
    last.t_ns = 300 * kMs;
    last.energy_mj = 5'000;  // 4 J over the window
    const std::vector<GpuSample> gpu{first, last};
    const auto s = serving_summary(cell(), {}, gpu);
    ASSERT_TRUE(s.energy_j && s.tokens_per_joule && s.joules_per_token);
    EXPECT_DOUBLE_EQ(*s.energy_j, 4.0);
    EXPECT_DOUBLE_EQ(*s.tokens_per_joule, 2.0);
    EXPECT_DOUBLE_EQ(*s.joules_per_token, 0.5);
    EXPECT_EQ(s.energy_source, "GPU energy counter");
}

TEST(ServingMetrics, AServerOnTheCpuHasThePackagesEnergy) {
    CpuSample first, last, warm;
    warm.phase = SamplePhase::warmup;
    warm.cpu_package_energy_j = 1;
    first.t_ns = 150 * kMs;
    first.cpu_package_energy_j = 100;
    last.t_ns = 250 * kMs;
    last.cpu_package_energy_j = 102;  // 2 J over half the window: 4 of its 8 tokens counted
    const std::vector<CpuSample> cpu{warm, first, last};
    const auto s = serving_summary(cell(), {}, {}, cpu);
    ASSERT_TRUE(s.energy_j && s.tokens_per_joule);
    EXPECT_DOUBLE_EQ(*s.energy_j, 2.0);
    EXPECT_DOUBLE_EQ(*s.tokens_per_joule, 2.0);
    EXPECT_EQ(s.energy_source, "CPU package (RAPL)");
}

TEST(ServingMetrics, TokensCountedFromChunksAreNoted) {
    const auto s = serving_summary(cell(), {});
    const bool noted = std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& note) {
        return note.find("1 of 2 ok requests' output tokens counted from their chunks") != std::string::npos;
    });
    EXPECT_TRUE(noted);
}

TEST(ServingMetrics, NoSuccessfulRequestGivesCountsAndNoLatencies) {
    const std::vector<ServedRequest> requests{failed(0, 0, 10, RequestOutcome::connect_failed),
                                              failed(1, 5, 20, RequestOutcome::connect_failed)};
    const auto s = serving_summary(requests, {.e2e_ns = kMs});
    EXPECT_EQ(s.counts.ok, 0);
    EXPECT_FALSE(s.ttft);
    EXPECT_FALSE(s.e2e);
    ASSERT_TRUE(s.requests_per_s);
    EXPECT_DOUBLE_EQ(*s.requests_per_s, 0.0);
    ASSERT_TRUE(s.goodput);
    EXPECT_EQ(s.goodput->good, 0);
    EXPECT_DOUBLE_EQ(s.goodput->fraction, 0.0);
}

TEST(ServingMetrics, OnlyWarmupRequestsIsAnError) {
    auto requests = cell();
    requests.resize(1);
    EXPECT_THROW(serving_summary(requests, {}), UserError);
}

store::BenchmarkRecord serving_cell(std::int64_t run_id, std::string device) {
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.model = "served";
    b.backend = "openai";
    b.device = std::move(device);
    b.precision = "fp16";
    b.status = BenchmarkStatus::ok;
    b.settings_json = "{}";
    return b;
}

TEST(ServingMetrics, AStoredCellIsSummarizedUnderItsStoredSlosWithItsGpusEnergy) {
    const TempDir dir("serving-summary");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    store::RunRecord run;
    run.name = "t";
    run.plan_json = run.environment_json = "{}";
    const std::int64_t run_id = results.begin_run(run);
    const auto requests = cell();
    const store::ServingWorkloadRecord workload{"f", "{}", {.ttft_ns = 20 * kMs}};
    GpuSample first, last, other;
    first.t_ns = 100 * kMs;
    first.energy_mj = 1'000;
    last.t_ns = 300 * kMs;
    last.energy_mj = 5'000;
    other = last;
    other.gpu_index = 1;  // another GPU's: not the cell's
    other.energy_mj = 90'000;
    const std::vector<GpuSample> gpu{first, other, last};
    results.add_benchmark(
        serving_cell(run_id, "cuda:0"),
        store::BenchmarkData{.gpu_samples = gpu, .served_requests = requests, .serving_workload = &workload});
    results.add_benchmark(serving_cell(run_id, "cpu"),
                          store::BenchmarkData{.gpu_samples = gpu, .served_requests = requests});
    const auto stored = results.benchmarks(run_id);
    ASSERT_EQ(stored.size(), 2u);

    const BenchmarkSummary on_gpu = summarize_stored(results, stored[0], results.runs());
    ASSERT_TRUE(on_gpu.serving);
    EXPECT_EQ(on_gpu.serving->counts.sent, 4);
    ASSERT_TRUE(on_gpu.serving->goodput);
    EXPECT_EQ(on_gpu.serving->goodput->good, 1);
    ASSERT_TRUE(on_gpu.serving->tokens_per_joule);
    EXPECT_DOUBLE_EQ(*on_gpu.serving->tokens_per_joule, 2.0);

    const BenchmarkSummary on_cpu = summarize_stored(results, stored[1], results.runs());
    ASSERT_TRUE(on_cpu.serving);
    EXPECT_FALSE(on_cpu.serving->goodput);   // no SLOs stored
    EXPECT_FALSE(on_cpu.serving->energy_j);  // the GPUs sampled are not the server's device, and no RAPL
}

TEST(ServingMetrics, RepeatsSumTheirRequestsAndCountVerdicts) {
    BenchmarkSummary one;
    one.benchmark.status = BenchmarkStatus::ok;
    one.e2e.count = 4;
    one.e2e.mean = 50.0 * kMs;
    one.serving = serving_summary(cell(), {.ttft_ns = 20 * kMs});
    BenchmarkSummary two = one;
    two.benchmark.repeat = 1;
    auto faster = cell();
    faster[2].chunks[0].arrival_ns = 110 * kMs;  // #2's TTFT 10 ms: meets the SLO
    two.serving = serving_summary(faster, {.ttft_ns = 20 * kMs});
    const BenchmarkSummary row = combine_repeats(std::vector<BenchmarkSummary>{one, two});
    ASSERT_TRUE(row.serving);
    EXPECT_EQ(row.serving->counts.sent, 8);
    EXPECT_EQ(row.serving->counts.ok, 4);
    EXPECT_EQ(row.serving->output_tokens, 16);
    using Count = std::pair<RequestOutcome, std::int64_t>;
    EXPECT_EQ(row.serving->counts.failures,
              (std::vector<Count>{{RequestOutcome::http_status, 2}, {RequestOutcome::timeout, 2}}));
    ASSERT_TRUE(row.serving->goodput);
    EXPECT_EQ(row.serving->goodput->good, 3);
    EXPECT_DOUBLE_EQ(row.serving->goodput->fraction, 3.0 / 8);
    EXPECT_FALSE(row.serving->verdict);
    EXPECT_NE(std::find(row.serving->notes.begin(), row.serving->notes.end(),
                        "MLPerf LLM Server verdict per repeat: 0 of 2 VALID"),
              row.serving->notes.end());
    ASSERT_TRUE(row.serving->ttft);
    EXPECT_DOUBLE_EQ(row.serving->ttft->ns.mean, 17.5 * kMs);  // the mean of the repeats' means, 25 and 10 ms
    EXPECT_DOUBLE_EQ(row.serving->ttft->ns.max, 40.0 * kMs);   // the extreme
    EXPECT_EQ(row.serving->window_ns(), 0);
}

}  // namespace
}  // namespace inferbench::analysis
