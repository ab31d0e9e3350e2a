// The report's figures drawn for real by gnuplot: names, PNG signature and size, SVG root, escaping.
#include "report/plots.hpp"

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

using testing::read_binary;

class Plots : public ::testing::Test {
protected:
    void SetUp() override {
        if (!gnuplot_available()) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
        options_.size = {640, 400, 96};
    }
    std::filesystem::path file(const std::string& name) const { return scratch_.path() / name; }
    inferbench::testing::ScratchDir scratch_;
    PlotOptions options_;
};

TEST_F(Plots, EachMeasuredMetricOverTimeAndAgainstBatchSizeInBothFormats) {
    const auto group = testing::sample_group();
    const auto files = write_group_plots(group, scratch_.path(), options_);
    // Over time: e2e latency, power, SM clock, GPU util, temperature, CPU; against batch: mean, p50, p99,
    // throughput, mean power, J/inference, inferences/J, mean CPU. Each as PNG and SVG.
    EXPECT_EQ(files.written.size(), 2u * (6 + 8));
    EXPECT_TRUE(files.skipped.empty());
    for (const auto& stem : {"e2e-latency-over-time-", "power-over-time-", "mean-latency-vs-batch-",
                             "throughput-vs-batch-", "joules-per-inference-vs-batch-"}) {
        const std::string png = read_binary(file(stem + group.key + ".png"));
        EXPECT_GT(png.size(), 8000u) << stem;
        EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n") << stem;
        const std::string svg = read_binary(file(stem + group.key + ".svg"));
        EXPECT_NE(svg.find("<svg"), std::string::npos) << stem;
        EXPECT_GT(svg.size(), 4000u) << stem;
    }
    EXPECT_FALSE(std::filesystem::exists(file("peak-gpu-memory-vs-batch-" + group.key + ".png")))
        << "a metric nobody measured has no figure";
    const std::string svg = read_binary(file("e2e-latency-over-time-" + group.key + ".svg"));
    EXPECT_NE(svg.find("batch 1"), std::string::npos) << "one line per batch size, named in the key";
    EXPECT_NE(svg.find("batch 8"), std::string::npos);
    EXPECT_NE(svg.find("time since the first measured iteration (s)"), std::string::npos);
}

TEST_F(Plots, OptionsPickFormatsAndSize) {
    options_.formats = {ImageFormat::svg};
    options_.size = {900, 300, 96};
    const auto files = write_group_plots(testing::sample_group(), scratch_.path(), options_);
    for (const auto& f : files.written) EXPECT_EQ(f.extension(), ".svg") << f;
    const std::string svg = read_binary(files.written.front());
    EXPECT_NE(svg.find("viewBox=\"0 0 900 300\""), std::string::npos) << svg.substr(0, 300);
}

TEST_F(Plots, UserTextIsQuotedForGnuplotAndEscapedInSvg) {
    auto group = testing::sample_group();
    group.title = "it's \"<script>alert(1)</script>\"";
    options_.formats = {ImageFormat::svg};
    write_group_plots(group, scratch_.path(), options_);
    const std::string svg = read_binary(file("e2e-latency-over-time-" + group.key + ".svg"));
    EXPECT_NE(svg.find("it's"), std::string::npos) << "the quote reached the figure";
    EXPECT_NE(svg.find("&lt;script>alert(1)&lt;/script>"), std::string::npos);
    EXPECT_EQ(svg.find("<script>alert"), std::string::npos);
}

TEST_F(Plots, LongSeriesAreDrawnAsBucketMeans) {
    auto group = testing::sample_group();
    group.benchmarks.resize(1);
    group.benchmarks[0] = testing::benchmark(1, 1, 3000);
    options_.formats = {ImageFormat::svg};
    options_.max_points_per_line = 100;
    write_group_plots(group, scratch_.path(), options_);
    const std::string svg = read_binary(file("e2e-latency-over-time-" + group.key + ".svg"));
    EXPECT_NE(svg.find("batch 1 (means of 1.200 s)"), std::string::npos) << "120 s over 100 buckets";
}

