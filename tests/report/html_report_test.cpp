// The HTML report from a stored run: what the page holds, and that no stored text can become markup.
// (html_report_browser_test.cpp opens it in Chromium.)
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/scratch_dir.hpp"
#include "report/html_fixture.hpp"
#include "report/report_charts.hpp"
#include "report/report_fixture.hpp"
#include "report/selection.hpp"

namespace inferbench::report {
namespace {

using namespace testing;

class HtmlReport : public ::testing::Test {
protected:
    void SetUp() override {
        write_html_fixture(dir.path() / "r.db");
        results.emplace(store::ResultsStore::open(dir.path() / "r.db"));
        write_html_report(*results, results->benchmarks(), dir.path() / "out" / "report.html");
        page = read_text(dir.path() / "out" / "report.html");
        data = page_data(page);
    }

    // The charts whose <figcaption> is `title`, in page order, as their data.
    std::vector<nlohmann::json> charts_titled(const std::string& title) const {
        std::vector<nlohmann::json> out;
        const std::string marker = "<figcaption>" + html_escape(title) + "</figcaption>";
        for (auto at = page.find(marker); at != std::string::npos; at = page.find(marker, at + 1)) {
            const auto index_at = page.rfind("data-chart=\"", at) + 12;
            out.push_back(data["charts"][std::stoul(page.substr(index_at, page.find('"', index_at) - index_at))]);
        }
        return out;
    }

