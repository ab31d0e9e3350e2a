// summarize_benchmark: the cell's stored settings, parsed once, and the warning they lead to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/summary.hpp"

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

}  // namespace
}  // namespace inferbench::analysis
