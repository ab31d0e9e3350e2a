// The load scenarios through the real CLI: a plan's scenario runs in the worker, every query is stored
// with its wait, and `summary` shows LoadGen's verdict with its reasons; impossible settings stop the
// plan before anything runs, and a backend that cannot serve a scenario is skipped saying why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

nlohmann::json run_and_summarize(const ScratchDir& dir, const std::string& plan, int expected_exit = 0) {
    dir.write("plan.yaml", plan);
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    EXPECT_EQ(run.exit_code, expected_exit) << run.err;
    const auto summary = dir.run("summary --db r.db --json");
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    return nlohmann::json::parse(summary.out)["rows"];
}

std::string scripted(const std::string& latency_us) {
    return "models: [null]\nbackends: [scripted]\nbatch_sizes: [1]\nwarmup: 100ms\nbackend_options:\n  scripted: "
           "{latency_us: \"" + latency_us + "\"}\n";
}

TEST(Scenarios, AServerThatKeepsUpIsValid) {
    ScratchDir dir;
    // 200 us per query at 400 a second keeps up; the bound leaves room for a CI host whose two cores are
    // shared with a parallel test (a 30 ms stall of the serving thread was seen there, 20 ms was too tight).
    const auto rows = run_and_summarize(
        dir, scripted("200") + "scenario: server\ntarget_qps: 400\nlatency_bound: 100ms\nduration: 3s\n");
    ASSERT_EQ(rows.size(), 1u);
    const auto& row = rows[0];
    EXPECT_EQ(row["scenario"], "server 400 qps (p99 <= 100.00 ms)");
    EXPECT_EQ(row["result"], "VALID") << row.dump();
    EXPECT_NEAR(row["throughput_per_s"].get<double>(), 400, 80);
    EXPECT_NEAR(row["target_qps"].get<double>(), 400, 1e-9);
    EXPECT_TRUE(row.contains("queue_p99_ms"));
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmark = store.benchmarks().at(0);
    const auto iterations = store.iterations(benchmark.benchmark_id);
    ASSERT_GT(iterations.size(), 1000u);
    for (const auto& it : iterations) {
        EXPECT_NE(it.queue_ns, kNotMeasured) << "every query keeps its wait";
        EXPECT_GE(it.e2e_ns, it.queue_ns + 200'000);
    }
    bool scheduled = false;
    for (const auto& m : store.metrics(benchmark.benchmark_id)) scheduled |= m.name == "scenario_scheduled_queries";
    EXPECT_TRUE(scheduled);
}

TEST(Scenarios, ABoundBelowOneInferenceIsInvalidSayingSo) {
    ScratchDir dir;
    const auto rows = run_and_summarize(
        dir, scripted("3000") + "scenario: server\ntarget_qps: 50\nlatency_bound: 1ms\nduration: 1s\n");
    const auto& row = rows.at(0);
    EXPECT_EQ(row["status"], "ok");
    EXPECT_EQ(row["result"], "INVALID");
    EXPECT_NE(row["note"].get<std::string>().find("INVALID: the bound 1.00 ms is below one inference (the fastest took 3."),
              std::string::npos)
        << row["note"];
}

TEST(Scenarios, AServerThatFallsBehindEndsAndIsInvalid) {
    ScratchDir dir;
    // 5 ms per query serves 200 a second; 1000 arrive: the backlog passes a second within about 1.3 s.
    const auto rows = run_and_summarize(
        dir, scripted("5000") + "scenario: server\ntarget_qps: 1000\nlatency_bound: 20ms\nduration: 4s\n");
    const auto& row = rows.at(0);
    EXPECT_EQ(row["result"], "INVALID");
    EXPECT_NE(row["note"].get<std::string>().find("of the scheduled queries"), std::string::npos) << row["note"];
    EXPECT_NE(row["note"].get<std::string>().find("the system fell behind"), std::string::npos) << row["note"];
}

TEST(Scenarios, FindPeakStoresItsStepsAndThePeak) {
    ScratchDir dir;
    // 1 ms per query: at most 1000 a second. Each step at least 500 queries, so that LoadGen's early
    // stopping can pass it (459 with none over the bound); a bound of 100 ms leaves room for a busy host.
    // The search's arithmetic is checked exactly on a virtual clock (runner tests); here, what is stored.
    const auto rows = run_and_summarize(dir, scripted("1000") +
                                                 "scenario: server\nfind_peak: true\nlatency_bound: 100ms\n"
                                                 "duration: 200ms\nmin_iterations: 500\n");
    const auto& row = rows.at(0);
    EXPECT_EQ(row["scenario"], "server find_peak (p99 <= 100.00 ms)");
    if (row["peak_qps"].is_string()) {
        // No rate passed: a host so busy (the tests run two at a time on two cores) that even the lowest
        // rate's p99 went past the bound. The summary says so in words, never as a number.
        EXPECT_EQ(row["peak_qps"], "none") << row.dump();
    } else {
        const double peak = row["peak_qps"].get<double>();
        EXPECT_GT(peak, 0);
        // Above 1000 a second the backlog grows, but over a step this short (about 500 queries) it stays
        // within the 100 ms bound up to about 1.25x: a peak up to there is LoadGen's rule applied correctly.
        EXPECT_LT(peak, 1300);
        EXPECT_DOUBLE_EQ(row["target_qps"].get<double>(), peak) << "the run kept is at the peak";
    }
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto series = store.series(store.benchmarks().at(0).benchmark_id);
    ASSERT_EQ(series.size(), 4u);
    EXPECT_EQ(series[0].name, "find_peak_p99_ms");  // by name
    EXPECT_GE(series[0].values.size(), 3u);
}

TEST(Scenarios, MultiStreamCountsItsSamplesPerQuery) {
    ScratchDir dir;
    // 662 queries at least for the p99 estimate.
    const auto rows = run_and_summarize(
        dir, scripted("500") + "scenario: multi_stream\nsamples_per_query: 4\nduration: 2s\nmin_iterations: 700\n");
    const auto& row = rows.at(0);
    EXPECT_EQ(row["scenario"], "multi_stream 4/query");
    EXPECT_EQ(row["result"], "VALID") << row.dump();
    // A query is four 0.5 ms inferences (2 ms at least), and four samples of throughput.
    EXPECT_GE(row["p50_ms"].get<double>(), 2.0);
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmark = store.benchmarks().at(0);
    const auto queries = static_cast<double>(store.iterations(benchmark.benchmark_id).size());
    EXPECT_NEAR(row["throughput_per_s"].get<double>(),
                4 * queries * 1e9 / static_cast<double>(benchmark.measured_wall_ns.value()), 1e-6);
    EXPECT_TRUE(row.contains("early_stop_p99_ms"));
}

TEST(Scenarios, OfflineAndConcurrencyHaveNoVerdict) {
    ScratchDir dir;
    const auto rows = run_and_summarize(
        dir, "models: [null]\nbackends: [null]\nbatch_sizes: [1]\nduration: 300ms\nwarmup: 50ms\nscenario: offline\n"
             "streams: 2\n");
    const auto& row = rows.at(0);
    EXPECT_EQ(row["scenario"], "offline x2 streams");
    EXPECT_FALSE(row.contains("result"));
    EXPECT_GT(row["throughput_per_s"].get<double>(), 1000);
    ScratchDir concurrency;
    const auto c = run_and_summarize(
        concurrency, scripted("1000") + "scenario: concurrency\nconcurrency: 4\nbatcher: true\nduration: 500ms\n");
    EXPECT_EQ(c.at(0)["scenario"], "concurrency 4 +batcher 1ms");
}

TEST(Scenarios, ImpossibleSettingsStopThePlanWithWhereAndHow) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nscenario: server\ntarget_qps: 0\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("plan.yaml:4:13: target_qps: '0' must be above 0"), std::string::npos) << r.err;
    const auto flag = dir.run("run --model null --backend null --set find_peak=true --db r.db");
    EXPECT_EQ(flag.exit_code, 2);
    EXPECT_NE(flag.err.find("--set find_peak=true: find_peak searches the highest server QPS"), std::string::npos)
        << flag.err;
}

TEST(Scenarios, ABackendThatCannotRunSeveralInstancesIsSkippedSayingWhy) {
    ScratchDir dir;
    const auto rows = run_and_summarize(
        dir, "models: [null]\nbackends: [fault]\nbatch_sizes: [1]\nduration: 100ms\nscenario: concurrency\nstreams: 2\n", 3);
    const auto& row = rows.at(0);
    EXPECT_EQ(row["status"], "skipped");
    EXPECT_NE(row["note"].get<std::string>().find("backend fault cannot run several instances at once in one process, "
                                                  "which 2 streams needs"),
              std::string::npos)
        << row["note"];
}

}  // namespace
}  // namespace inferbench
