// The roofline as the HTML report shows it: the interactive chart's roofs (dashed datasheet, solid
// measured, grey L2), its labelled points per precision on log-log axes, the section of the page with
// its table, and the page when no roofline could be computed.
#include <gtest/gtest.h>

#include <sstream>

#include "report/html_report.hpp"
#include "report/roofline_view.hpp"
#include "report/table.hpp"
#include "roofline_fixture.hpp"

namespace inferbench::devices {
namespace {

using analysis::LayerSet;
using analysis::LayerPoint;
using testing_fixture::kH200Environment;
using testing_fixture::RooflineDb;

const report::ChartSeries* series_named(const report::Chart& chart, const std::string& label) {
    for (const auto& s : chart.series)
        if (s.label == label) return &s;
    return nullptr;
}

TEST_F(RooflineDb, ChartHasTheRoofsAndLabelledPointsOnLogLogAxes) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);     // 82 FLOP/B, 8 x 100 inf/s x 8.2 GFLOP = 6.56 TFLOP/s
    benchmark(r, "cuda:0", "bf16", 128, 8.2e9, 1e8);   // the same intensity: a second series
    benchmark(r, "cuda:0", "bf16", 1, 8.2e9, 2e8);     // 41 FLOP/B
    probe("h200-sxm", "gemm_bf16", 800, "TFLOP/s");
    probe("h200-sxm", "dram_copy", 4000, "GB/s");
    probe("h200-sxm", "l2_read", 9000, "GB/s");
    const auto set = placed();
    const report::Chart chart = report::roofline_chart(set, 0);
    EXPECT_TRUE(chart.x_log);
    EXPECT_TRUE(chart.y_log);
    EXPECT_EQ(chart.log_base, 10);
    EXPECT_EQ(chart.y_label, "TFLOP/s (TOPS for int8)");

    const auto* sheet = series_named(chart, "bf16 datasheet 989.5 TFLOP/s, 4.80 TB/s");
    ASSERT_NE(sheet, nullptr);
    EXPECT_TRUE(sheet->dashed);
    EXPECT_EQ(sheet->colour, "#9467bd");
    // From x = 10 (a decade below 41 / 3) up the 4.8 TB/s slope to the ridge (206 FLOP/B), then flat.
    ASSERT_EQ(sheet->x.size(), 3u);
    EXPECT_DOUBLE_EQ(sheet->x[0], 10.0);
    EXPECT_DOUBLE_EQ(sheet->y[0], 48.0);  // 10 FLOP/B x 4.8 TB/s
    EXPECT_NEAR(sheet->x[1], 989.5 / 4.8, 1e-9);
    EXPECT_DOUBLE_EQ(sheet->y[1], 989.5);
    EXPECT_DOUBLE_EQ(sheet->y[2], 989.5);
    const auto* measured = series_named(chart, "bf16 measured 800.0 TFLOP/s, 4.00 TB/s");
    ASSERT_NE(measured, nullptr);
    EXPECT_FALSE(measured->dashed);
    const auto* l2 = series_named(chart, "L2 measured 9.00 TB/s");
    ASSERT_NE(l2, nullptr);
    EXPECT_EQ(l2->colour, "#555555");
    EXPECT_EQ(series_named(chart, "fp16 datasheet 989.5 TFLOP/s, 4.80 TB/s"), nullptr) << "only the points' precisions";

    const auto* points = series_named(chart, "bf16 benchmarks (achieved)");
    ASSERT_NE(points, nullptr);
    EXPECT_EQ(points->type, report::ChartType::points);
    ASSERT_EQ(points->x.size(), 3u);  // ascending intensity: b1 (41), then b8 and b128 (82)
    EXPECT_DOUBLE_EQ(points->x[0], 41.0);
    EXPECT_DOUBLE_EQ(points->x[1], 82.0);
    EXPECT_DOUBLE_EQ(points->y[1], 6.56);
    EXPECT_GT(points->x[2], 82.0) << "x unique per series: the second point at 82 moves a hair right";
    EXPECT_LT(points->x[2], 82.01);
    // b1: 0.82 TFLOP/s of min(800, 41 x 4) = 164 attainable; b8: 6.56 of 328.
    EXPECT_EQ(points->point_labels, (std::vector<std::string>{"b1 0.5%", "b8 2.0%", "b128 32%"}));
}

TEST_F(RooflineDb, ReportSectionDrawsEachDeviceAndListsWhatWasNotPlaced) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    benchmark(r, "cuda:0", "fp16", 8, std::nullopt, std::nullopt);  // no model-cost metrics
    report::RooflineSection section{placed(), ""};
    ASSERT_EQ(section.set.points.size(), 1u);
    ASSERT_EQ(section.set.skipped.size(), 1u);
    const std::string page = report::render_html_report({}, {}, section);
    EXPECT_NE(page.find("<section id=\"roofline\">"), std::string::npos);
    EXPECT_NE(page.find("NVIDIA H200 SXM 141GB (PCI device id 0x2335)"), std::string::npos) << page.substr(0, 3000);
    EXPECT_NE(page.find("\"y_log\":true"), std::string::npos);
    EXPECT_NE(page.find("\"point_labels\":[\"b8 "), std::string::npos);
    EXPECT_NE(page.find("attainable (sheet)"), std::string::npos) << "the placement table";
    EXPECT_NE(page.find("Roofs of each device"), std::string::npos);
    EXPECT_NE(page.find("Not placed:"), std::string::npos);
}

