// The Excel workbooks read back (unzip + XML): sheet names, rows, values, empty cells, native charts.
#include "report/excel_report.hpp"

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

using testing::count;
using testing::zip_member;
using testing::zip_members;

class ExcelReport : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(find_program("unzip"))
            << "the workbook tests read xlsx files with Debian's unzip (scripts/setup.sh)";
    }
    std::filesystem::path file(const std::string& name) const { return scratch_.path() / name; }
    inferbench::testing::ScratchDir scratch_;
};

TEST_F(ExcelReport, LatencyWorkbookHasASheetPerBatchAndARowPerIteration) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_latency_workbook(group, file("latency.xlsx")));
    const auto workbook = zip_member(file("latency.xlsx"), "xl/workbook.xml");
    EXPECT_NE(workbook.find("<sheet name=\"batch 1\""), std::string::npos) << workbook;
    EXPECT_NE(workbook.find("<sheet name=\"batch 8\""), std::string::npos) << workbook;
    EXPECT_EQ(count(workbook, "<sheet name="), 2u);

    const auto sheet1 = zip_member(file("latency.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_EQ(count(sheet1, "<row "), 11u) << "header + 10 iterations";
    EXPECT_NE(sheet1.find("<t>t_s</t>"), std::string::npos) << "constant memory: inline strings";
    EXPECT_NE(sheet1.find("<t>compute_ms</t>"), std::string::npos);
    // Iteration 0 at time zero with every device time; iteration 1 (row 3) without them: empty cells.
    EXPECT_NE(sheet1.find("<c r=\"A2\"><v>0</v></c><c r=\"B2\"><v>1.5</v></c><c r=\"C2\"><v>0.1</v></c>"
                          "<c r=\"D2\"><v>1</v></c><c r=\"E2\"><v>0.05</v></c>"),
              std::string::npos)
        << sheet1;
    EXPECT_NE(sheet1.find("<c r=\"A3\"><v>0.04</v></c><c r=\"B3\"><v>1.5</v></c></row>"), std::string::npos) << sheet1;
    EXPECT_EQ(sheet1.find("r=\"C3\""), std::string::npos);

    const auto sheet2 = zip_member(file("latency.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(sheet2, "<row "), 7u);
    EXPECT_NE(sheet2.find("<c r=\"B2\"><v>12</v></c>"), std::string::npos) << "batch 8: 8 x 1.5 ms";
}

TEST_F(ExcelReport, AbsoluteClockKeepsMonotonicSeconds) {
    auto group = testing::sample_group();
    set_clock(group, false);
    EXPECT_FALSE(group.clock_from_zero);
    ASSERT_TRUE(write_latency_workbook(group, file("abs.xlsx")));
    const auto sheet1 = zip_member(file("abs.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_NE(sheet1.find("<c r=\"A2\"><v>5</v></c>"), std::string::npos) << "kT0 = 5 s";
    EXPECT_NE(sheet1.find("<c r=\"A3\"><v>5.04</v></c>"), std::string::npos);
}

TEST_F(ExcelReport, ABatchLongerThanASheetContinuesOnTheNext) {
    auto group = testing::sample_group();
    group.benchmarks.resize(1);  // batch 1, 10 iterations
    ExcelOptions options;
    options.max_rows_per_sheet = 5;
    ASSERT_TRUE(write_latency_workbook(group, file("split.xlsx"), options));
    const auto workbook = zip_member(file("split.xlsx"), "xl/workbook.xml");
    EXPECT_NE(workbook.find("<sheet name=\"batch 1\""), std::string::npos);
    EXPECT_NE(workbook.find("<sheet name=\"batch 1 (2)\""), std::string::npos);
    EXPECT_NE(workbook.find("<sheet name=\"batch 1 (3)\""), std::string::npos);
    EXPECT_EQ(count(zip_member(file("split.xlsx"), "xl/worksheets/sheet1.xml"), "<row "), 5u);
    EXPECT_EQ(count(zip_member(file("split.xlsx"), "xl/worksheets/sheet3.xml"), "<row "), 3u);
    EXPECT_NE(zip_member(file("split.xlsx"), "xl/worksheets/sheet3.xml").find("<v>0.36</v>"), std::string::npos)
        << "the last iteration";
}

TEST_F(ExcelReport, GpuWorkbookHasOnlyBatchesWithSamplesAndNamesThrottleReasons) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_gpu_workbook(group, file("gpu.xlsx")));
    const auto workbook = zip_member(file("gpu.xlsx"), "xl/workbook.xml");
    EXPECT_EQ(count(workbook, "<sheet name="), 1u);
    EXPECT_NE(workbook.find("<sheet name=\"batch 8\""), std::string::npos);
    const auto sheet = zip_member(file("gpu.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_EQ(count(sheet, "<row "), 5u);
    EXPECT_NE(sheet.find("<t>throttle_reasons</t>"), std::string::npos);
    EXPECT_NE(sheet.find("<c r=\"A2\"><v>-0.5</v></c>"), std::string::npos) << "warm-up sample before time zero";
    EXPECT_NE(sheet.find("<t>warmup</t>"), std::string::npos);
    EXPECT_NE(sheet.find("<t>SW power cap</t>"), std::string::npos);
    EXPECT_NE(sheet.find("<c r=\"D3\"><v>300</v></c><c r=\"E3\"><v>60</v></c><c r=\"F3\"><v>1980</v></c>"),
              std::string::npos)
        << sheet;
    EXPECT_EQ(sheet.find("r=\"G3\""), std::string::npos) << "memory clock not sampled: empty";
}

TEST_F(ExcelReport, CpuWorkbook) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_cpu_workbook(group, file("cpu.xlsx")));
    EXPECT_EQ(count(zip_member(file("cpu.xlsx"), "xl/workbook.xml"), "<sheet name="), 2u);
    const auto sheet = zip_member(file("cpu.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(sheet, "<row "), 4u);
    EXPECT_NE(sheet.find("<c r=\"A3\"><v>0.1</v></c><c r=\"B3\" t=\"inlineStr\"><is><t>measure</t></is></c>"
                         "<c r=\"C3\"><v>101</v></c><c r=\"D3\"><v>512</v></c><c r=\"E3\"><v>50</v></c></row>"),
              std::string::npos)
        << sheet;
}

TEST_F(ExcelReport, SummaryWorkbookHasMetricsPerBatchAndTimeSeriesWithCharts) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_summary_workbook(group, file("summary.xlsx")));
    const auto workbook = zip_member(file("summary.xlsx"), "xl/workbook.xml");
    for (const char* sheet : {"summary", "e2e latency", "power", "SM clock", "GPU util", "temperature", "CPU"})
        EXPECT_NE(workbook.find(std::string("<sheet name=\"") + sheet + "\""), std::string::npos) << sheet;
    const auto strings = zip_member(file("summary.xlsx"), "xl/sharedStrings.xml");
    EXPECT_NE(strings.find("<t>mean_ms</t>"), std::string::npos);
    EXPECT_NE(strings.find("<t>J_per_inference</t>"), std::string::npos);

    // summary: batch 8's row has its mean latency (12 ms) and mean power (310 W); batch 1 has no power.
    const auto summary = zip_member(file("summary.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_EQ(count(summary, "<row "), 3u);
    EXPECT_NE(summary.find("<c r=\"E3\"><v>12</v></c>"), std::string::npos) << summary;
    EXPECT_NE(summary.find("<c r=\"I3\"><v>310</v></c>"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("r=\"I2\""), std::string::npos);

    // power over time on the 100 ms grid: -0.5 s (warm-up), then the mean of 300 and 310 W, then 320 W.
    const auto power = zip_member(file("summary.xlsx"), "xl/worksheets/sheet3.xml");
    EXPECT_EQ(count(power, "<row "), 4u);
    EXPECT_NE(power.find("<c r=\"A2\"><v>-0.5</v></c><c r=\"B2\"><v>100</v></c>"), std::string::npos) << power;
    EXPECT_NE(power.find("<c r=\"A3\"><v>0</v></c><c r=\"B3\"><v>305</v></c>"), std::string::npos) << power;
    EXPECT_NE(power.find("<c r=\"A4\"><v>0.1</v></c><c r=\"B4\"><v>320</v></c>"), std::string::npos) << power;

    // e2e latency: batch 1 spans 0..0.36 s (4 buckets), batch 8 0..0.2 s: empty at 0.3 s.
    const auto e2e = zip_member(file("summary.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(e2e, "<row "), 5u);
    EXPECT_NE(e2e.find("<c r=\"A5\"><v>0.3</v></c><c r=\"B5\"><v>1.5</v></c></row>"), std::string::npos) << e2e;

    // 8 metric-against-batch charts on "summary" (those with a value), one chart per time sheet.
    std::size_t charts = 0;
    for (const auto& member : zip_members(file("summary.xlsx"))) charts += member.starts_with("xl/charts/chart");
    EXPECT_EQ(charts, 8u + 6u);
    const auto first = zip_member(file("summary.xlsx"), "xl/charts/chart1.xml");
    EXPECT_NE(first.find("<c:scatterChart>"), std::string::npos);
    EXPECT_EQ(count(first, "<c:ser>"), 1u);
    EXPECT_NE(first.find("<c:logBase val=\"2\"/>"), std::string::npos) << "batch sizes on a log2 axis";
    EXPECT_NE(first.find("summary!$A$2:$A$3"), std::string::npos) << first;
    const auto e2e_chart = zip_member(file("summary.xlsx"), "xl/charts/chart9.xml");
    EXPECT_EQ(count(e2e_chart, "<c:ser>"), 2u) << "one line per batch size";
    EXPECT_NE(e2e_chart.find("'e2e latency'!$C$2:$C$5"), std::string::npos) << e2e_chart;
    EXPECT_NE(e2e_chart.find("<c:v>batch 8</c:v>"), std::string::npos) << e2e_chart;
}

TEST_F(ExcelReport, WorkbooksWithoutDataAreSkippedAndSaySo) {
    auto group = testing::sample_group();
    for (auto& b : group.benchmarks) b.gpu.clear();
    std::ofstream(file("gpu-" + group.key + ".xlsx")) << "from an earlier report";
    const auto files = write_excel_workbooks(group, scratch_.path());
    EXPECT_EQ(files.written.size(), 3u);
    ASSERT_EQ(files.skipped.size(), 1u);
    EXPECT_EQ(files.skipped[0], "gpu-cuda_0-resnet50-torch-fp16.xlsx: no GPU samples stored");
    EXPECT_FALSE(std::filesystem::exists(file("gpu-" + group.key + ".xlsx"))) << "a stale workbook is removed";
    for (const char* kind : {"latency", "cpu", "summary"})
        EXPECT_GT(std::filesystem::file_size(file(std::string(kind) + "-" + group.key + ".xlsx")), 2000u) << kind;
}

TEST_F(ExcelReport, AFileThatCannotBeWrittenIsAnEnvironmentErrorNamingIt) {
    const auto group = testing::sample_group();
    const auto target = scratch_.path() / "missing-folder" / "latency.xlsx";
    try {
        ExcelOptions options;
        options.tmpdir = scratch_.path();
        write_latency_workbook(group, target, options);
        FAIL() << "expected an error";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace inferbench::report

namespace inferbench::report {
namespace {

TEST(ExcelFindings, TheSummaryWorkbookHasAFindingsSheetWithTheGroupsFindingsOnly) {
    inferbench::testing::ScratchDir dir;
    const auto group = testing::sample_group();
    ExcelOptions options;
    const auto id = group.benchmarks.front().summary.benchmark.benchmark_id;
    options.findings = {{"throttling.power_cap", findings::Severity::warning, {id}, "held by the power cap", {}, "lock"},
                        {"batch.plateau", findings::Severity::info, {id + 1000}, "another group's", {}, "x"}};
    const auto file = dir.path() / "summary.xlsx";
    ASSERT_TRUE(write_summary_workbook(group, file, options));
    EXPECT_NE(zip_member(file, "xl/workbook.xml").find("<sheet name=\"Findings\""), std::string::npos);
    const auto strings = zip_member(file, "xl/sharedStrings.xml");
    EXPECT_NE(strings.find("<t>throttling.power_cap</t>"), std::string::npos) << strings;
    EXPECT_NE(strings.find("<t>held by the power cap</t>"), std::string::npos);
    EXPECT_EQ(strings.find("another group's"), std::string::npos);
    // Without findings, no sheet.
    ASSERT_TRUE(write_summary_workbook(group, file));
    EXPECT_EQ(zip_member(file, "xl/workbook.xml").find("Findings"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
