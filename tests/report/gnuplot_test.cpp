// The gnuplot facility: quoting, datablocks, and real drawings (PNG signature, SVG root) where gnuplot exists.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "report/gnuplot.hpp"

namespace inferbench::report {
namespace {

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Gnuplot, QuotesAnyText) {
    EXPECT_EQ(gnuplot_quote("resnet50"), "'resnet50'");
    EXPECT_EQ(gnuplot_quote("it's\nmine"), "'it''s mine'");
}

TEST(Gnuplot, DataBlocksWriteFullPrecisionAndNaNForMissing) {
    const DataBlock block{"lat", {{0, 1.25}, {0.1, std::numeric_limits<double>::quiet_NaN()}, {1e-9, 3}}};
    EXPECT_EQ(gnuplot_datablock(block), "$lat << EOD\n0 1.25\n0.10000000000000001 NaN\n1.0000000000000001e-09 3\nEOD\n");
}

TEST(Gnuplot, TerminalScalesFontsWithDpi) {
    const std::string svg = gnuplot_terminal(ImageFormat::svg, {800, 600, 192}, "/tmp/a b.svg");
    EXPECT_NE(svg.find("set terminal svg noenhanced size 800,600"), std::string::npos) << svg;
    EXPECT_NE(svg.find("'DejaVu Sans,20'"), std::string::npos) << svg;
    EXPECT_NE(svg.find("set output '/tmp/a b.svg'"), std::string::npos) << svg;
}

class GnuplotDrawing : public ::testing::Test {
protected:
    void SetUp() override {
        if (!gnuplot_available()) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    }
    static std::string line_plot(ImageFormat format, const std::filesystem::path& out) {
        return gnuplot_terminal(format, {640, 400, 96}, out) +
               gnuplot_datablock({"d", {{0, 1}, {1, 3}, {2, 2}}}) + "set title " + gnuplot_quote("it's a <title>") +
               "\nplot $d using 1:2 with lines title 'batch_1'\n";
    }
    testing::ScratchDir scratch_;
};

TEST_F(GnuplotDrawing, WritesAPng) {
    const auto out = scratch_.path() / "plot.png";
    run_gnuplot(line_plot(ImageFormat::png, out), out);
    const std::string png = read_all(out);
    ASSERT_GT(png.size(), 1000u);
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
}

TEST_F(GnuplotDrawing, WritesAnSvgWithTheTitleEscaped) {
    const auto out = scratch_.path() / "plot.svg";
    run_gnuplot(line_plot(ImageFormat::svg, out), out);
    const std::string svg = read_all(out);
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("it's a &lt;title>"), std::string::npos);
    EXPECT_EQ(svg.find("a <title>"), std::string::npos);
}

TEST_F(GnuplotDrawing, AScriptErrorIsReportedWithGnuplotsMessage) {
    const auto out = scratch_.path() / "bad.png";
    try {
        run_gnuplot(gnuplot_terminal(ImageFormat::png, {}, out) + "plot $missing using 1:2\n", out);
        FAIL() << "expected an error";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("gnuplot failed drawing"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace inferbench::report
