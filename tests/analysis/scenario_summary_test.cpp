// A stored scenario summarized by hand: samples per query in the throughput, queueing apart from
// service, the verdict's notes, the batcher's batches and find_peak's steps.
#include "analysis/summary.hpp"

#include <gtest/gtest.h>

#include "core/metrics/scenario_metrics.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench::analysis {
namespace {

namespace sm = scenario_metrics;
constexpr std::int64_t kMs = 1'000'000;

store::BenchmarkRecord cell(const ScenarioSettings& scenario, std::int64_t batch) {
    BenchmarkSpec spec;
    spec.batch_size = batch;
    spec.scenario = scenario;
    spec.loop.duration_ns = 1000 * kMs;
    store::BenchmarkRecord b;
    b.batch_size = batch;
    b.settings_json = spec_to_json(spec).dump();
    b.measured_wall_ns = 1000 * kMs;
    b.status = BenchmarkStatus::ok;
    return b;
}

store::MeasuredBenchmark measured(store::BenchmarkRecord record, std::vector<IterationRecord> iterations) {
    store::MeasuredBenchmark m;
    m.record = std::move(record);
    m.iterations = std::move(iterations);
    return m;
}

// n queries, 1 ms apart, each waiting `queue` and taking `e2e` from its arrival.
std::vector<IterationRecord> queries(int n, std::int64_t e2e, std::int64_t queue) {
    std::vector<IterationRecord> out;
    for (int i = 0; i < n; ++i) {
        IterationRecord r{i * kMs, e2e};
        r.queue_ns = queue;
        out.push_back(r);
    }
    return out;
}

TEST(ScenarioSummary, ACellWithoutScenarioSettingsRanSingleStream) {
    store::BenchmarkRecord b;
    b.batch_size = 4;
    b.settings_json = R"({"duration_ns": 1000000000, "warmup_ns": 0})";
    b.measured_wall_ns = 100 * kMs;
    store::MeasuredBenchmark m = measured(b, std::vector<IterationRecord>(100, IterationRecord{0, kMs}));
    const BenchmarkSummary s = summarize_measured(m);
    ASSERT_TRUE(s.scenario.settings);
    EXPECT_EQ(s.scenario.settings->scenario, Scenario::single_stream);
    EXPECT_EQ(s.scenario.label, "single_stream");
    EXPECT_EQ(verdict_word(s.scenario.verdict), "VALID");
    EXPECT_EQ(s.samples, 400);
    EXPECT_DOUBLE_EQ(s.throughput_per_s, 4000);
    EXPECT_FALSE(s.scenario.queue) << "a closed loop records no wait";
}

TEST(ScenarioSummary, AnImportedBenchmarkHasNoScenario) {
    store::BenchmarkRecord b;
    b.settings_json = R"({"gpu_name": "NVIDIA H200"})";
    EXPECT_FALSE(stored_scenario(b));
}

TEST(ScenarioSummary, MultiStreamCountsSamplesPerQuery) {
    ScenarioSettings s;
    s.scenario = Scenario::multi_stream;
    s.samples_per_query = 8;
    store::MeasuredBenchmark m = measured(cell(s, 2), queries(700, 4 * kMs, 0));
    const BenchmarkSummary summary = summarize_measured(m);
    EXPECT_EQ(summary.samples, 5600);
    EXPECT_DOUBLE_EQ(summary.throughput_per_s, 5600);  // over the 1 s measured
    EXPECT_EQ(summary.scenario.label, "multi_stream 8/query");
    EXPECT_EQ(verdict_word(summary.scenario.verdict), "VALID");
    ASSERT_TRUE(summary.scenario.verdict.estimate);
    EXPECT_EQ(summary.scenario.verdict.estimate->estimate_ns, 4 * kMs);
}

TEST(ScenarioSummary, ServerQueueingApartFromServiceAndItsVerdict) {
    ScenarioSettings s;
    s.scenario = Scenario::server;
    s.target_qps = 1000;
    s.latency_bound_ns = 2 * kMs;
    store::MeasuredBenchmark m = measured(cell(s, 1), queries(1000, 3 * kMs, kMs));
    m.metrics = {{std::string(sm::kScheduledQueries), 1000, "count"},
                 {std::string(sm::kIssuedQueries), 1000, "count"},
                 {std::string(sm::kScheduleSpan), 1000.0 * kMs, "ns"},
                 {std::string(sm::kTargetQps), 1000, "qps"}};
    const BenchmarkSummary summary = summarize_measured(m);
    const ScenarioSummary& sc = summary.scenario;
    EXPECT_EQ(sc.label, "server 1000 qps (p99 <= 2.00 ms)");
    ASSERT_TRUE(sc.queue && sc.service);
    EXPECT_DOUBLE_EQ(sc.queue->p99, 1.0 * kMs);
    EXPECT_DOUBLE_EQ(sc.service->p99, 2.0 * kMs);
    EXPECT_DOUBLE_EQ(*sc.completed_qps, 1000);
    EXPECT_DOUBLE_EQ(*sc.target_qps, 1000);
    EXPECT_EQ(verdict_word(sc.verdict), "INVALID");
    const auto notes = sc.notes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0], "INVALID: p99 (LoadGen rank) 3.00 ms > bound 2.00 ms");
    EXPECT_TRUE(summary.warnings.empty() || summary.warnings.front().find("iterations") == std::string::npos);
}

