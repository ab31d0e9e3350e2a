// Golden tests: every printer's exact output for one summary. Regenerate a golden file only on
// purpose: INFERBENCH_UPDATE_GOLDEN=1 build/release/tests/report/report_tests
#include "report/summary_table.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace inferbench::report {
namespace {

std::vector<analysis::BenchmarkSummary> sample_summaries() {
    analysis::BenchmarkSummary ok;
    ok.benchmark.model = "resnet50";
    ok.benchmark.backend = "onnxruntime";
    ok.benchmark.device = "cpu";
    ok.benchmark.precision = "fp32";
    ok.benchmark.batch_size = 8;
    ok.benchmark.status = "ok";
    ok.benchmark.load_ns = 312'400'000;
    ok.benchmark.model_size_bytes = 102'530'000;
    ok.model.parameters = 25'557'032;
    ok.model.flops_per_inference = 8.2e9;
    ok.e2e.count = 120;
    ok.e2e.mean = 190'250'000;
    ok.e2e.p50 = 189'000'000;
    ok.e2e.p90 = 195'500'000;
    ok.e2e.p99 = 201'125'000;
    ok.e2e.cv_pct = 2.25;
    ok.throughput_per_s = 42.05;

    analysis::BenchmarkSummary skipped;
    skipped.benchmark.model = "bert, \"large\" | <b>";
    skipped.benchmark.backend = "tensorrt";
    skipped.benchmark.device = "cuda:0";
    skipped.benchmark.precision = "int8";
    skipped.benchmark.batch_size = 1;
    skipped.benchmark.status = "skipped";
    skipped.benchmark.reason = "backend tensorrt is not built";

    analysis::BenchmarkSummary null_run = ok;
    null_run.benchmark.model = "null";
    null_run.benchmark.backend = "null";
    null_run.e2e.mean = 48.4;
    null_run.e2e.p50 = 40;
    null_run.e2e.p90 = 60;
    null_run.e2e.p99 = 812'400;
    null_run.warnings = {"latency is unstable"};
    // GPU telemetry of the first row: no energy counter (integrated power), SW power cap 12.5% of the time.
    ok.telemetry.gpu_samples = 40;
    ok.telemetry.mean_power_w = 312.46;
    ok.telemetry.energy_source = "integrated power";
    ok.telemetry.joules_per_inference = 0.7431;
    ok.telemetry.inferences_per_joule = 1.3457;
    ok.telemetry.mean_sm_clock_mhz = 1912.5;
    ok.telemetry.throttled = {{"sw_power_cap", 0.125}};
    ok.telemetry.max_temperature_c = 67;
    ok.telemetry.peak_fb_used_mib = 20481.5;
    ok.telemetry.mean_process_cpu_pct = 101.25;
    ok.telemetry.peak_rss_mib = 1536.4;
    // Costs that are not totals: nodes the cost model could not cost, sizes that depend on the data.
    analysis::BenchmarkSummary partial = ok;
    partial.benchmark.model = "vit.onnx";
    partial.model.flops_per_inference = 0.48e9;
    partial.model.cost_unknown_nodes = 642;
    partial.model.cost_data_dependent_nodes = 0;
    analysis::BenchmarkSummary detector = ok;
    detector.benchmark.model = "fasterrcnn.onnx";
    detector.model.flops_per_inference = 5.7459e9;
    detector.model.cost_unknown_nodes = 0;
    detector.model.cost_data_dependent_nodes = 277;
    return {ok, skipped, null_run, partial, detector};
}

std::string golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(INFERBENCH_GOLDEN_DIR) + "/" + name;
    if (std::getenv("INFERBENCH_UPDATE_GOLDEN")) std::ofstream(path) << actual;
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(SummaryGolden, Text) {
    const auto text = render(summary_table(sample_summaries()), Format::text);
    EXPECT_EQ(text, golden("summary.txt", text));
}

TEST(SummaryGolden, Markdown) {
    const auto text = render(summary_table(sample_summaries()), Format::markdown);
    EXPECT_EQ(text, golden("summary.md", text));
    EXPECT_NE(text.find("bert, \"large\" \\| <b>"), std::string::npos) << "pipes are escaped";
}

TEST(SummaryGolden, Csv) {
    const auto text = render(summary_table(sample_summaries()), Format::csv);
    EXPECT_EQ(text, golden("summary.csv", text));
    EXPECT_NE(text.find("\"bert, \"\"large\"\" | <b>\""), std::string::npos) << "CSV quoting";
}

TEST(SummaryGolden, Json) {
    const auto text = render(summary_table(sample_summaries()), Format::json);
    EXPECT_EQ(text, golden("summary.json", text));
    EXPECT_NE(text.find("\"schema_version\": 1"), std::string::npos);
    EXPECT_NE(text.find("\"mean_ms\": 190.25"), std::string::npos);
    EXPECT_NE(text.find("\"mean_ms\": null"), std::string::npos) << "a skipped cell has no latency";
}

TEST(Formats, ParseNamesAndRejectOthers) {
    EXPECT_EQ(parse_format("md"), Format::markdown);
    EXPECT_EQ(parse_format("table"), Format::text);
    EXPECT_THROW(parse_format("xml"), UserError);
}

// One figure, one wording: a bound says which and why in text and Markdown, and CSV and JSON keep
// the number with the bound and the counts in their own fields.
TEST(SummaryCostBounds, PartialSumsAreLowerBoundsAndDataDependentOnesUpperBounds) {
    const auto table = summary_table(sample_summaries());
    const auto text = render(table, Format::text);
    EXPECT_NE(text.find(">=0.48 (642 nodes unknown)"), std::string::npos) << text;
    EXPECT_NE(text.find("<=5.75 (277 nodes data-dependent)"), std::string::npos) << text;
    EXPECT_EQ(text.find("cost_unknown_nodes"), std::string::npos);  // machine-only columns stay out of text
    EXPECT_EQ(text.find("unknown nodes"), std::string::npos);
    const auto json = nlohmann::json::parse(render(table, Format::json));
    const auto& partial = json["rows"][3];
    EXPECT_DOUBLE_EQ(partial["gflops_per_inference"].get<double>(), 0.48);
    EXPECT_EQ(partial["gflops_bound"], "lower");
    EXPECT_EQ(partial["cost_unknown_nodes"], 642);
    EXPECT_EQ(json["rows"][4]["gflops_bound"], "upper");
    EXPECT_EQ(json["rows"][4]["cost_data_dependent_nodes"], 277);
    EXPECT_EQ(json["rows"][0]["gflops_bound"], "total");
    EXPECT_TRUE(json["rows"][1]["gflops_bound"].is_null());  // no figure at all
    const auto csv = render(table, Format::csv);
    EXPECT_NE(csv.find(",0.48,"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",lower,642,0\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace inferbench::report
