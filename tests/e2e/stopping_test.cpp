// Stopping criteria, repeats and compare's verdicts end to end: the real CLI with the null and fault
// backends, and databases crafted with known latencies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/plan/spec_json.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ScratchDir = testing::CliScratch;

constexpr const char* kNull = "run --backend null --model null --batch 1 --warmup 5ms --max-iterations 2000000 ";

nlohmann::json summary_rows(const ScratchDir& dir, const std::string& args) {
    const auto r = dir.run("summary --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("rows");
}

TEST(Stopping, StdrelConvergesAndSaysSo) {
    ScratchDir dir;
    // 2 ms sleeps under a loose max_noise: converged by the noise falling below it. (The null backend's
    // ~100 ns iterations have a noise far above any target on a busy host: their loop ends when the noise
    // plateaus, which is not converged.)
    const auto r = dir.run(
        "run --backend fault --model null --batch 1 --warmup 0s --set stop=stdrel --set min_time=50ms "
        "--set max_noise=100% --set stop_timeout=5s --set backend_options.fault.sleep_ms=2 --db s.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto b = store::ResultsStore::open(dir.file("s.db")).benchmarks();
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].convergence, Convergence::converged) << b[0].stop_reason;
    EXPECT_THAT(b[0].stop_reason, HasSubstr("stdrel: noise "));
    const auto rows = summary_rows(dir, "--db s.db");
    EXPECT_EQ(rows[0]["convergence"], "converged");
    EXPECT_GT(rows[0]["mean_ci95_half_ms"].get<double>(), 0);
    EXPECT_LE(rows[0]["mean_ci95_low_ms"].get<double>(), rows[0]["mean_ms"].get<double>());
    EXPECT_GE(rows[0]["mean_ci95_high_ms"].get<double>(), rows[0]["mean_ms"].get<double>());
    EXPECT_THAT(rows[0]["ci_method"].get<std::string>(), HasSubstr("batch means"));
}

TEST(Stopping, EntropyConvergesOnTheNullBackend) {
    ScratchDir dir;
    const auto r = dir.run(std::string(kNull) + "--set stop=entropy --set stop_timeout=5s --db e.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto b = store::ResultsStore::open(dir.file("e.db")).benchmarks();
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].convergence, Convergence::converged) << b[0].stop_reason;
    EXPECT_THAT(b[0].stop_reason, HasSubstr("entropy: flat ("));
}

TEST(Stopping, ABenchmarkThatDidNotConvergeIsMarkedInEveryTable) {
    // 1 ms per inference for at most 200 ms, and the criterion asked only from 100000 iterations on.
    ScratchDir dir;
    const auto r = dir.run(
        "run --backend fault --model null --batch 1 --warmup 0s --min-iterations 100000 --set stop=stdrel "
        "--set min_time=0s --set stop_timeout=200ms --set backend_options.fault.sleep_ms=1 --db n.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("not converged"));
    EXPECT_THAT(r.out, HasSubstr("did not converge: stdrel: not converged within stop_timeout 200ms"));
    const auto rows = summary_rows(dir, "--db n.db");
    EXPECT_EQ(rows[0]["convergence"], "not converged");
    EXPECT_THAT(rows[0]["stop_reason"].get<std::string>(), HasSubstr("not converged within stop_timeout 200ms"));
    const auto report = dir.run("report --db n.db --out rep --no-plots --no-excel");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const std::string html = testing::read_file(dir.file("rep/report.html"));
    EXPECT_THAT(html, HasSubstr("not converged"));
    EXPECT_THAT(html, HasSubstr("did not converge: stdrel: not converged within stop_timeout 200ms"));
}

TEST(Stopping, ImpossibleSettingsAreOneLineBeforeAnythingRuns) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nstop: stdrel\nmin_time: 20s\n");
    auto r = dir.run("run plan.yaml --db x.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("plan.yaml:4:11: stop_timeout 15s is below min_time 20s"));
    r = dir.run("run --backend null --model null --set stop=stdrel --set max_noise=0% --db x.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--set max_noise=0%: max_noise: '0%' must be above 0%"));
    r = dir.run("run --backend null --model null --set repeats=0 --db x.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--set repeats=0: repeats: '0' is below the minimum 1"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("x.db")));
}

