// The worker's scenario runs on a virtual clock with scripted backends: the instances each scenario gets,
// the figures it stores beside its queries, and find_peak's search ending at a rate that holds the bound.
#include "runner/load/scenario_run.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "core/metrics/scenario_metrics.hpp"
#include "core/statistics/scenario_verdict.hpp"
#include "scripted_backend.hpp"
#include "virtual_clock.hpp"

namespace inferbench::runner {
namespace {

namespace sm = scenario_metrics;
constexpr std::int64_t kMs = 1'000'000;

std::optional<double> metric(const ScenarioOutcome& outcome, std::string_view name) {
    for (const auto& m : outcome.metrics)
        if (m.name == name) return m.value;
    return std::nullopt;
}

struct Cell {
    testing::VirtualClock clock;
    testing::Script script{{kMs}};
    BenchmarkSpec spec;
    std::vector<std::int64_t> made;  // batch sizes of the instances made
    std::int64_t smallest_loadable = 1;

    std::unique_ptr<Backend> make(std::int64_t batch) {
        if (batch < smallest_loadable) throw std::runtime_error("input x has a fixed batch of 4");
        made.push_back(batch);
        auto backend = std::make_unique<testing::ScriptedBackend>(script, clock);
        backend->set_batch_size(batch);
        return backend;
    }
};

TEST(ScenarioRun, StreamsGetAnInstanceEach) {
    Cell cell;
    cell.spec.batch_size = 8;
    cell.spec.scenario.streams = 3;
    testing::ScriptedBackend primary(cell.script, cell.clock);
    const ScenarioInstances instances(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    ASSERT_EQ(instances.streams().size(), 3u);
    EXPECT_EQ(instances.streams()[0].front().backend, &primary);
    EXPECT_EQ(cell.made, (std::vector<std::int64_t>{8, 8}));
}

TEST(ScenarioRun, TheBatcherGetsAnInstancePerBatchSizeItCanLoad) {
    Cell cell;
    cell.spec.batch_size = 8;
    cell.spec.scenario.scenario = Scenario::server;
    cell.spec.scenario.batcher = true;
    testing::ScriptedBackend primary(cell.script, cell.clock);
    const ScenarioInstances all(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    EXPECT_EQ(cell.made, (std::vector<std::int64_t>{1, 2, 4}));
    EXPECT_EQ(all.smallest_batch(), 1);
    EXPECT_TRUE(all.notes().empty());

    cell.made.clear();
    cell.smallest_loadable = 4;
    const ScenarioInstances fixed(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    EXPECT_EQ(fixed.smallest_batch(), 4);
    ASSERT_EQ(fixed.notes().size(), 2u);
    EXPECT_EQ(fixed.notes()[0], "batch 1 not loadable (input x has a fixed batch of 4); smaller batches are padded");
}

struct Sink {
    std::vector<IterationRecord> records = std::vector<IterationRecord>(100'000);
    std::atomic<std::int64_t> published{0};
    TraceSink sink() { return {records.data(), &published}; }
};

TEST(ScenarioRun, AServerRunSaysWhatItScheduledAndIssued) {
    Cell cell;
    cell.spec.scenario.scenario = Scenario::server;
    cell.spec.scenario.target_qps = 200;  // 5 ms apart on average, 1 ms each: it keeps up
    testing::ScriptedBackend primary(cell.script, cell.clock);
    const ScenarioInstances instances(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    LoopSettings loop;
    loop.duration_ns = 2'000 * kMs;
    loop.min_iterations = 10;
    Sink sink;
    std::atomic<std::int32_t> stop{0};
    const ScenarioOutcome outcome = run_scenario(instances, cell.spec, loop, 0.001, sink.sink(), 100'000, stop, cell.clock);
    const double scheduled = *metric(outcome, sm::kScheduledQueries);
    EXPECT_NEAR(scheduled, 400, 60);
    EXPECT_EQ(*metric(outcome, sm::kIssuedQueries), scheduled);
    EXPECT_EQ(outcome.measured.iterations, static_cast<std::int64_t>(scheduled));
    EXPECT_EQ(*metric(outcome, sm::kFellBehind), 0);
    EXPECT_EQ(*metric(outcome, sm::kTargetQps), 200);
    EXPECT_GE(*metric(outcome, sm::kScheduleSpan), 2'000 * kMs);
    for (std::int64_t i = 0; i < outcome.measured.iterations; ++i)
        EXPECT_GE(sink.records[static_cast<std::size_t>(i)].e2e_ns, kMs);
}

TEST(ScenarioRun, FindPeakEndsAtARateThatHoldsTheBound) {
    // 1 ms per inference: an M/D/1 queue. Its p99 wait reaches 4 ms (5 ms of latency) near 55% load, and
    // a step must show the p99 within the bound with 99% confidence, which takes some margin below that.
    Cell cell;
    cell.spec.scenario.scenario = Scenario::server;
    cell.spec.scenario.find_peak = true;
    cell.spec.scenario.latency_bound_ns = 5 * kMs;
    testing::ScriptedBackend primary(cell.script, cell.clock);
    const ScenarioInstances instances(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    LoopSettings loop;
    loop.duration_ns = 3'000 * kMs;
    loop.min_iterations = 1000;
    Sink sink;
    std::atomic<std::int32_t> stop{0};
    const ScenarioOutcome outcome = run_scenario(instances, cell.spec, loop, 0.001, sink.sink(), 100'000, stop, cell.clock);
    const double peak = *metric(outcome, sm::kPeakQps);
    EXPECT_GT(peak, 400);
    EXPECT_LT(peak, 600);
    EXPECT_EQ(*metric(outcome, sm::kTargetQps), peak) << "the run kept is at the peak";
    ASSERT_EQ(outcome.series.size(), 4u);
    EXPECT_EQ(outcome.series[0].name, sm::kPeakStepQps);
    EXPECT_DOUBLE_EQ(outcome.series[0].values.front(), 1250) << "1.25 x the warm-up's capacity";
    // The kept run, judged as the summary judges it.
    std::vector<std::int64_t> latencies;
    for (std::int64_t i = 0; i < outcome.measured.iterations; ++i)
        latencies.push_back(sink.records[static_cast<std::size_t>(i)].e2e_ns);
    std::sort(latencies.begin(), latencies.end());
    ScenarioFacts facts;
    facts.scheduled = facts.issued = outcome.measured.iterations;
    EXPECT_LE(early_stopping::loadgen_percentile(latencies, 0.99), 5 * kMs);
}

TEST(ScenarioRun, OfflineSizesItsQueryFromTheWarmUpsPace) {
    Cell cell;
    cell.spec.scenario.scenario = Scenario::offline;
    cell.spec.scenario.streams = 2;
    testing::ScriptedBackend primary(cell.script, cell.clock);
    const ScenarioInstances instances(primary, cell.spec, [&](std::int64_t b) { return cell.make(b); });
    LoopSettings loop;
    loop.duration_ns = 1'000 * kMs;
    loop.min_iterations = 1;
    Sink sink;
    std::atomic<std::int32_t> stop{0};
    const ScenarioOutcome outcome = run_scenario(instances, cell.spec, loop, 0.001, sink.sink(), 100'000, stop, cell.clock);
    // 1.1 x 1 s x 2 streams / 1 ms = 2200 inferences, two at a time: 1.1 s.
    EXPECT_EQ(outcome.measured.iterations, 2200);
    EXPECT_EQ(outcome.measured.wall_ns, 1'100 * kMs);
}

}  // namespace
}  // namespace inferbench::runner