// A 3% change is not drawn as a V from the top of the frame to its bottom, and an axis that does not
// start at zero says so.
TEST(PlotRange, FitsTheDataWithAMarginAndSaysWhereItStarts) {
    const auto close = fitted_range({1000, 970, 1000});
    EXPECT_NEAR(close.low, 985 - 0.56 * 100, 1e-9);
    EXPECT_NEAR(close.high, 985 + 0.56 * 100, 1e-9);
    EXPECT_LT((1000 - 970) / (close.high - close.low), 0.3) << "the change takes under a third of the height";
    EXPECT_EQ(close.note, "axis from 929, not 0");
    const auto wide = fitted_range({10, 200, 400});
    EXPECT_EQ(wide.low, 0) << "a margin that reaches zero starts at zero";
    EXPECT_GT(wide.high, 400);
    EXPECT_EQ(wide.note, "");
    const auto flat = fitted_range({0, 0});
    EXPECT_LT(flat.low, flat.high);
}

TEST_F(Plots, ThroughputAxesStartAtZero) {
    std::vector<store::BenchmarkRecord> records;
    std::vector<analysis::BenchmarkSummary> summaries;
    for (const std::int64_t batch : {1, 8}) {
        auto b = testing::benchmark(batch, batch, 5);
        b.summary.throughput_per_s = batch == 1 ? 1000 : 1030;
        records.push_back(b.summary.benchmark);
        summaries.push_back(b.summary);
    }
    options_.formats = {ImageFormat::svg};
    const auto files = write_throughput_latency_plots(group_benchmarks(records), summaries, scratch_.path(), options_);
    ASSERT_EQ(files.written.size(), 1u);
    const std::string svg = read_binary(files.written[0]);
    EXPECT_NE(svg.find("throughput (inferences/s)"), std::string::npos);
    EXPECT_EQ(svg.find("not 0"), std::string::npos) << "a 3% change is drawn as 3% of the height from zero";

    // Throughput against batch size too.
    auto group = testing::sample_group();
    for (auto& b : group.benchmarks) b.summary.throughput_per_s = 1000 + static_cast<double>(b.summary.benchmark.batch_size);
    write_group_plots(group, scratch_.path(), options_);
    EXPECT_EQ(read_binary(file("throughput-vs-batch-" + group.key + ".svg")).find("not 0"), std::string::npos);
}

TEST_F(Plots, ThroughputAgainstLatencyHasALinePerBackendAndPrecision) {
    std::vector<store::BenchmarkRecord> records;
    std::vector<analysis::BenchmarkSummary> summaries;
    std::int64_t id = 0;
    for (const char* precision : {"fp16", "int8"}) {
        for (const std::int64_t batch : {1, 8, 32}) {
            auto b = testing::benchmark(++id, batch, 5);
            b.summary.benchmark.precision = precision;
            records.push_back(b.summary.benchmark);
            summaries.push_back(b.summary);
        }
    }
    const auto groups = group_benchmarks(records);
    ASSERT_EQ(groups.size(), 2u);
    options_.formats = {ImageFormat::svg, ImageFormat::png};
    const auto files = write_throughput_latency_plots(groups, summaries, scratch_.path(), options_);
    ASSERT_EQ(files.written.size(), 2u);
    EXPECT_EQ(files.written[0].filename(), "throughput-vs-latency-cuda_0-resnet50.svg");
    const std::string svg = read_binary(files.written[0]);
    EXPECT_NE(svg.find("torch fp16"), std::string::npos);
    EXPECT_NE(svg.find("torch int8"), std::string::npos);
    EXPECT_NE(svg.find("b32"), std::string::npos) << "points are labelled with their batch size";
    EXPECT_GT(std::filesystem::file_size(files.written[1]), 8000u);
}

TEST_F(Plots, AGroupWithoutMeasurementsDrawsNothingAndSaysSo) {
    ReportGroup group;
    group.key = "cpu-m-b-fp32";
    group.benchmarks.push_back({});
    group.benchmarks[0].summary.benchmark.status = BenchmarkStatus::failed;
    const auto files = write_group_plots(group, scratch_.path(), options_);
    EXPECT_TRUE(files.written.empty());
    ASSERT_EQ(files.skipped.size(), 1u);
    EXPECT_EQ(files.skipped[0], "figures of cpu-m-b-fp32: nothing measured");
}

}  // namespace
}  // namespace inferbench::report
