// summarize_benchmark: the cell's stored settings, parsed once, and the warning they lead to; summarize_measured:
// how the model was loaded (a compile in the load time, from the cache or not; a CUDA graph not captured).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "core/load_metrics.hpp"

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