TEST(Repeats, InterleavedAcrossCellsAndCombinedPerCell) {
    ScratchDir dir;
    auto r = dir.run("run --backend null --model null --batch 1,2 --duration 20ms --warmup 5ms --set repeats=3 "
                     "--dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("   1  null null cpu fp32 b1 (repeat 1/3)\n   2  null null cpu fp32 b2 (repeat 1/3)\n"
                                 "   1  null null cpu fp32 b1 (repeat 2/3)\n"));
    EXPECT_THAT(r.err, HasSubstr("6 benchmarks (2 cells x 3 repeats)"));
    r = dir.run("run --backend null --model null --batch 1,2 --duration 20ms --warmup 5ms --set repeats=3 "
                "--db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("[3/6] null null cpu fp32 b1 (repeat 2/3)"));
    // Stored in the order they ran (benchmark ids): A B A B A B.
    const auto db = store::Database::open(dir.file("r.db"), SQLITE_OPEN_READONLY);
    store::Statement order = db.prepare("SELECT ordinal, repeat_index FROM benchmarks ORDER BY benchmark_id");
    std::vector<std::pair<std::int64_t, std::int64_t>> ran;
    while (order.step()) ran.emplace_back(order.column_int64(0), order.column_int64(1));
    EXPECT_EQ(ran, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}));
    // One row per cell: the mean of the repeats' means with a Student-t interval.
    const auto rows = summary_rows(dir, "--db r.db");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["repeats"], 3);
    EXPECT_GE(rows[0]["cv_of_means_pct"].get<double>(), 0);
    EXPECT_EQ(rows[0]["ci_method"], "Student t over 3 repeats");
    EXPECT_LT(rows[0]["mean_ci95_low_ms"].get<double>(), rows[0]["mean_ci95_high_ms"].get<double>());
    EXPECT_EQ(summary_rows(dir, "--db r.db --each-repeat").size(), 6u);
}

