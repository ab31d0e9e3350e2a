// The gnuplot facility: quoting, datablocks, and real drawings (PNG signature, SVG root) where gnuplot exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <vector>

#include "common/scratch_dir.hpp"
#include "common/small_tmpfs.hpp"
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
    OutputFile out(scratch_.path() / "plot.png");
    run_gnuplot(line_plot(ImageFormat::png, out.staging_path()), out);
    const std::string png = read_all(scratch_.path() / "plot.png");
    ASSERT_GT(png.size(), 1000u);
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
}

TEST_F(GnuplotDrawing, WritesAnSvgWithTheTitleEscaped) {
    OutputFile out(scratch_.path() / "plot.svg");
    run_gnuplot(line_plot(ImageFormat::svg, out.staging_path()), out);
    const std::string svg = read_all(scratch_.path() / "plot.svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("it's a &lt;title>"), std::string::npos);
    EXPECT_EQ(svg.find("a <title>"), std::string::npos);
}

TEST_F(GnuplotDrawing, AScriptErrorIsReportedWithGnuplotsMessage) {
    OutputFile out(scratch_.path() / "bad.png");
    try {
        run_gnuplot(gnuplot_terminal(ImageFormat::png, {}, out.staging_path()) + "plot $missing using 1:2\n", out);
        FAIL() << "expected an error";
    } catch (const EnvironmentError& e) {
        EXPECT_THAT(e.what(), ::testing::StartsWith("cannot write " + (scratch_.path() / "bad.png").string() +
                                                    ": gnuplot (exit code 1) wrote nothing"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("no datablock named $missing")) << "gnuplot's own message";
    }
    EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "bad.png"));
}

TEST_F(GnuplotDrawing, ALinkPlantedAtTheFigureIsReplacedNotWrittenThrough) {
    scratch_.write("victim.txt", "precious\n");
    std::filesystem::create_symlink(scratch_.path() / "victim.txt", scratch_.path() / "plot.png");
    OutputFile out(scratch_.path() / "plot.png");
    run_gnuplot(line_plot(ImageFormat::png, out.staging_path()), out);
    EXPECT_EQ(read_all(scratch_.path() / "victim.txt"), "precious\n");
    EXPECT_FALSE(std::filesystem::is_symlink(scratch_.path() / "plot.png"));
    EXPECT_EQ(read_all(scratch_.path() / "plot.png").substr(0, 4), "\x89PNG");
}

// A full disk as gnuplot meets it: the drawing of the second figure stops short, gnuplot exits 0.
TEST_F(GnuplotDrawing, AFullDiskLeavesNoTruncatedFigureAndNamesTheOneThatFailed) {
    testing::SmallTmpfs disk(scratch_.path() / "disk", "24k");
    if (!disk.mounted()) GTEST_SKIP() << disk.reason();
    std::vector<OutputFile> outputs;
    std::string script;
    for (const std::string name : {"small.svg", "big.png"}) {
        outputs.emplace_back(disk.path() / name);
        const auto format = name.ends_with(".png") ? ImageFormat::png : ImageFormat::svg;
        const PlotSize size = format == ImageFormat::png ? PlotSize{3000, 3000, 300} : PlotSize{200, 100, 96};
        script += "reset\n" + gnuplot_terminal(format, size, outputs.back().staging_path()) +
                  gnuplot_datablock({"d", {{0, 1}, {1, 3}, {2, 2}}}) + "plot $d using 1:2 with lines title 'x'\n";
    }
    script += "unset output\n";
    try {
        run_gnuplot(script, outputs);
        FAIL() << "expected the disk to be full";
    } catch (const EnvironmentError& e) {
        const std::string what = e.what();
        EXPECT_THAT(what, ::testing::StartsWith("cannot write " + (disk.path() / "big.png").string() + ": "));
        EXPECT_THAT(what, ::testing::HasSubstr("No space left on device"));
    }
    outputs.clear();
    EXPECT_TRUE(std::filesystem::is_empty(disk.path())) << "neither figure, nor a staging folder";
}

// A gnuplot that stops mid-file (killed, or a writer that ignores its write errors): refused by the
// image's missing end, whatever its exit status said.
TEST_F(GnuplotDrawing, AnImageWithoutItsEndIsRefused) {
    const auto fake = scratch_.path() / "fake-gnuplot";
    scratch_.write("fake-gnuplot",
                   "#!/bin/sh\nsed -n \"s/^set output '\\(.*\\)'$/\\1/p\" | while read -r f; do "
                   "printf '\\211PNG\\r\\n\\032\\nhalf' > \"$f\"; done\n");
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    ::setenv("INFERBENCH_GNUPLOT", fake.c_str(), 1);
    OutputFile out(scratch_.path() / "cut.png");
    std::string error;
    try {
        run_gnuplot(line_plot(ImageFormat::png, out.staging_path()), out);
    } catch (const EnvironmentError& e) {
        error = e.what();
    }
    ::unsetenv("INFERBENCH_GNUPLOT");
    EXPECT_THAT(error, ::testing::StartsWith("cannot write " + (scratch_.path() / "cut.png").string() +
                                             ": gnuplot wrote 12 bytes of an incomplete png image"));
    EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "cut.png"));
}

}  // namespace
}  // namespace inferbench::report
