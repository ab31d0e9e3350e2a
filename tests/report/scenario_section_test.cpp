// The HTML report's load-scenario section: shown only for benchmarks that ran a scenario other than
// single_stream, with find_peak's steps as a table and a chart.
#include "report/scenario_section.hpp"

#include <gtest/gtest.h>

namespace inferbench::report {
namespace {

analysis::BenchmarkSummary summary_of(Scenario scenario) {
    analysis::BenchmarkSummary s;
    s.benchmark.benchmark_id = 7;
    s.benchmark.model = "resnet50";
    s.benchmark.batch_size = 1;
    s.e2e.count = 1000;
    s.e2e.p99 = 12e6;
    ScenarioSettings settings;
    settings.scenario = scenario;
    settings.latency_bound_ns = 15'000'000;
    s.scenario.settings = settings;
    s.scenario.label = std::string(to_string(scenario));
    return s;
}

TEST(ScenarioSection, NothingWhereEveryBenchmarkRanSingleStream) {
    HtmlPage page("t");
    scenario_section(page, {summary_of(Scenario::single_stream)});
    EXPECT_EQ(page.finish().find("Load scenarios"), std::string::npos);
}

TEST(ScenarioSection, AServerWithItsFindPeakSteps) {
    auto s = summary_of(Scenario::server);
    s.scenario.label = "server find_peak (p99 <= 15.00 ms)";
    s.scenario.verdict.valid = true;
    s.scenario.peak_qps = 812.5;
    s.scenario.peak_steps = {{1250, 900.5, 3700, false}, {625, 3.1, 1900, true}, {937.5, 40.2, 2800, false}};
    HtmlPage page("t");
    scenario_section(page, {s});
    EXPECT_EQ(page.chart_count(), 1u);
    const std::string html = page.finish();
    EXPECT_NE(html.find("Load scenarios"), std::string::npos);
    EXPECT_NE(html.find("<td>server find_peak (p99 &lt;= 15.00 ms)</td>"), std::string::npos);
    EXPECT_NE(html.find("<td>VALID</td>"), std::string::npos);
    EXPECT_NE(html.find("data-table=\"find_peak_steps\""), std::string::npos);
    EXPECT_NE(html.find("find_peak: p99 (LoadGen rank) against the rate tried"), std::string::npos);
}

// A cell's repeats keep their own rows (each has its own verdict), each saying which repeat it is; a cell that
// ran once says nothing of repeats.
TEST(ScenarioSection, ACellsRepeatsSayWhichRepeatEachIs) {
    std::vector<analysis::BenchmarkSummary> rows;
    for (std::int64_t repeat = 0; repeat < 3; ++repeat) {
        auto s = summary_of(Scenario::offline);
        s.benchmark.benchmark_id = 7 + repeat;
        s.benchmark.repeat = repeat;
        rows.push_back(s);
    }
    rows[1].e2e.count = 0;  // a repeat that measured nothing: no row, still one of the cell's repeats
    rows[1].benchmark.benchmark_id = 10;
    auto once = summary_of(Scenario::offline);
    once.benchmark.benchmark_id = 11;
    once.benchmark.ordinal = 1;
    rows.push_back(once);
    HtmlPage page("t");
    scenario_section(page, rows);
    const std::string html = page.finish();
    EXPECT_NE(html.find("#7 resnet50 ·  ·  ·  · b1 · repeat 1/3"), std::string::npos) << html;
    EXPECT_NE(html.find("#9 resnet50 ·  ·  ·  · b1 · repeat 3/3"), std::string::npos);
    EXPECT_EQ(html.find("#10 "), std::string::npos);
    EXPECT_NE(html.find("#11 resnet50 ·  ·  ·  · b1<"), std::string::npos);
}

// A server row shows two p99s that differ near the tail (interpolated 100.3 ms, LoadGen's rank 131.4 ms): each is
// labelled, and the one the INVALID note quotes is the row's "p99 (LoadGen rank)".
TEST(ScenarioSection, TheRowsLoadGenP99IsTheOneItsNoteQuotes) {
    std::vector<std::int64_t> latencies(100, 10'000'000);
    latencies[98] = 100'000'000;
    latencies[99] = 131'430'000;
    auto s = summary_of(Scenario::server);
    s.e2e = summarize(latencies);
    ScenarioSettings settings = *s.scenario.settings;
    settings.latency_bound_ns = 120'000'000;
    s.scenario.settings = settings;
    s.scenario.verdict = judge_scenario(settings, latencies, ScenarioFacts{.scheduled = 100, .issued = 100});
    ASSERT_EQ(s.scenario.notes().size(), 1u);
    EXPECT_EQ(s.scenario.notes()[0], "INVALID: p99 (LoadGen rank) 131.43 ms > bound 120.00 ms");
    EXPECT_NEAR(s.e2e.p99, 100.3143e6, 1e3);  // interpolated between the two slowest: not the verdict's value
    HtmlPage page("t");
    scenario_section(page, {s});
    const std::string html = page.finish();
    EXPECT_NE(html.find("data-key=\"p99_ms\" scope=\"col\">p99 (interp.)</th>"), std::string::npos) << html;
    EXPECT_NE(html.find("data-key=\"loadgen_p99_ms\" scope=\"col\">p99 (LoadGen rank)</th>"), std::string::npos);
    EXPECT_NE(html.find("<td class=\"num\" data-v=\"131430000.0\">131.43 ms</td>"), std::string::npos);
}

TEST(ScenarioSection, APeakThatNoRateMetReadsNoneNotZero) {
    auto s = summary_of(Scenario::server);
    EXPECT_TRUE(std::holds_alternative<Null>(peak_qps_cell(s.scenario)));  // find_peak did not run
    s.scenario.peak_qps = 0;
    EXPECT_EQ(std::get<std::string>(peak_qps_cell(s.scenario)), "none");
    s.scenario.peak_qps = 812.5;
    EXPECT_EQ(std::get<double>(peak_qps_cell(s.scenario)), 812.5);
    s.scenario.peak_qps = 0;
    HtmlPage page("t");
    scenario_section(page, {s});
    EXPECT_NE(page.finish().find("<td>none</td>"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