// One benchmark's layers: a series per op type (most time first), repeated intensities kept in one series,
// the slowest named, layers without a cost left out and counted in the title; the section shows them.
TEST_F(RooflineDb, LayerChartAndSectionOfABenchmarkWithLayerTimes) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    const auto set = placed();
    const auto layer = [](std::string node, std::string op, std::int64_t ns, bool costed, double intensity) {
        LayerPoint p;
        p.layer = {std::move(node), std::move(op), "LibTorch CUDA", 10, ns * 10};
        p.mean_ns = static_cast<double>(ns);
        p.costed = costed;
        p.flops = 2e9;
        p.bytes = 2e9 / intensity;
        p.intensity = intensity;
        p.achieved_per_s = 2e9 / (static_cast<double>(ns) * 1e-9);
        return p;
    };
    LayerSet layers;
    layers.point = 0;
    layers.layers = {layer("conv1", "Conv", 100'000, true, 50), layer("bn1", "BatchNormalization", 20'000, true, 0.5),
                     layer("conv2", "Conv", 50'000, true, 50), layer("fused", "FusedConv", 30'000, false, 1)};
    layers.total_ns = 2'000'000;
    for (auto& l : layers.layers) l.share_pct = static_cast<double>(l.layer.total_ns) / 2'000'000.0 * 100;
    const report::Chart chart = report::roofline_layers_chart(set, layers, 2);
    EXPECT_NE(chart.title.find("3 of 4 layers drawn, 85% of the profiled time"), std::string::npos) << chart.title;
    const auto* conv = series_named(chart, "Conv (75% of the time)");
    ASSERT_NE(conv, nullptr);
    ASSERT_EQ(conv->x.size(), 2u);
    EXPECT_DOUBLE_EQ(conv->x[0], 50.0);
    EXPECT_GT(conv->x[1], 50.0);
    EXPECT_EQ(conv->point_labels, (std::vector<std::string>{"conv1 50.0%", "conv2 25.0%"}));
    const auto* bn = series_named(chart, "BatchNormalization (10% of the time)");
    ASSERT_NE(bn, nullptr);
    EXPECT_EQ(bn->point_labels, (std::vector<std::string>{""})) << "only the 2 slowest are named";
    EXPECT_EQ(series_named(chart, "FusedConv (15% of the time)"), nullptr) << "no cost: not drawn";

    report::RooflineSection section{set, "", {layers}};
    const std::string page = report::render_html_report({}, {}, section);
    EXPECT_NE(page.find("Layers of benchmark 1, net b8 bf16 (torch on cuda:0)"), std::string::npos);
    EXPECT_NE(page.find("<td>conv1</td>"), std::string::npos) << "the table of the slowest layers";
}

TEST_F(RooflineDb, RoofsTableFitsANarrowTerminal) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    probe("h200-sxm", "gemm_bf16", 800, "TFLOP/s");
    probe("h200-sxm", "dram_copy", 4000, "GB/s");
    const auto set = placed();
    const std::string text = report::render(report::roofline_roofs_table(set), report::Format::text, {{}, 60, true});
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(report::display_width(line), 60U) << line;
}

TEST(RooflineNotes, AnEstimatedRoofAsksForProbeOnlyWhereNoMeasuredRoofIsDrawnBesideIt) {
    DeviceRoofs roofs;
    roofs.key = "cpu:Test CPU";
    roofs.name = "Test CPU";
    roofs.compute = {{Precision::fp32, 1e12, RoofOrigin::estimated, "vector FMA units"}};
    const auto notes = [&] { return report::estimated_roof_notes(roofs, {&roofs.compute.front()}).at(0); };
    EXPECT_NE(notes().find("`inferbench probe` measures the roofs"), std::string::npos) << notes();
    roofs.compute.push_back({Precision::fp32, 0.8e12, RoofOrigin::measured, "probe fma_fp32"});
    EXPECT_EQ(notes().find("inferbench probe"), std::string::npos) << notes();
    EXPECT_NE(notes().find("the measured roof is drawn beside it"), std::string::npos) << notes();
}

TEST(RooflineSection, AbsentWithoutBenchmarksAndSaysWhyWhenItCouldNotBeComputed) {
    EXPECT_EQ(report::render_html_report({}, {}, {}).find("id=\"roofline\""), std::string::npos);
    const std::string page = report::render_html_report({}, {}, {{}, "devices.yaml:3:1: bad value"});
    EXPECT_NE(page.find("id=\"roofline\""), std::string::npos);
    EXPECT_NE(page.find("Not drawn: devices.yaml:3:1: bad value"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::devices