TEST(ScenarioSummary, TheBatchersBatchesAndFindPeaksSteps) {
    ScenarioSettings s;
    s.scenario = Scenario::server;
    s.batcher = true;
    s.find_peak = true;
    store::MeasuredBenchmark m = measured(cell(s, 8), queries(1000, kMs, 0));
    m.metrics = {{std::string(sm::kInferences), 250, "count"},
                 {std::string(sm::kSmallestBatch), 8, "count"},
                 {std::string(sm::kPeakQps), 0, "qps"}};
    m.series = {{std::string(sm::kPeakStepQps), {1250, 625}},
                {std::string(sm::kPeakStepP99), {40, 9}},
                {std::string(sm::kPeakStepQueries), {2500, 1300}},
                {std::string(sm::kPeakStepPassed), {0, 0}}};
    const BenchmarkSummary summary = summarize_measured(m);
    const ScenarioSummary& sc = summary.scenario;
    EXPECT_EQ(sc.label, "server find_peak (p99 <= 100.00 ms) +batcher 1ms");
    EXPECT_DOUBLE_EQ(*sc.mean_batch, 4.0);
    EXPECT_EQ(summary.samples, 1000) << "a query the batcher batches is one sample";
    ASSERT_EQ(sc.peak_steps.size(), 2u);
    EXPECT_DOUBLE_EQ(sc.peak_steps[1].qps, 625);
    EXPECT_FALSE(sc.peak_steps[1].passed);
    const auto notes = sc.notes();
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "find_peak: no rate tried met the bound; the run kept is at the lowest rate tried"),
              notes.end());
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "the batcher padded batches below 8 to 8 (the model loads at no smaller batch)"),
              notes.end());
}

TEST(ScenarioSummary, APeakThatPassedItsStepButNotItsSecondRunIsSaid) {
    ScenarioSettings s;
    s.scenario = Scenario::server;
    s.find_peak = true;
    store::MeasuredBenchmark m = measured(cell(s, 1), queries(1000, kMs, 0));
    m.metrics = {{std::string(sm::kPeakQps), 565.6, "qps"},
                 {std::string(sm::kPeakUnconfirmedQps), 585.8, "qps"},
                 {std::string(sm::kPeakUnconfirmed), 1, "count"}};
    const auto confirmed = summarize_measured(m).scenario.notes();
    EXPECT_NE(std::find(confirmed.begin(), confirmed.end(),
                        "find_peak: 585.8 qps passed its step but not a second run (1 rate so), as a p99 near "
                        "saturation varies from run to run; the peak is 565.6 qps, which passed both"),
              confirmed.end());
    m.metrics[0].value = 0;
    m.metrics[2].value = 3;
    const auto none = summarize_measured(m).scenario.notes();
    EXPECT_NE(std::find(none.begin(), none.end(),
                        "find_peak: 585.8 qps passed its step but not a second run (3 rates so), as a p99 near "
                        "saturation varies from run to run; no rate passed twice: the run kept is the last tried"),
              none.end());
}

}  // namespace
}  // namespace inferbench::analysis
