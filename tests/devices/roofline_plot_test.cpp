// The roofline figure: its gnuplot script (roofs per precision, dashed datasheet and solid measured,
// labelled points, "no roofs" for an unknown device) and real PNG/SVG files where gnuplot exists.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "devices/cpu_peaks.hpp"
#include "report/roofline_plot.hpp"
#include "roofline_fixture.hpp"

namespace inferbench::devices {
namespace {

using testing_fixture::kH200Environment;
using testing_fixture::RooflineDb;

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(RooflineDb, ScriptDrawsTheRoofsOfThePointsPrecisions) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    probe("h200-sxm", "gemm_bf16", 800, "TFLOP/s");
    probe("h200-sxm", "dram_copy", 4200, "GB/s");
    probe("h200-sxm", "l2_read", 9000, "GB/s");
    const auto set = placed();
    const auto script = report::roofline_script(set, 0, report::ImageFormat::svg, {}, scratch_.path() / "r.svg");
    EXPECT_NE(script.find("set logscale xy"), std::string::npos);
    EXPECT_NE(script.find("Roofline: NVIDIA H200 SXM 141GB (datasheet or estimated roofs dashed, measured solid)"),
              std::string::npos);
    EXPECT_NE(script.find("dt 2 lc rgb '#9467bd' title 'bf16 datasheet 989.5 TFLOP/s, 4.80 TB/s'"), std::string::npos)
        << script;
    EXPECT_NE(script.find("dt 1 lc rgb '#9467bd' title 'bf16 measured 800.0 TFLOP/s, 4.20 TB/s'"), std::string::npos)
        << script;
    EXPECT_NE(script.find("'L2 measured 9.00 TB/s'"), std::string::npos);
    EXPECT_EQ(script.find("fp16 datasheet"), std::string::npos);  // only the precisions of the points
    // The point numbered beside it, the number explained below the plot.
    EXPECT_NE(script.find("set label 10 '1' at "), std::string::npos) << script;
    EXPECT_NE(script.find("'1  net b8 bf16: 2% of measured (memory-bound)' at screen"), std::string::npos) << script;
    // x from below the point to past the ridge (989.5 / 4.8 = 206 FLOP/B); y in TFLOP/s.
    EXPECT_NE(script.find("set xrange [10:1000]"), std::string::npos) << script;
    EXPECT_NE(script.find("set ylabel 'TFLOP/s (TOPS for int8)'"), std::string::npos);
}

// Points on one spot share one small label, the legend below lists each; an estimated roof says it
// is one, and what a point above it means.
TEST_F(RooflineDb, CrowdedPointsAreNumberedAndAnEstimatedRoofSaysSo) {
    const auto host = host_cpuinfo();
    if (!estimate_cpu_peaks(host, host_max_freq_khz())) GTEST_SKIP() << "no peak estimate for this CPU";
    const auto r = run(R"({"cpu_model": ")" + host.model_name + R"("})");
    for (const std::int64_t batch : {1, 1, 4}) benchmark(r, "cpu", "fp32", batch, 1e9, 1e8);
    store_->add_probe({0, cpu_device_key(host.model_name), host.model_name, "", 1, "dram_copy", 50, "GB/s", "", "{}"});
    const auto set = placed();
    const auto script = report::roofline_script(set, 0, report::ImageFormat::svg, {}, scratch_.path() / "c.svg");
    // The two batch-1 benchmarks on one spot, batch 4 four times as fast at the same intensity.
    EXPECT_NE(script.find("set label 10 '1,2' at "), std::string::npos) << script;
    EXPECT_NE(script.find("set label 11 '3' at "), std::string::npos) << script;
    for (const char* line : {"'1  net b1 fp32: ", "'2  net b1 fp32: ", "'3  net b4 fp32: "})
        EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
    EXPECT_NE(script.find("fp32 roof is an estimate ("), std::string::npos) << script;
    EXPECT_NE(script.find("a point above it means the estimate is low"), std::string::npos) << script;
    EXPECT_NE(script.find("set bmargin at screen"), std::string::npos);
}

TEST_F(RooflineDb, ScriptSaysWhenADeviceHasNoRoofs) {
    const auto r = run(R"({"gpus": {"source": "nvml", "devices": [{"index": 0, "name": "NVIDIA B200"}]}})");
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    const auto set = placed();
    const auto script = report::roofline_script(set, 0, report::ImageFormat::png, {}, scratch_.path() / "r.png");
    EXPECT_NE(script.find("no roofs for NVIDIA B200: no catalog entry for NVIDIA B200"), std::string::npos) << script;
    EXPECT_NE(script.find(
                  "$points_bf16 using 1:2 with points pt 7 ps 1.4 lc rgb '#9467bd' title 'bf16 benchmarks (achieved)'"),
              std::string::npos)
        << script;
}

TEST_F(RooflineDb, DrawsOnePngAndSvgPerDevice) {
    if (!report::gnuplot_available()) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    benchmark(r, "cuda:0", "int8", 8, 8.2e9, 1e7);
    benchmark(r, "cpu", "fp32", 1, 1e9, 1e8);
    const auto set = placed();
    const std::vector<report::ImageFormat> formats = {report::ImageFormat::png, report::ImageFormat::svg};
    const auto files = report::draw_rooflines(set, scratch_.path() / "plots", formats, {640, 400, 96});
    ASSERT_EQ(files.size(), 4u);
    EXPECT_EQ(files[0].filename(), "roofline-h200-sxm.png");
    EXPECT_EQ(files[1].filename(), "roofline-h200-sxm.svg");
    EXPECT_EQ(files[2].filename(), "roofline-cpu_Test_CPU_9000.png");
    EXPECT_EQ(read_all(files[0]).substr(0, 8), "\x89PNG\r\n\x1a\n");
    const auto svg = read_all(files[1]);
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("net b8 int8"), std::string::npos);
    EXPECT_NE(read_all(files[3]).find("no roofs for Test CPU 9000"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::devices