TEST(Repeats, AResumedRunMeasuresOnlyTheRepeatsWithoutAnOkRecord) {
    // Batch 2 fails at load every time; batch 1 measures. Two repeats of each.
    ScratchDir dir;
    dir.write("plan.yaml",
              "models: [null]\nbackends: [fault]\nbatch_sizes: [1, 2]\nduration: 20ms\nwarmup: 0s\nrepeats: 2\n"
              "backend_options:\n  fault: {fault: throw, phase: load, fault_batch: 2}\n");
    auto r = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(r.exit_code, 1) << r.err;
    const auto before = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(before.size(), 4u);
    r = dir.run("run --resume latest --db r.db --dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "   2  null fault cpu fp32 b2 (repeat 1/2)\n   2  null fault cpu fp32 b2 (repeat 2/2)\n");
    EXPECT_THAT(r.err, HasSubstr("2 of 4 benchmarks of run 1 would run again"));
    r = dir.run("run --resume latest --db r.db --quiet");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto after = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(after.size(), 4u) << "each repeat of each cell has one record";
    for (std::size_t i = 0; i < 4; ++i) {
        if (after[i].batch_size == 1) EXPECT_EQ(after[i].benchmark_id, before[i].benchmark_id) << "measured once";
        else EXPECT_NE(after[i].benchmark_id, before[i].benchmark_id) << "measured again";
    }
}

// A database holding one run of one cell whose iterations the test chooses: `mean_ns` +- 0.9% in a
// cycle of 7, so the means of its batches of consecutive iterations differ a little and its interval
// is narrow.
void craft(const std::filesystem::path& path, double mean_ns, const std::string& stop = "fixed") {
    auto results = store::ResultsStore::open(path);
    store::RunRecord run;
    run.name = "crafted";
    run.started_unix_ms = 1'700'000'000'000;
    run.plan_json = "{}";
    run.environment_json = R"({"host":"bench-01","cpu_model":"Test CPU"})";
    run.host = "bench-01";
    const auto run_id = results.begin_run(run);
    BenchmarkSpec spec;
    spec.model = "resnet50";
    spec.backend = "torch";
    spec.loop.stop = stop == "stdrel" ? StopCriterion::stdrel : StopCriterion::fixed;
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.model = "resnet50";
    b.backend = "torch";
    b.device = "cpu";
    b.precision = "fp32";
    b.status = BenchmarkStatus::ok;
    b.settings_json = spec_to_json(spec).dump();
    std::vector<IterationRecord> iterations;
    std::int64_t start = 1'000'000'000;
    for (int i = 0; i < 3000; ++i) {
        const auto e2e = static_cast<std::int64_t>(mean_ns * (1 + 0.003 * (i * 37 % 7 - 3)));
        iterations.push_back({start, e2e});
        start += e2e;
    }
    b.measured_wall_ns = start - 1'000'000'000;
    results.add_benchmark(b, iterations);
    results.end_run(run_id, 1'700'000'001'000, RunStatus::completed);
}

TEST(CompareVerdicts, SlowerBeyondTheThresholdFailsTheGate) {
    ScratchDir dir;
    craft(dir.file("before.db"), 1'000'000);
    craft(dir.file("after.db"), 1'100'000);
    craft(dir.file("same.db"), 1'001'000);
    auto r = dir.run("compare --db before.db --db after.db --fail-on-regression 5% --format md");
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_THAT(r.out, HasSubstr("SLOWER +10.0% (+"));
    EXPECT_THAT(r.err, HasSubstr("compare: regression: resnet50 torch fp32 b1 [2] "));
    EXPECT_THAT(r.err, HasSubstr("1 pair is slower than the baseline by more than 5% (exit code 5)"));
    r = dir.run("compare --db before.db --db after.db --fail-on-regression 20%");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // The other way round it is faster, and faster never fails the gate.
    r = dir.run("compare --db after.db --db before.db --fail-on-regression 5% --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto rows = nlohmann::json::parse(r.out).at("rows");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(rows[0]["verdict"].is_null()) << "the baseline has no verdict";
    EXPECT_EQ(rows[1]["verdict"], "FASTER");
    EXPECT_NEAR(rows[1]["change_pct"].get<double>(), -100.0 / 11, 0.01);
    EXPECT_LT(rows[1]["change_ci95_low_pct"].get<double>(), rows[1]["change_pct"].get<double>());
    // 0.1% apart with narrow intervals: the same within the 2% margin.
    r = dir.run("compare --db before.db --db same.db --fail-on-regression 5% --format md");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("SAME +0.1% ("));
}

TEST(CompareVerdicts, SidesRunUnderDifferentSettingsAreWarnedOf) {
    ScratchDir dir;
    craft(dir.file("fixed.db"), 1'000'000);
    craft(dir.file("stdrel.db"), 1'000'000, "stdrel");
    const auto r = dir.run("compare --db fixed.db --db stdrel.db --format md");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("- warning: the sides ran with different settings: stopping criterion differs: [1] "
                                 "fixed, [2] stdrel (max_noise 0.5%, min_time 500ms, stop_timeout 15s) (1 row)"));
}

TEST(CompareVerdicts, BadPercentagesAreUsageErrors) {
    ScratchDir dir;
    craft(dir.file("a.db"), 1'000'000);
    auto r = dir.run("compare --db a.db --db a.db --fail-on-regression 5");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--fail-on-regression 5: give a percentage with a % sign"));
    r = dir.run("compare --db a.db --db a.db --margin=-1%");
    EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace inferbench
