// Metrics and series: figures without per-iteration rows (imported logs), and migration step 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using ::testing::ElementsAre;

class BenchmarkMetricsTest : public StoreFileTest {
protected:
    static std::int64_t count(const std::filesystem::path& path, const std::string& table) {
        const Database db = testing::open_store_database(path);
        Statement statement = db.prepare("SELECT count(*) FROM " + table);  // our constant names
        EXPECT_TRUE(statement.step());
        return statement.column_int64(0);
    }

};

TEST_F(BenchmarkMetricsTest, MetricsAndSeriesRoundTrip) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    const std::vector<Metric> metrics = {{"throughput_qps", 691.435, "qps"},
                                         {"gpu_compute_p99_ms", 2.57642, "ms"},
                                         {"queries", 2077, "count"}};
    const std::vector<Series> series = {{"host_latency_ms", {35.1268, 34.8392, 35.0445}},
                                        {"gpu_latency_ms", {33.8371, 33.5586, 33.717}}};
    const std::int64_t id = store.add_benchmark(benchmark(run_id), BenchmarkData{.metrics = metrics, .series = series});
    const std::vector<Metric> one_query = {{"queries", 1, "count"}};
    const std::int64_t other = store.add_benchmark(benchmark(run_id), BenchmarkData{.metrics = one_query});

    const auto read = store.metrics(id);
    ASSERT_EQ(read.size(), 3u);  // ordered by name
    EXPECT_EQ(read[0].name, "gpu_compute_p99_ms");
    EXPECT_EQ(read[0].value, 2.57642);
    EXPECT_EQ(read[0].unit, "ms");
    EXPECT_EQ(read[1].name, "queries");
    EXPECT_EQ(read[2].name, "throughput_qps");
    EXPECT_EQ(read[2].value, 691.435);
    EXPECT_EQ(read[2].unit, "qps");
    const auto read_series = store.series(id);
    ASSERT_EQ(read_series.size(), 2u);
    EXPECT_EQ(read_series[0].name, "gpu_latency_ms");
    EXPECT_THAT(read_series[0].values, ElementsAre(33.8371, 33.5586, 33.717));
    EXPECT_EQ(read_series[1].name, "host_latency_ms");
    EXPECT_THAT(read_series[1].values, ElementsAre(35.1268, 34.8392, 35.0445));
    EXPECT_EQ(store.metrics(other).size(), 1u);
    EXPECT_TRUE(store.series(other).empty());
    EXPECT_TRUE(store.iterations(id).empty());
}

TEST_F(BenchmarkMetricsTest, TheOldSignatureStoresNoMetrics) {
    auto store = ResultsStore::open(db_path_);
    const std::vector<IterationRecord> iterations = {{1, 2, 3, 4, 5, 6}};
    const std::int64_t id = store.add_benchmark(benchmark(add_run(store)), iterations);
    EXPECT_TRUE(store.metrics(id).empty());
    EXPECT_TRUE(store.series(id).empty());
    EXPECT_EQ(store.iterations(id).size(), 1u);
}

TEST_F(BenchmarkMetricsTest, ADuplicateMetricRollsTheWholeBenchmarkBack) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    const std::vector<Metric> twice = {{"queries", 1, "count"}, {"queries", 2, "count"}};
    EXPECT_THROW(store.add_benchmark(benchmark(run_id), BenchmarkData{.metrics = twice}), EnvironmentError);
    EXPECT_TRUE(store.benchmarks(run_id).empty());
    EXPECT_EQ(count(db_path_, "benchmark_metrics"), 0);
}

TEST_F(BenchmarkMetricsTest, DeletingABenchmarkDeletesItsMetricsAndSeries) {
    auto store = ResultsStore::open(db_path_);
    const std::vector<Metric> metrics = {{"a_ms", 1, "ms"}};
    const std::vector<Series> series = {{"s_ms", {1, 2}}};
    const std::int64_t id = store.add_benchmark(benchmark(add_run(store)), BenchmarkData{.metrics = metrics, .series = series});
    {
        Database db = open_database();
        testing::exec_in_dialect(db, "PRAGMA foreign_keys = ON");
        Statement remove = db.prepare("DELETE FROM benchmarks WHERE benchmark_id = ?1");
        remove.bind_int64(1, id).run();
    }
    EXPECT_EQ(count(db_path_, "benchmark_metrics"), 0);
    EXPECT_EQ(count(db_path_, "benchmark_series"), 0);
}

TEST_F(BenchmarkMetricsTest, AVersionOneFileMigratesAndKeepsItsRows) {
    std::int64_t id = 0;
    {
        // A file as the first schema left it: step 1 only.
        Database db = open_database();
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(benchmark(add_run(store)), std::vector<IterationRecord>{{7, 8}});
        testing::exec_in_dialect(db, std::string(kBackToSchema5) + "DROP TABLE benchmark_metrics; DROP TABLE benchmark_series; DROP TABLE gpu_samples; "
                "DROP TABLE cpu_samples; DROP TABLE telemetry_sources; DROP TABLE device_probes; "
                "DROP TABLE layer_times; PRAGMA user_version = 1");
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_GE(known_schema_version(), 2);
    ASSERT_EQ(store.iterations(id).size(), 1u);
    EXPECT_EQ(store.iterations(id)[0].e2e_ns, 8);
    EXPECT_TRUE(store.metrics(id).empty());
    const std::vector<Metric> three = {{"queries", 3, "count"}};
    const std::int64_t added =
        store.add_benchmark(benchmark(store.runs()[0].run_id), BenchmarkData{.metrics = three});
    EXPECT_EQ(store.metrics(added).size(), 1u);
}

}  // namespace
}  // namespace inferbench::store
