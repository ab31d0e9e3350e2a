// compare's verdicts from the intervals of two means, worked out by hand; and the pairs that fail
// --fail-on-regression.
#include "report/verdict.hpp"

#include <gtest/gtest.h>

#include "report/comparison.hpp"

namespace inferbench::report {
namespace {

Interval around(double mean, double half) { return {mean - half, mean + half}; }

TEST(Verdict, SlowerWhereTheWholeIntervalIsAboveZero) {
    // 107 +- 2 against 100 +- 1: change +7%; h = hypot(2/107, 1/100) = 0.021199, so the ratio lies in
    // 1.07 exp(-h) .. 1.07 exp(h) = 1.047556 .. 1.092924: +4.76% .. +9.29%.
    const auto v = judge(107, around(107, 2), 100, around(100, 1));
    EXPECT_EQ(v.verdict, Verdict::slower);
    EXPECT_NEAR(v.change, 0.07, 1e-12);
    ASSERT_TRUE(v.change_ci);
    EXPECT_NEAR(v.change_ci->low, 0.0475564, 1e-6);
    EXPECT_NEAR(v.change_ci->high, 0.0929245, 1e-6);
    EXPECT_EQ(v.text(), "SLOWER +7.0% (+4.8% to +9.3%)");
}

TEST(Verdict, SameWhereTheWholeIntervalIsWithinTheMargin) {
    // 100.5 +- 0.5 against 100 +- 0.5: +0.5%, -0.21% .. +1.21%: within +-2%.
    EXPECT_EQ(judge(100.5, around(100.5, 0.5), 100, around(100, 0.5)).verdict, Verdict::same);
    // A real but small difference is still SAME: -1.5% .. -0.5% lies within the margin.
    EXPECT_EQ(judge(99, around(99, 0.35), 100, around(100, 0.35)).verdict, Verdict::same);
    // With a margin of 0.1% it is FASTER.
    EXPECT_EQ(judge(99, around(99, 0.35), 100, around(100, 0.35), 0.001).verdict, Verdict::faster);
}

TEST(Verdict, FasterWhereTheWholeIntervalIsBelowZero) {
    // 95 +- 1 against 100 +- 1: -5%; h = hypot(1/95, 1/100) = 0.014519: -6.37% .. -3.61%.
    const auto v = judge(95, around(95, 1), 100, around(100, 1));
    EXPECT_EQ(v.verdict, Verdict::faster);
    EXPECT_NEAR(v.change_ci->low, -0.0636935, 1e-6);
    EXPECT_NEAR(v.change_ci->high, -0.0361063, 1e-6);
}

TEST(Verdict, UnsureWhereTheIntervalHoldsZeroAndPassesTheMargin) {
    // 101 +- 3 against 100 +- 3: +1%, -3.18% .. +5.36%.
    EXPECT_EQ(judge(101, around(101, 3), 100, around(100, 3)).verdict, Verdict::unsure);
    // No interval on a side: nothing can be claimed.
    const auto v = judge(101, std::nullopt, 100, around(100, 1));
    EXPECT_EQ(v.verdict, Verdict::unsure);
    EXPECT_FALSE(v.change_ci);
    EXPECT_EQ(v.text(), "UNSURE +1.0% (no interval for a side)");
}

TEST(Verdict, PercentFlagsNeedTheirSign) {
    EXPECT_EQ(parse_percent_flag("5%"), 0.05);
    EXPECT_EQ(parse_percent_flag(" 2.5 % "), 0.025);
    EXPECT_FALSE(parse_percent_flag("5"));
    EXPECT_FALSE(parse_percent_flag("-1%"));
    EXPECT_FALSE(parse_percent_flag("lots%"));
}

analysis::BenchmarkSummary cell(std::int64_t batch, double mean_ms, double half_ms) {
    analysis::BenchmarkSummary s;
    s.benchmark.model = "resnet50";
    s.benchmark.backend = "torch";
    s.benchmark.device = "cuda:0";
    s.benchmark.precision = "fp16";
    s.benchmark.batch_size = batch;
    s.benchmark.status = BenchmarkStatus::ok;
    s.e2e.count = 1000;
    s.e2e.mean = mean_ms * 1e6;
    s.ci.mean = around(mean_ms * 1e6, half_ms * 1e6);
    s.throughput_per_s = static_cast<double>(batch) * 1000 / mean_ms;
    return s;
}

TEST(Verdict, RegressionsAreTheSlowerPairsBeyondTheThreshold) {
    ComparisonSource before{.db = "before.db", .runs = {store::RunRecord{}}, .summaries = {cell(1, 1.00, 0.01), cell(8, 4.0, 0.04)}};
    ComparisonSource after{.db = "after.db", .runs = {store::RunRecord{}}, .summaries = {cell(1, 1.10, 0.01), cell(8, 4.12, 0.04)}};
    before.runs[0].run_id = 1;
    after.runs[0].run_id = 2;
    const auto comparison = build_comparison({before, after}, "");
    // Batch 1: +10% (SLOWER, beyond 5%); batch 8: +3% (SLOWER, within 5%).
    const auto lines = regressions(comparison, 0.05);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(lines[0].starts_with("resnet50 torch fp16 b1 [2] cuda:0 (db 2): SLOWER")) << lines[0];
    EXPECT_NE(lines[0].find("SLOWER +10.0% ("), std::string::npos) << lines[0];
    EXPECT_EQ(regressions(comparison, 0.02).size(), 2u);
    EXPECT_TRUE(regressions(comparison, 0.2).empty());
}

// A generative cell: its end-to-end mean as `cell`, its TTFT and TPOT means with their intervals.
analysis::BenchmarkSummary generative_cell(double ttft_ms, double tpot_ms, std::int64_t output_tokens = 128) {
    analysis::BenchmarkSummary s = cell(1, 100.0, 0.5);
    s.benchmark.model = "llama-3.2-1b";
    s.benchmark.input_tokens = 128;
    s.benchmark.output_tokens = output_tokens;
    analysis::GenerationMetrics g;
    g.ttft.ns.mean = ttft_ms * 1e6;
    g.ttft.mean_ci = around(ttft_ms * 1e6, ttft_ms * 1e4);  // +-1%
    if (output_tokens > 1) {
        g.tpot.emplace();
        g.tpot->ns.mean = tpot_ms * 1e6;
        g.tpot->mean_ci = around(tpot_ms * 1e6, tpot_ms * 1e4);
    }
    s.generation = g;
    return s;
}

TEST(Verdict, GenerativeCellsAreJudgedOnTtftAndTpot) {
    ComparisonSource before{.db = "before.db", .runs = {store::RunRecord{}}, .summaries = {generative_cell(20.0, 5.0)}};
    ComparisonSource after{.db = "after.db", .runs = {store::RunRecord{}}, .summaries = {generative_cell(20.1, 5.5)}};
    before.runs[0].run_id = 1;
    after.runs[0].run_id = 2;
    const auto comparison = build_comparison({before, after}, "");
    ASSERT_EQ(comparison.rows.size(), 1u);
    EXPECT_EQ(std::get<2>(comparison.rows[0].key), "input_tokens=128 output_tokens=128");
    const auto ttft = generation_verdict(comparison, comparison.rows[0], 1, GenerationFigure::ttft);
    const auto tpot = generation_verdict(comparison, comparison.rows[0], 1, GenerationFigure::tpot);
    ASSERT_TRUE(ttft && tpot);
    EXPECT_EQ(ttft->verdict, Verdict::same);  // +0.5%, interval within 2%
    EXPECT_EQ(tpot->verdict, Verdict::slower);  // +10%
    EXPECT_FALSE(generation_verdict(comparison, comparison.rows[0], 0, GenerationFigure::tpot));  // the baseline
    const auto lines = regressions(comparison, 0.05);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("[2] cuda:0 (db 2): TPOT SLOWER +10.0% ("), std::string::npos) << lines[0];
    const auto text = render_comparison(comparison, Format::text);
    EXPECT_NE(text.find("TTFT, TPOT: a generative cell's mean time to first token"), std::string::npos) << text;
}

TEST(Verdict, OtherLengthsAreOtherRowsAndOneTokenHasNoTpotVerdict) {
    ComparisonSource before{.db = "before.db", .runs = {store::RunRecord{}}, .summaries = {generative_cell(20.0, 5.0, 1), generative_cell(20.0, 5.0)}};
    ComparisonSource after{.db = "after.db", .runs = {store::RunRecord{}}, .summaries = {generative_cell(30.0, 5.0, 1), generative_cell(20.0, 5.0)}};
    before.runs[0].run_id = 1;
    after.runs[0].run_id = 2;
    const auto comparison = build_comparison({before, after}, "");
    ASSERT_EQ(comparison.rows.size(), 2u);
    const auto& long_output = comparison.rows[1];  // sorted: "output_tokens=1" before "output_tokens=128"
    EXPECT_EQ(std::get<2>(comparison.rows[0].key), "input_tokens=128 output_tokens=1");
    EXPECT_FALSE(generation_verdict(comparison, comparison.rows[0], 1, GenerationFigure::tpot));
    EXPECT_EQ(generation_verdict(comparison, comparison.rows[0], 1, GenerationFigure::ttft)->verdict, Verdict::slower);
    EXPECT_EQ(generation_verdict(comparison, long_output, 1, GenerationFigure::tpot)->verdict, Verdict::same);
}

}  // namespace
}  // namespace inferbench::report
