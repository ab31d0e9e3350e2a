// summarize_benchmark: the cell's stored settings, parsed once, and the warning they lead to; summarize_measured:
// how the model was loaded (a compile in the load time, from the cache or not; a CUDA graph not captured).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "core/metrics/load_metrics.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;

std::vector<IterationRecord> iterations(int count) {
    std::vector<IterationRecord> out;
    for (int i = 0; i < count; ++i) out.push_back({i * 1'000'000, 1'000'000});
    return out;
}

TEST(Summary, SettingsAreReadOnceAndACellCutShortByMaxIterationsSaysSo) {
    store::BenchmarkRecord b;
    b.batch_size = 1;
    b.settings_json = R"({"duration_ns": 1000000000, "max_iterations": 3, "warmup_ns": 5})";
    const BenchmarkSummary cut = summarize_benchmark(b, iterations(3));
    EXPECT_EQ(cut.settings.max_iterations, 3);
    EXPECT_EQ(cut.settings.warmup_ns, 5);
    ASSERT_FALSE(cut.warnings.empty());
    EXPECT_THAT(cut.warnings.back(), HasSubstr("stopped at max_iterations (3)"));
    // Fewer iterations than the limit, or no limit: the duration ended the cell.
    const auto cut_short = [](const BenchmarkSummary& s) {
        return std::ranges::any_of(s.warnings, [](const std::string& w) { return w.find("max_iterations") != std::string::npos; });
    };
    EXPECT_FALSE(cut_short(summarize_benchmark(b, iterations(2))));
    b.settings_json = R"({"duration_ns": 1000000000, "max_iterations": 0})";
    EXPECT_FALSE(cut_short(summarize_benchmark(b, iterations(3))));
}

TEST(Summary, OnlyAMeasuredBenchmarkIsSaidNotToHaveConverged) {
    store::BenchmarkRecord b;
    b.batch_size = 1;
    b.convergence = Convergence::not_converged;
    b.stop_reason = "stdrel: not converged within stop_timeout 15s";
    const auto says_so = [](const BenchmarkSummary& s) {
        return std::ranges::any_of(s.warnings, [](const std::string& w) { return w.find("did not converge") != std::string::npos; });
    };
    b.status = BenchmarkStatus::ok;
    EXPECT_TRUE(says_so(summarize_benchmark(b, iterations(3))));
    // A skipped or failed cell measured nothing: its reason is the note, not a convergence it never tried.
    for (const auto status : {BenchmarkStatus::skipped, BenchmarkStatus::failed}) {
        b.status = status;
        EXPECT_FALSE(says_so(summarize_benchmark(b, std::span<const IterationRecord>{})));
    }
}

TEST(Summary, AProfiledRunsCheckIsReadFromItsMetricsAndNotTakenForAToolsFigures) {
    store::MeasuredBenchmark measured;
    measured.record.batch_size = 1;
    measured.iterations = iterations(10);
    measured.metrics = {{"profile_runs", 20, "count"},
                        {"profile_runtime_median_ns", 4'910'000, "ns"},
                        {"profile_events_median_ns", 4'890'000, "ns"},
                        {"profile_runtime_over_events", 1.004, "ratio"}};
    const BenchmarkSummary s = summarize_measured(measured);
    EXPECT_EQ(s.e2e.count, 10) << "the iterations are summarized, not the metrics";
    EXPECT_EQ(s.profile_check.runs, 20);
    EXPECT_EQ(s.profile_check.runtime_median_ns, 4'910'000);
    EXPECT_EQ(s.profile_check.events_median_ns, 4'890'000);
    EXPECT_EQ(s.profile_check.runtime_over_events, 1.004);
    measured.iterations.clear();
    EXPECT_EQ(summarize_measured(measured).e2e.count, 0) << "no tool figures among the profile's metrics";
    EXPECT_FALSE(summarize_measured(store::MeasuredBenchmark{}).profile_check.runs);
}

TEST(Summary, TheStagesARunnerReportedGiveTheirShareOfTheIteration) {
    store::MeasuredBenchmark measured;
    measured.record.batch_size = 1;
    measured.iterations = iterations(10);
    measured.metrics = {{"host_stage_iterations", 10, "count"},
                        {"host_stage_e2e_mean_ns", 1'000'000, "ns"},
                        {"host_stage_pre_mean_ns", 300'000, "ns"},
                        {"host_stage_post_mean_ns", 100'000, "ns"}};
    const BenchmarkSummary s = summarize_measured(measured);
    EXPECT_EQ(s.e2e.count, 10);
    EXPECT_DOUBLE_EQ(s.host_stages.share_pct().value_or(-1), 40.0);
    measured.metrics.pop_back();  // pre-processing only
    EXPECT_DOUBLE_EQ(summarize_measured(measured).host_stages.share_pct().value_or(-1), 30.0);
    measured.metrics.pop_back();  // no stage: no share
    EXPECT_FALSE(summarize_measured(measured).host_stages.share_pct());
    measured.iterations.clear();
    EXPECT_EQ(summarize_measured(measured).e2e.count, 0) << "no tool figures among the stage metrics";
}

store::MeasuredBenchmark measured_with(std::vector<store::Metric> metrics) {
    store::MeasuredBenchmark measured;
    measured.record.batch_size = 1;
    measured.iterations = iterations(3);
    measured.metrics = std::move(metrics);
    return measured;
}

TEST(Summary, ACompileInTheLoadTimeIsSaidAndIsNoToolFigure) {
    const auto compiled = summarize_measured(measured_with({{std::string(load_metrics::kCompileSeconds), 41.25, "s"},
                                                            {std::string(load_metrics::kCompileCacheHit), 0, "bool"}}));
    EXPECT_EQ(compiled.load.compile_seconds, 41.25);
    EXPECT_EQ(compiled.e2e.count, 3) << "the iterations are summarized, not taken for a tool's figures";
    EXPECT_THAT(compiled.load.notes(), ::testing::ElementsAre("load includes a 41.2 s compile"));
    const auto cached = summarize_measured(measured_with({{std::string(load_metrics::kCompileSeconds), 0.01, "s"},
                                                          {std::string(load_metrics::kCompileCacheHit), 1, "bool"}}));
    EXPECT_THAT(cached.load.notes(),
                ::testing::ElementsAre("compiled file from the cache: its compile is not in the load time"));
    const auto fallback = summarize_measured(measured_with({{std::string(load_metrics::kCudaGraphFallback), 1, "bool"}}));
    EXPECT_THAT(fallback.load.notes(), ::testing::ElementsAre(HasSubstr("no CUDA graph: capture failed")));
    EXPECT_TRUE(summarize_measured(measured_with({})).load.notes().empty());
}

}  // namespace
}  // namespace inferbench::analysis
