// `inferbench compare` as a library: matching, labels, baselines, and every printer's exact output
// (golden files; regenerate on purpose with INFERBENCH_UPDATE_GOLDEN=1).
#include "report/comparison.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "report/html_fixture.hpp"

namespace inferbench::report {
namespace {

analysis::BenchmarkSummary summary(const std::string& device, const std::string& model, const std::string& precision,
                                   std::int64_t batch, double mean_ms, std::optional<double> watts) {
    analysis::BenchmarkSummary s;
    s.benchmark = testing::fixture_record(1, model, "torch", device, precision, batch);
    s.e2e.count = 500;
    s.e2e.mean = mean_ms * 1e6;
    s.throughput_per_s = static_cast<double>(batch) * 1000.0 / mean_ms;
    if (watts) {
        s.telemetry.mean_power_w = *watts;
        s.telemetry.inferences_per_joule = s.throughput_per_s / *watts;
        s.telemetry.joules_per_inference = *watts / s.throughput_per_s;
    }
    return s;
}

ComparisonSource source(const std::string& db, std::int64_t run_id, const std::string& host, const std::string& gpu) {
    ComparisonSource s{.db = db, .runs = {store::RunRecord{}}, .summaries = {}};
    auto& run = s.runs.front();
    run.run_id = run_id;
    run.host = host;
    run.environment_json =
        nlohmann::json{
            {"host", host}, {"cpu_model", "AMD EPYC 9654"}, {"gpus", {{"devices", {{{"index", 0}, {"name", gpu}}}}}}}
            .dump();
    return s;
}

// An H100 and an H200 host, the same models; the H200 host also ran one on its CPU and one model the
// H100 host did not; the H100 host has a failed benchmark, which is left out.
std::vector<ComparisonSource> two_hosts() {
    auto h100 = source("h100.db", 3, "node-a", "NVIDIA H100 80GB HBM3");
    h100.summaries = {summary("cuda:0", "resnet50", "fp16", 1, 1.20, 250),
                      summary("cuda:0", "resnet50", "fp16", 32, 5.10, 600),
                      summary("cuda:0", "bert", "fp16", 8, 12.0, 650)};
    auto failed = summary("cuda:0", "bert", "fp32", 8, 30.0, 700);
    failed.benchmark.status = BenchmarkStatus::failed;
    h100.summaries.push_back(failed);
    auto h200 = source("h200.db", 7, "node-b", "NVIDIA H200");
    h200.summaries = {
        summary("cuda:0", "resnet50", "fp16", 1, 1.08, 240), summary("cuda:0", "resnet50", "fp16", 32, 3.92, 610),
        summary("cuda:0", "bert", "fp16", 8, 9.5, 640), summary("cuda:0", "yolov5s", "fp16", 1, 2.0, std::nullopt),
        summary("cpu", "resnet50", "fp16", 1, 38.7, std::nullopt)};
    return {h100, h200};
}

std::string golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(INFERBENCH_GOLDEN_DIR) + "/" + name;
    if (std::getenv("INFERBENCH_UPDATE_GOLDEN")) std::ofstream(path) << actual;
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Comparison, SidesAreDevicesOfDatabasesWithTheirNames) {
    const auto comparison = build_comparison(two_hosts(), "");
    ASSERT_EQ(comparison.sides.size(), 3u);
    EXPECT_EQ(comparison.sides[0].label, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(comparison.sides[1].label, "NVIDIA H200");
    EXPECT_EQ(comparison.sides[2].label, "AMD EPYC 9654 @ node-b");
    EXPECT_EQ(comparison.baseline, 0u);
    ASSERT_EQ(comparison.rows.size(), 4u);  // bert fp16 b8, resnet50 b1, resnet50 b32, yolov5s b1
    EXPECT_EQ(std::get<0>(comparison.rows[0].key), "bert");
    EXPECT_EQ(comparison.at(comparison.rows[3], 0), nullptr);
    EXPECT_EQ(comparison.at(comparison.rows[3], 1)->e2e.mean, 2e6);
}

TEST(Comparison, AlikeDevicesAreToldApart) {
    auto sources = two_hosts();
    sources[1].runs[0].environment_json = sources[0].runs[0].environment_json;  // two H100 hosts
    sources[1].runs[0].host = "node-b";
    EXPECT_EQ(build_comparison(sources, "").sides[1].label, "NVIDIA H100 80GB HBM3 @ node-b");
    sources[1].runs[0].host = "node-a";  // the same host measured twice
    const auto same = build_comparison(sources, "");
    EXPECT_EQ(same.sides[0].label, "NVIDIA H100 80GB HBM3 @ node-a (db 1)");
    EXPECT_EQ(same.sides[1].label, "NVIDIA H100 80GB HBM3 @ node-a (db 2)");
}

TEST(Comparison, TwoRunsOfOneDatabaseAreToldApartByRun) {
    auto sources = two_hosts();
    sources[1] = sources[0];  // the same host and database, measured again as run 4
    sources[1].runs[0].run_id = 4;
    const auto runs = build_comparison(sources, "");
    ASSERT_EQ(runs.sides.size(), 2u);
    EXPECT_EQ(runs.sides[0].label, "NVIDIA H100 80GB HBM3 @ node-a (run 3)");
    EXPECT_EQ(runs.sides[1].label, "NVIDIA H100 80GB HBM3 @ node-a (run 4)");
    EXPECT_EQ(comparison_legend(runs)[1], "[2] NVIDIA H100 80GB HBM3 @ node-a (run 4) (cuda:0): h100.db run 4 on node-a, "
                                          "driver not recorded, torch (version not recorded)");
}

TEST(Comparison, ImportedLogsNameTheirGpu) {
    store::RunRecord run;
    run.environment_json = R"({"source":"trtexec logs, measured elsewhere"})";
    auto s = summary("cuda:0", "resnet50", "int8", 1, 1.0, std::nullopt);
    s.benchmark.settings_json = R"({"gpu_name":"NVIDIA L4"})";
    EXPECT_EQ(device_label(run, s), "NVIDIA L4");
    s.benchmark.settings_json = R"({"gpu_names":["", "NVIDIA A10G"]})";
    EXPECT_EQ(device_label(run, s), "NVIDIA A10G");
    s.benchmark.settings_json = "{}";
    run.host = "box";
    EXPECT_EQ(device_label(run, s), "cuda:0 @ box");
}

TEST(Comparison, Baselines) {
    EXPECT_EQ(build_comparison(two_hosts(), "2").baseline, 1u);
    EXPECT_EQ(build_comparison(two_hosts(), "h200").baseline, 1u);
    EXPECT_EQ(build_comparison(two_hosts(), "CPU").baseline, 2u);  // the device name
    EXPECT_EQ(build_comparison(two_hosts(), "nvidia h100 80gb hbm3").baseline, 0u);
    const auto message = [](const std::string& baseline) {
        try {
            build_comparison(two_hosts(), baseline);
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("3"), "--baseline 3: there are 2 compared databases or runs; give 1 to 2, or a device");
    EXPECT_EQ(message("nvidia"),
              "--baseline nvidia: matches more than one side; give a database index (1, 2, ...) "
              "or one of: [1] NVIDIA H100 80GB HBM3 (cuda:0), [2] NVIDIA H200 (cuda:0), "
              "[3] AMD EPYC 9654 @ node-b (cpu)");
    EXPECT_NE(message("mi300").find("matches no side"), std::string::npos);
}

TEST(Comparison, NothingMeasuredIsAnError) {
    auto sources = two_hosts();
    for (auto& s : sources)
        for (auto& b : s.summaries) b.benchmark.status = BenchmarkStatus::skipped;
    EXPECT_THROW(build_comparison(sources, ""), UserError);
}

TEST(Comparison, SpeedUpsAndEfficiencyAreRelativeToTheBaseline) {
    const auto comparison = build_comparison(two_hosts(), "");
    const auto table = comparison_table(comparison);
    // resnet50 fp16 b32: H200 3.92 ms vs H100 5.10 ms.
    const auto& row = table.rows[2];
    EXPECT_EQ(std::get<std::string>(row[0]), "resnet50");
    EXPECT_EQ(std::get<std::int64_t>(row[4]), 32);
    EXPECT_DOUBLE_EQ(std::get<double>(row[5 + 2]), 1.0);
    // Ten columns per side: mean, inf/s, x, W, J/inf, inf/J, eff x, verdict, and a generative row's TTFT and TPOT
    // verdicts.
    EXPECT_NEAR(std::get<double>(row[15 + 2]), 5.10 / 3.92, 1e-12);
    EXPECT_NEAR(std::get<double>(row[15 + 4]), 610 * 3.92e-3 / 32, 1e-12);  // J per inference
    EXPECT_NEAR(std::get<double>(row[15 + 6]), (5.10 * 600) / (3.92 * 610), 1e-12);
    EXPECT_TRUE(std::holds_alternative<Null>(row[5 + 7])) << "the baseline has no verdict";
    // No intervals in these summaries: nothing can be claimed.
    EXPECT_EQ(std::get<std::string>(row[15 + 7]), "UNSURE -23.1% (no interval for a side)");
    EXPECT_TRUE(std::holds_alternative<Null>(row[15 + 8])) << "not generative: no TTFT verdict";
}

TEST(Comparison, WarnsWhenTheSidesRanWithDifferentSettingsOrVaryTooMuch) {
    auto sources = two_hosts();
    EXPECT_TRUE(comparison_warnings(build_comparison(sources, "")).empty()) << "alike settings, steady latencies";
    for (auto& s : sources[0].summaries) s.settings.duration_ns = 10'000'000'000;
    for (auto& s : sources[1].summaries) s.settings.duration_ns = 2'000'000'000;
    sources[1].summaries[0].e2e.cv_pct = 14.5;
    const auto comparison = build_comparison(sources, "");
    const auto warnings = comparison_warnings(comparison);
    const auto has = [&](const std::string& line) {
        return std::find(warnings.begin(), warnings.end(), line) != warnings.end();
    };
    EXPECT_TRUE(has("the sides ran with different settings: duration differs: [1] 10s, [2] 2s (2 rows)"))
        << ::testing::PrintToString(warnings);
    EXPECT_TRUE(has("[2] latency varies (CV above 10%): its speed-ups are uncertain (1 row)"))
        << ::testing::PrintToString(warnings);
    EXPECT_NE(render_comparison(comparison, Format::text).find("warning: the sides ran with different settings"),
              std::string::npos);
}

TEST(ComparisonGolden, Text) {
    const auto out = render_comparison(build_comparison(two_hosts(), ""), Format::text);
    EXPECT_EQ(out, golden("compare.txt", out));
}

TEST(ComparisonGolden, Markdown) {
    const auto out = render_comparison(build_comparison(two_hosts(), "2"), Format::markdown);
    EXPECT_EQ(out, golden("compare.md", out));
}

TEST(ComparisonGolden, Csv) {
    const auto out = render_comparison(build_comparison(two_hosts(), ""), Format::csv);
    EXPECT_EQ(out, golden("compare.csv", out));
}

TEST(ComparisonGolden, Json) {
    const auto out = render_comparison(build_comparison(two_hosts(), ""), Format::json);
    EXPECT_EQ(out, golden("compare.json", out));
}

TEST(ComparisonHtml, TableChartsAndEscaping) {
    auto sources = two_hosts();
    sources[0].summaries[0].benchmark.model = testing::kScriptModel;
    const std::string page = render_comparison_html(build_comparison(sources, ""));
    EXPECT_EQ(page.find(testing::kScriptModel), std::string::npos);
    EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(page.find("<table class=\"sortable\" data-table=\"comparison\">"), std::string::npos);
    const auto data = testing::page_data(page);
    // Per model: throughput bars, and inferences per joule where any side has them (not yolov5s).
    EXPECT_EQ(data["charts"].size(), 7u);
    EXPECT_EQ(data["charts"][0]["type"], "bars");
    EXPECT_EQ(data["charts"][0]["series"].size(), 3u);
    EXPECT_EQ(data["charts"][0]["series"][1]["label"], "[2] NVIDIA H200");
}

}  // namespace
}  // namespace inferbench::report
