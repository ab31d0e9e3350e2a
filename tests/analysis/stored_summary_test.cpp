// A stored benchmark summarized through the store (its iterations walked a chunk at a time, never all held)
// gives the figures the sorted values give: core/statistics/statistics' summarize() of each timing column, the
// order-statistics intervals of the sorted latencies, LoadGen's verdict on them; and the same summary as the
// benchmark read into memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "analysis/summary.hpp"
#include "core/statistics/confidence.hpp"
#include "core/plan/spec_json.hpp"
#include "core/temp_dir.hpp"

namespace inferbench::analysis {
namespace {

constexpr std::int64_t kMs = 1'000'000;

store::BenchmarkRecord server_cell(std::int64_t run_id) {
    BenchmarkSpec spec;
    spec.batch_size = 1;
    spec.scenario.scenario = Scenario::server;
    spec.scenario.target_qps = 1000;
    spec.scenario.latency_bound_ns = 3 * kMs;
    spec.loop.duration_ns = 1000 * kMs;
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.model = "m";
    b.backend = "null";
    b.device = "cpu";
    b.precision = "fp32";
    b.batch_size = 1;
    b.settings_json = spec_to_json(spec).dump();
    b.measured_wall_ns = 150'000 * kMs;
    b.status = BenchmarkStatus::ok;
    return b;
}

// Skewed latencies about 1 ms with a queue time and, for every other query, a device time.
std::vector<IterationRecord> queries(int n) {
    std::mt19937_64 random(17);
    std::lognormal_distribution<double> latency(13.8, 0.5);
    std::uniform_int_distribution<std::int64_t> wait(0, 200'000);
    std::vector<IterationRecord> out;
    for (int i = 0; i < n; ++i) {
        IterationRecord r{i * kMs + wait(random), static_cast<std::int64_t>(latency(random))};
        r.queue_ns = std::min(wait(random), r.e2e_ns);
        if (i % 2 == 0) r.compute_ns = r.e2e_ns / 2;
        out.push_back(r);
    }
    return out;
}

std::vector<double> sorted_doubles(const std::vector<IterationRecord>& iterations) {
    std::vector<double> sorted;
    for (const auto& it : iterations) sorted.push_back(static_cast<double>(it.e2e_ns));
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

void expect_timing(const TimingSummary& got, const TimingSummary& want) {
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.min, want.min);
    EXPECT_EQ(got.max, want.max);
    EXPECT_EQ(got.mean, want.mean);
    EXPECT_NEAR(got.stdev, want.stdev, want.stdev * 1e-12);
    EXPECT_EQ(got.p50, want.p50);
    EXPECT_EQ(got.p90, want.p90);
    EXPECT_EQ(got.p95, want.p95);
    EXPECT_EQ(got.p99, want.p99);
    EXPECT_EQ(got.p999, want.p999);
}

TEST(StoredSummary, WalkedThroughTheStoreItEqualsTheSortedValuesFigures) {
    const TempDir dir("stored-summary");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    store::RunRecord run;
    run.name = "t";
    run.plan_json = run.environment_json = "{}";
    const std::int64_t run_id = results.begin_run(run);
    const auto iterations = queries(150'000);  // more than two of the store's read chunks
    store::BenchmarkRecord record = server_cell(run_id);
    record.benchmark_id = results.add_benchmark(record, iterations);
    const auto stored = results.benchmarks(run_id);
    ASSERT_EQ(stored.size(), 1u);

    const BenchmarkSummary got = summarize_stored(results, stored[0], results.runs());

    std::vector<std::int64_t> e2e, compute, queue, service;
    for (const auto& it : iterations) {
        e2e.push_back(it.e2e_ns);
        if (it.compute_ns != kNotMeasured) compute.push_back(it.compute_ns);
        queue.push_back(it.queue_ns);
        service.push_back(it.e2e_ns - it.queue_ns);
    }
    expect_timing(got.e2e, summarize(e2e));
    ASSERT_TRUE(got.compute);
    expect_timing(*got.compute, summarize(compute));
    EXPECT_FALSE(got.h2d);
    ASSERT_TRUE(got.scenario.queue && got.scenario.service);
    expect_timing(*got.scenario.queue, summarize(queue));
    expect_timing(*got.scenario.service, summarize(service));
    const auto sorted = sorted_doubles(iterations);
    EXPECT_EQ(got.ci.p50, quantile_interval(sorted, 0.50));
    EXPECT_EQ(got.ci.p90, quantile_interval(sorted, 0.90));
    EXPECT_EQ(got.ci.p99, quantile_interval(sorted, 0.99));
    ASSERT_TRUE(got.ci.mean && got.ci.throughput);
    EXPECT_EQ(got.throughput_per_s, throughput_per_s(1, 150'000, 150'000 * kMs));
    // LoadGen's verdict on the sorted latencies: its p99 rank and the queries over the 3 ms bound.
    std::vector<std::int64_t> sorted_e2e = e2e;
    std::sort(sorted_e2e.begin(), sorted_e2e.end());
    ASSERT_TRUE(got.scenario.verdict.server);
    EXPECT_EQ(got.scenario.verdict.percentile_ns, sorted_e2e[static_cast<std::size_t>(150'000 * 0.99)]);
    EXPECT_EQ(got.scenario.verdict.server->overlatency,
              sorted_e2e.end() - std::upper_bound(sorted_e2e.begin(), sorted_e2e.end(), 3 * kMs));
    EXPECT_GT(got.scenario.verdict.server->overlatency, 0);

    // Read into memory, the same benchmark summarizes to the same figures.
    const BenchmarkSummary held = summarize_stored(read_measured(results, stored[0]), results.runs());
    expect_timing(got.e2e, held.e2e);
    EXPECT_EQ(got.ci.mean, held.ci.mean);
    EXPECT_EQ(got.ci.throughput, held.ci.throughput);
    EXPECT_EQ(got.warnings, held.warnings);
    EXPECT_EQ(got.scenario.verdict.reasons, held.scenario.verdict.reasons);
}

// A source that does not know its count: the in-order figures take a second walk, and come out the same.
class UncountedIterations final : public IterationSource {
public:
    explicit UncountedIterations(std::span<const IterationRecord> iterations) : iterations_(iterations) {}
    void for_each_chunk(const IterationChunk& take) const override { take(iterations_); }

private:
    std::span<const IterationRecord> iterations_;
};

TEST(StoredSummary, ASourceWithoutItsCountGivesTheSameStatistics) {
    const auto iterations = queries(20'000);
    const auto reads = [](const SortedValues& sorted) { (void)quantile_interval(sorted, 0.5); };
    const IterationStatistics counted = iteration_statistics(IterationsInMemory(iterations), reads);
    const IterationStatistics walked = iteration_statistics(UncountedIterations(iterations), reads);
    EXPECT_EQ(walked.count, counted.count);
    EXPECT_EQ(walked.e2e_batch_means, counted.e2e_batch_means);
    EXPECT_EQ(walked.cycle_batch_means, counted.cycle_batch_means);
    EXPECT_EQ(walked.fastest_cycle_ns, counted.fastest_cycle_ns);
    EXPECT_EQ(quantile_interval(walked.e2e.sorted, 0.5), quantile_interval(counted.e2e.sorted, 0.5));
    EXPECT_TRUE(walked.e2e_batch_means);
}

}  // namespace
}  // namespace inferbench::analysis