    inferbench::testing::ScratchDir dir;
    std::optional<store::ResultsStore> results;
    std::string page;
    nlohmann::json data;
};

TEST_F(HtmlReport, StoredTextNeverBecomesMarkup) {
    EXPECT_EQ(page.find(kScriptModel), std::string::npos);
    EXPECT_EQ(page.find("<img"), std::string::npos);
    EXPECT_EQ(page.find("<b>"), std::string::npos);
    EXPECT_EQ(occurrences(page, "<script"), 3u);  // data, uPlot, the page's own
    EXPECT_NE(page.find("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"), std::string::npos);
    EXPECT_NE(page.find("<td>&quot;quotes&#39; &amp; ampersands</td>"), std::string::npos);
    EXPECT_NE(page.find("worker crashed: &lt;b&gt;boom&lt;/b&gt; &amp; &quot;more&quot;"), std::string::npos);
    EXPECT_NE(page.find("<title>inferbench report: run 1 html &lt;b&gt;test&lt;/b&gt; &amp; run</title>"),
              std::string::npos);
    // The data block carries the names as JSON strings with < > & escaped.
    const auto begin = page.find("id=\"data\">");
    const std::string block = page.substr(begin, page.find("</script>", begin) - begin);
    EXPECT_EQ(block.find('<'), std::string::npos);
    EXPECT_EQ(block.find('&'), std::string::npos);
}

TEST_F(HtmlReport, HasRunEnvironmentOverviewAndWarnings) {
    EXPECT_NE(page.find("<dt>git commit</dt><dd>abc123def456</dd>"), std::string::npos);
    EXPECT_NE(page.find("<dt>host</dt><dd>gpu01</dd>"), std::string::npos);
    EXPECT_NE(page.find("<dt>gpus.devices[0].name</dt><dd>NVIDIA H200</dd>"), std::string::npos);
    EXPECT_NE(page.find("<dt>cpu_model</dt><dd>AMD EPYC 9654 &lt;96-Core&gt;</dd>"), std::string::npos);
    // Overview: a header and one row per benchmark, sortable.
    const auto table = page.find("<table class=\"sortable\" data-table=\"benchmarks\">");
    ASSERT_NE(table, std::string::npos);
    const std::string overview = page.substr(table, page.find("</table>", table) - table);
    EXPECT_EQ(occurrences(overview, "<tr>"), 7u);
    for (const char* heading :
         {">model<", ">mean<", ">p50<", ">p99<", ">inf/s<", ">power W<", ">mJ/inf<", ">inf/J<", ">size MB<"})
        EXPECT_NE(overview.find(heading), std::string::npos) << heading;
    // Power and energy where GPU samples were taken: the batch-8 row's mean power is 380 W +- the sine.
    EXPECT_NE(overview.find("<td>failed</td>"), std::string::npos);
    // Warnings: failure reason, unavailable telemetry, clock drops.
    const auto warnings = page.substr(page.find("id=\"warnings\""));
    EXPECT_NE(warnings.find("failed: worker crashed"), std::string::npos);
    EXPECT_NE(warnings.find("telemetry source rapl unavailable: no &lt;powercap&gt; access: 3 benchmarks ("),
              std::string::npos)
        << "a source missing for every benchmark is said once, with the benchmarks";
    const std::string section = warnings.substr(0, warnings.find("</section>"));
    EXPECT_EQ(occurrences(section, "telemetry source rapl unavailable"), 1u);
    EXPECT_NE(warnings.find("SM clock fell to 1500 MHz"), std::string::npos);
}

TEST_F(HtmlReport, OverviewRowsCarryTheirBenchmarkIds) {
    const auto table = page.find("<table class=\"sortable\" data-table=\"benchmarks\">");
    ASSERT_NE(table, std::string::npos);
    const std::string overview = page.substr(table, page.find("</table>", table) - table);
    EXPECT_NE(overview.find("data-key=\"benchmark_ids\" scope=\"col\">id</th>"), std::string::npos) << overview;
    for (const auto& b : results->benchmarks())
        EXPECT_NE(overview.find("<tr><td>" + std::to_string(b.benchmark_id) + "</td>"), std::string::npos)
            << b.benchmark_id;
}

// A CPU run: no power or energy column, and NVML and nvidia-smi, which read GPUs, are no warning for its
// benchmarks; RAPL, missing for every benchmark, is said once.
TEST(HtmlReportCpu, NoEmptyPowerColumnsNorGpuSourcesMissingOnACpu) {
    inferbench::testing::ScratchDir dir;
    auto results = store::ResultsStore::open(dir.path() / "cpu.db");
    store::RunRecord run;
    run.name = "cpu";
    run.started_unix_ms = 1'700'000'000'000;
    const auto run_id = results.begin_run(run);
    const std::vector<TelemetrySource> sources = {{"nvml", "unavailable", "libnvidia-ml.so.1: cannot open"},
                                                  {"nvidia-smi", "unavailable", "nvidia-smi not found on PATH"},
                                                  {"procfs", "ok", ""},
                                                  {"rapl", "unavailable", "no powercap access"}};
    for (const std::int64_t batch : {1, 2}) {
        auto record = fixture_record(run_id, "mobilenet", "onnxruntime", "cpu", "fp32", batch);
        record.ordinal = batch;
        results.add_benchmark(record, store::BenchmarkData{.iterations = fixture_iterations(200, 2'000'000, false),
                                                           .cpu_samples = fixture_cpu_samples(10),
                                                           .telemetry_sources = sources});
    }
    results.end_run(run_id, 1'700'000'100'000, RunStatus::completed);
    write_html_report(results, results.benchmarks(), dir.path() / "out" / "report.html");
    const std::string page = read_text(dir.path() / "out" / "report.html");
    const auto table = page.find("data-table=\"benchmarks\"");
    const std::string overview = page.substr(table, page.find("</table>", table) - table);
    for (const char* heading : {">power W<", ">mJ/inf<", ">inf/J<", ">flagged %<"})
        EXPECT_EQ(overview.find(heading), std::string::npos) << heading;
    EXPECT_NE(overview.find(">mean<"), std::string::npos);
    const auto warnings = page.substr(page.find("id=\"warnings\""));
    const std::string section = warnings.substr(0, warnings.find("</section>"));
    EXPECT_EQ(section.find("nvml"), std::string::npos) << section;
    EXPECT_EQ(section.find("nvidia-smi"), std::string::npos) << section;
    EXPECT_NE(section.find("telemetry source rapl unavailable: no powercap access: every benchmark (2)"),
              std::string::npos)
        << section;
}

TEST_F(HtmlReport, DrawsEveryTimeSeriesAndTheSweep) {
    const auto figures = occurrences(page, "<figure class=\"chart\"");
    ASSERT_EQ(figures, data["charts"].size());
    // GPU group: latency and compute time per iteration, power, clock, temperature, utilisation,
    // memory, CPU, RSS and three sweep charts; CPU group: latency and compute time per iteration, CPU,
    // RSS, latency and throughput sweeps (no energy without GPU samples); the failed one: none; and the
    // H200's roofline, where the GPU benchmarks (with the model's cost) are placed.
    EXPECT_EQ(figures, 12u + 6u + 1u);
    const auto roofline = charts_titled("Roofline: NVIDIA H200 SXM 141GB (datasheet or estimated roofs dashed, measured solid)");
    ASSERT_EQ(roofline.size(), 1u);
    EXPECT_TRUE(roofline[0]["y_log"].get<bool>());
    EXPECT_NE(page.find("<section id=\"roofline\">"), std::string::npos);
    const auto latency = charts_titled("End-to-end latency per iteration");
    ASSERT_EQ(latency.size(), 2u);
    const auto& series = latency[0]["series"];
    ASSERT_EQ(series.size(), 3u);  // batch 1, 8, 32
    EXPECT_EQ(series[1]["label"], "batch 8");
    EXPECT_LE(series[1]["x"].size(), kMaxChartPoints);
    EXPECT_GE(series[1]["x"].size(), kMaxChartPoints - 2);
    double peak = 0;
    for (const auto& y : series[1]["y"]) peak = std::max(peak, y.get<double>());
    EXPECT_EQ(peak, static_cast<double>(kSpikeNs) / 1e6);  // the spike survived the bucketing, in ms
    EXPECT_EQ(latency[0]["y_label"], "latency (ms)");
    EXPECT_EQ(series[0]["x"].size(), 400u);  // short series stay whole

    const auto power = charts_titled("GPU power");
    ASSERT_EQ(power.size(), 1u);
    EXPECT_EQ(power[0]["series"].size(), 3u);
    EXPECT_EQ(power[0]["x_label"], "time since the first measured iteration (s)");
    EXPECT_DOUBLE_EQ(power[0]["series"][0]["x"][0].get<double>(), -0.2);  // warm-up before time zero

    const auto sweep = charts_titled("Throughput vs batch size");
    ASSERT_EQ(sweep.size(), 2u);
    EXPECT_TRUE(sweep[0]["x_log"].get<bool>());  // 1..32
    EXPECT_EQ(sweep[0]["series"][0]["x"], nlohmann::json::parse("[1.0, 8.0, 32.0]"));
    EXPECT_EQ(charts_titled("Energy efficiency vs batch size").size(), 1u);  // only the GPU group has energy
    EXPECT_EQ(charts_titled("SM clock").size(), 1u);
    EXPECT_EQ(charts_titled("Resident memory of the benchmark process").size(), 2u);
}

TEST(ReportSelection, SummariesCarryTelemetryAndGroupsSeeTheirRowsOnce) {
    inferbench::testing::ScratchDir dir;
    write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db");
    std::vector<std::size_t> iterations_seen;
    const auto selection = load_selection(results, results.benchmarks(), [&](const ReportGroup& group) {
        for (const auto& b : group.benchmarks) iterations_seen.push_back(b.iterations.size());
        EXPECT_TRUE(group.clock_from_zero);
    });
    const auto summaries = selection.summaries();
    ASSERT_EQ(summaries.size(), 6u);
    ASSERT_EQ(selection.runs.size(), 1u);
    EXPECT_EQ(selection.source, (dir.path() / "r.db").string());
    const auto& b8 = summaries[1];  // in the order selected, not the groups' order
    EXPECT_EQ(b8.benchmark.batch_size, 8);
    EXPECT_EQ(b8.e2e.count, kLongIterations);
    EXPECT_EQ(b8.run.host, "gpu01") << "the run context is set";
    EXPECT_EQ(b8.run.device_name, "NVIDIA H200");
    ASSERT_TRUE(b8.telemetry.mean_power_w.has_value());
    EXPECT_NEAR(*b8.telemetry.mean_power_w, 380, 25);
    EXPECT_TRUE(b8.telemetry.inferences_per_joule.has_value());
    EXPECT_EQ(summaries[5].benchmark.status, BenchmarkStatus::failed);
    EXPECT_EQ(iterations_seen.size(), 6u);
    EXPECT_NE(std::find(iterations_seen.begin(), iterations_seen.end(), static_cast<std::size_t>(kLongIterations)),
              iterations_seen.end());
    for (const auto& group : selection.groups)
        for (const auto& b : group.benchmarks) {
            EXPECT_TRUE(b.iterations.empty()) << "rows are released once the group was seen";
            EXPECT_TRUE(b.gpu.empty());
        }
}

TEST(ReportSelection, ASummaryIsTheOneSummarizeRunGives) {
    inferbench::testing::ScratchDir dir;
    const auto run_id = write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto loaded = load_selection(results, results.benchmarks()).summaries();
    const auto expected = analysis::summarize_run(results, run_id);
    ASSERT_EQ(loaded.size(), expected.size());
    for (std::size_t i = 0; i < loaded.size(); ++i) {
        EXPECT_EQ(loaded[i].benchmark.benchmark_id, expected[i].benchmark.benchmark_id);
        EXPECT_EQ(loaded[i].e2e.p99, expected[i].e2e.p99);
        EXPECT_EQ(loaded[i].throughput_per_s, expected[i].throughput_per_s);
        EXPECT_EQ(loaded[i].telemetry.mean_power_w, expected[i].telemetry.mean_power_w);
        EXPECT_EQ(loaded[i].warnings, expected[i].warnings);
    }
}

TEST(GroupCharts, FromALoadedGroup) {
    const auto charts = group_charts(sample_group());
    std::vector<std::string> titles;
    for (const auto& chart : charts) titles.push_back(chart.title);
    const std::vector<std::string> expected = {"End-to-end latency per iteration",
                                               "Device compute time per iteration",
                                               "GPU power",
                                               "SM clock",
                                               "GPU temperature",
                                               "GPU utilisation",
                                               "GPU memory used (framebuffer)",
                                               "CPU use of the benchmark process",
                                               "Resident memory of the benchmark process",
                                               "Latency vs batch size",
                                               "Throughput vs batch size",
                                               "Energy efficiency vs batch size"};
    EXPECT_EQ(titles, expected);
    // Compute time was measured on every other iteration: gaps (NaN), not zeros.
    const auto& compute = charts[1].series[0];
    EXPECT_EQ(compute.y[0], 1.0);
    EXPECT_TRUE(std::isnan(compute.y[1]));
    // Only batch 8 sampled the GPU: one series, and it starts in the warm-up.
    ASSERT_EQ(charts[2].series.size(), 1u);
    EXPECT_EQ(charts[2].series[0].label, "batch 8");
    EXPECT_DOUBLE_EQ(charts[2].series[0].x[0], -0.5);
    EXPECT_EQ(charts[9].series[0].label, "p50");
    EXPECT_EQ(charts[9].series[0].x, (std::vector<double>{1, 8}));
    EXPECT_EQ(charts[9].series[0].y, (std::vector<double>{1.5, 12}));  // ms
    EXPECT_TRUE(charts[9].x_log);
}

// Metrics read at different rates: a sample without the metric adds no point (no gap, no zero).
TEST(GroupCharts, SamplesWithoutTheMetricAreLeftOut) {
    auto group = sample_group();
    auto& samples = group.benchmarks[1].gpu;
    ASSERT_GE(samples.size(), 3u);
    samples[1].gpu_util_pct.reset();
    const auto charts = group_charts(group);
    const auto util = std::find_if(charts.begin(), charts.end(), [](const Chart& c) { return c.title == "GPU utilisation"; });
    ASSERT_NE(util, charts.end());
    const auto& series = util->series.at(0);
    EXPECT_EQ(series.x.size(), samples.size() - 1);
    for (const double y : series.y) EXPECT_EQ(y, 97.0);
}

TEST(GroupCharts, TracesOfImportedLogs) {
    auto group = sample_group();
    group.benchmarks[1].series.push_back({"gpu_latency_ms", {1.0, 1.1, 0.9}});
    const auto charts = group_charts(group);
    const auto trace = std::find_if(charts.begin(), charts.end(),
                                    [](const Chart& c) { return c.title == "gpu_latency_ms (stored trace)"; });
    ASSERT_NE(trace, charts.end());
    ASSERT_EQ(trace->series.size(), 1u);
    EXPECT_EQ(trace->series[0].label, "batch 8");
    EXPECT_EQ(trace->series[0].y, (std::vector<double>{1.0, 1.1, 0.9}));
}

}  // namespace
}  // namespace inferbench::report
