// The Excel workbooks read back (unzip + XML): sheet names, rows, values, empty cells, native charts.
#include "report/excel_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

using testing::count;
using testing::sheet_cells;
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
    EXPECT_EQ(count(sheet1, "</row>"), 11u) << "header + 10 iterations";
    EXPECT_NE(sheet1.find("<c s=\"1\" t=\"inlineStr\"><is><t>t_s</t></is></c>"), std::string::npos)
        << "bold titles, inline strings";
    const auto cells = sheet_cells(sheet1);
    EXPECT_EQ(cells.at("D1"), "compute_ms");
    // Iteration 0 at time zero with every device time; iteration 1 (row 3) without them: empty cells.
    EXPECT_EQ(cells.at("A2"), "0");
    EXPECT_EQ(cells.at("B2"), "1.5");
    EXPECT_EQ(cells.at("C2"), "0.1");
    EXPECT_EQ(cells.at("D2"), "1");
    EXPECT_EQ(cells.at("E2"), "0.05");
    EXPECT_EQ(cells.at("A3"), "0.04");
    EXPECT_EQ(cells.at("B3"), "1.5");
    EXPECT_FALSE(cells.contains("C3"));
    EXPECT_EQ(cells.at("E10"), "0.05") << "a row after a row without device times";
    EXPECT_FALSE(cells.contains("A12"));
    EXPECT_NE(sheet1.find("<row><c s=\"4\"><v>0.04</v></c><c s=\"6\"><v>1.5</v></c></row>"), std::string::npos)
        << "references only after a gap: " << sheet1;

    const auto sheet2 = zip_member(file("latency.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(sheet2, "</row>"), 7u);
    EXPECT_EQ(sheet_cells(sheet2).at("B2"), "12") << "batch 8: 8 x 1.5 ms";
}

TEST_F(ExcelReport, AbsoluteClockKeepsMonotonicSeconds) {
    auto group = testing::sample_group();
    set_clock(group, false);
    EXPECT_FALSE(group.clock_from_zero);
    ASSERT_TRUE(write_latency_workbook(group, file("abs.xlsx")));
    const auto cells = sheet_cells(zip_member(file("abs.xlsx"), "xl/worksheets/sheet1.xml"));
    EXPECT_EQ(cells.at("A2"), "5") << "kT0 = 5 s";
    EXPECT_EQ(cells.at("A3"), "5.04");
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
    EXPECT_EQ(count(zip_member(file("split.xlsx"), "xl/worksheets/sheet1.xml"), "</row>"), 5u);
    const auto sheet3 = zip_member(file("split.xlsx"), "xl/worksheets/sheet3.xml");
    EXPECT_EQ(count(sheet3, "</row>"), 3u);
    EXPECT_EQ(sheet_cells(sheet3).at("A3"), "0.36") << "the last iteration";
}

// At Excel's real limit: a batch of 1,048,576 iterations fills its first sheet to the last row Excel has
// (the header and 1,048,575 iterations) and puts the last iteration on the next.
TEST_F(ExcelReport, ABatchOfAMillionRowsFillsASheetToExcelsLastRow) {
    ReportGroup group;
    group.key = "big";
    auto& b = group.benchmarks.emplace_back(testing::benchmark(1, 1, 0));
    constexpr std::int64_t kRows = 1'048'576;
    b.iterations.reserve(kRows);
    for (std::int64_t i = 0; i < kRows; ++i) b.iterations.push_back({testing::kT0 + i * 1'000'000, 900'000});
    ASSERT_TRUE(write_latency_workbook(group, file("big.xlsx")));
    const auto workbook = zip_member(file("big.xlsx"), "xl/workbook.xml");
    EXPECT_EQ(count(workbook, "<sheet name="), 2u);
    EXPECT_NE(workbook.find("<sheet name=\"batch 1 (2)\""), std::string::npos);
    EXPECT_EQ(count(zip_member(file("big.xlsx"), "xl/worksheets/sheet1.xml"), "</row>"), 1'048'576u);
    const auto cells = sheet_cells(zip_member(file("big.xlsx"), "xl/worksheets/sheet2.xml"));
    EXPECT_EQ(cells.at("A2"), "1048.575") << "the last iteration, 1,048,575 ms after the first";
    EXPECT_FALSE(cells.contains("A3"));
}

TEST_F(ExcelReport, GpuWorkbookHasOnlyBatchesWithSamplesAndNamesThrottleReasons) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_gpu_workbook(group, file("gpu.xlsx")));
    const auto workbook = zip_member(file("gpu.xlsx"), "xl/workbook.xml");
    EXPECT_EQ(count(workbook, "<sheet name="), 1u);
    EXPECT_NE(workbook.find("<sheet name=\"batch 8\""), std::string::npos);
    const auto sheet = zip_member(file("gpu.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_EQ(count(sheet, "</row>"), 5u);
    const auto cells = sheet_cells(sheet);
    EXPECT_EQ(cells.at("K1"), "throttle_reasons");
    EXPECT_EQ(cells.at("A2"), "-0.5") << "warm-up sample before time zero";
    EXPECT_EQ(cells.at("B2"), "warmup");
    EXPECT_EQ(cells.at("K2"), "SW power cap");
    EXPECT_EQ(cells.at("D3"), "300");
    EXPECT_EQ(cells.at("E3"), "60");
    EXPECT_EQ(cells.at("F3"), "1980");
    EXPECT_FALSE(cells.contains("G3")) << "memory clock not sampled: empty";
    EXPECT_NE(sheet.find("<c r=\"H3\" s=\"3\"><v>97</v></c>"), std::string::npos) << "the cell after a gap has its reference";
}

TEST_F(ExcelReport, CpuWorkbook) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_cpu_workbook(group, file("cpu.xlsx")));
    EXPECT_EQ(count(zip_member(file("cpu.xlsx"), "xl/workbook.xml"), "<sheet name="), 2u);
    const auto sheet = zip_member(file("cpu.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(sheet, "</row>"), 4u);
    EXPECT_NE(sheet.find("<row><c s=\"4\"><v>0.1</v></c><c t=\"inlineStr\"><is><t>measure</t></is></c>"
                         "<c s=\"3\"><v>101</v></c><c s=\"3\"><v>512</v></c><c s=\"3\"><v>50</v></c></row>"),
              std::string::npos)
        << sheet;
}

TEST_F(ExcelReport, SummaryWorkbookHasMetricsPerBatchAndTimeSeriesWithCharts) {
    const auto group = testing::sample_group();
    ASSERT_TRUE(write_summary_workbook(group, file("summary.xlsx")));
    const auto workbook = zip_member(file("summary.xlsx"), "xl/workbook.xml");
    for (const char* sheet : {"summary", "e2e latency", "power", "SM clock", "GPU util", "temperature", "CPU"})
        EXPECT_NE(workbook.find(std::string("<sheet name=\"") + sheet + "\""), std::string::npos) << sheet;
    // summary: batch 8's row has its mean latency (12 ms) and mean power (310 W); batch 1 has no power.
    const auto summary_xml = zip_member(file("summary.xlsx"), "xl/worksheets/sheet1.xml");
    EXPECT_EQ(count(summary_xml, "</row>"), 3u);
    const auto summary = sheet_cells(summary_xml);
    EXPECT_EQ(summary.at("E1"), "mean_ms");
    EXPECT_EQ(summary.at("J1"), "J_per_inference");
    EXPECT_EQ(summary.at("E3"), "12") << summary_xml;
    EXPECT_EQ(summary.at("I3"), "310") << summary_xml;
    EXPECT_FALSE(summary.contains("I2"));

    // power over time on the 100 ms grid: -0.5 s (warm-up), then the mean of 300 and 310 W, then 320 W.
    const auto power_xml = zip_member(file("summary.xlsx"), "xl/worksheets/sheet3.xml");
    EXPECT_EQ(count(power_xml, "</row>"), 4u);
    const auto power = sheet_cells(power_xml);
    EXPECT_EQ(power.at("A2"), "-0.5");
    EXPECT_EQ(power.at("B2"), "100");
    EXPECT_EQ(power.at("A3"), "0");
    EXPECT_EQ(power.at("B3"), "305");
    EXPECT_EQ(power.at("A4"), "0.1");
    EXPECT_EQ(power.at("B4"), "320");

    // e2e latency: batch 1 spans 0..0.36 s (4 buckets), batch 8 0..0.2 s: empty at 0.3 s.
    const auto e2e_xml = zip_member(file("summary.xlsx"), "xl/worksheets/sheet2.xml");
    EXPECT_EQ(count(e2e_xml, "</row>"), 5u);
    const auto e2e = sheet_cells(e2e_xml);
    EXPECT_EQ(e2e.at("A5"), "0.3");
    EXPECT_EQ(e2e.at("B5"), "1.5");
    EXPECT_FALSE(e2e.contains("C5"));

    // 8 metric-against-batch charts on "summary" (those with a value), one chart per time sheet.
    std::size_t charts = 0;
    for (const auto& member : zip_members(file("summary.xlsx"))) charts += member.starts_with("xl/charts/chart");
    EXPECT_EQ(charts, 8u + 6u);
    const auto first = zip_member(file("summary.xlsx"), "xl/charts/chart1.xml");
    EXPECT_NE(first.find("<c:scatterChart>"), std::string::npos);
    EXPECT_EQ(count(first, "<c:ser>"), 1u);
    EXPECT_NE(first.find("<c:logBase val=\"2\"/>"), std::string::npos) << "batch sizes on a log2 axis";
    EXPECT_NE(first.find("<c:f>'summary'!$A$2:$A$3</c:f>"), std::string::npos) << first;
    EXPECT_NE(first.find("<c:ptCount val=\"2\"/><c:pt idx=\"0\"><c:v>1</c:v></c:pt><c:pt idx=\"1\"><c:v>8</c:v>"),
              std::string::npos)
        << "the batch sizes as the chart's cached values: " << first;
    const auto e2e_chart = zip_member(file("summary.xlsx"), "xl/charts/chart9.xml");
    EXPECT_EQ(count(e2e_chart, "<c:ser>"), 2u) << "one line per batch size";
    EXPECT_NE(e2e_chart.find("'e2e latency'!$C$2:$C$5"), std::string::npos) << e2e_chart;
    EXPECT_NE(e2e_chart.find("<c:v>batch 8</c:v>"), std::string::npos) << e2e_chart;
    EXPECT_NE(e2e_chart.find("<c:symbol val=\"circle\"/>"), std::string::npos)
        << "few buckets: each marked, so that a series of one bucket still shows";
    EXPECT_NE(e2e_chart.find("<c:dispBlanksAs val=\"span\"/>"), std::string::npos)
        << "a bucket without a value: the line joins its neighbours (neither a gap nor zero)";
    // Each chart sits on its sheet, right of the columns.
    const auto drawing = zip_member(file("summary.xlsx"), "xl/drawings/drawing2.xml");
    EXPECT_NE(drawing.find("<xdr:from><xdr:col>4</xdr:col>"), std::string::npos) << drawing;
    EXPECT_NE(zip_member(file("summary.xlsx"), "xl/drawings/_rels/drawing2.xml.rels").find("../charts/chart9.xml"),
              std::string::npos);
}

// Each number column shows its unit's decimals (the cell keeps the full value), and every column is as
// wide as its title: no "throughput_per_" cut short, no 72.11348625714.
TEST_F(ExcelReport, ColumnsHaveANumberFormatAndTitlesFit) {
    auto group = testing::sample_group();
    group.benchmarks[1].summary.throughput_per_s = 72.11348625714;
    ASSERT_TRUE(write_summary_workbook(group, file("summary.xlsx")));
    const auto styles = zip_member(file("summary.xlsx"), "xl/styles.xml");
    const auto summary = zip_member(file("summary.xlsx"), "xl/worksheets/sheet1.xml");
    const auto cells = sheet_cells(summary);
    const auto cell_styles = testing::sheet_styles(summary);
    ASSERT_EQ(cells.at("H1"), "throughput_per_s");
    EXPECT_EQ(cells.at("H3"), "72.11348625714") << "the full value stays in the cell";
    const auto format_of = [&](const std::string& ref) { return testing::format_code(styles, cell_styles.at(ref)); };
    EXPECT_EQ(format_of("A3"), "0") << "batch size";
    EXPECT_EQ(format_of("B3"), "General") << "a label";
    EXPECT_EQ(format_of("D3"), "0") << "iterations";
    EXPECT_EQ(format_of("E3"), "[&lt;1]0.000000;0.000") << "mean_ms: to the ns below 1 ms, else to the µs";
    EXPECT_EQ(format_of("H3"), "0.0") << "throughput_per_s";
    EXPECT_EQ(format_of("I3"), "0.0") << "mean_power_W";
    EXPECT_EQ(format_of("J3"), "0.000000") << "J_per_inference";
    // Widths: one <col> per column, none narrower than its title (in characters of the default font).
    for (const auto& [ref, title] : cells) {
        if (ref.size() < 2 || ref.substr(1) != "1" || ref[0] > 'Z') continue;
        const int col = ref[0] - 'A' + 1;
        const auto at = summary.find("<col min=\"" + std::to_string(col) + "\" max=\"" + std::to_string(col) + "\"");
        ASSERT_NE(at, std::string::npos) << ref;
        const double width = std::stod(testing::attribute(summary.substr(at, summary.find('>', at) - at), "width"));
        EXPECT_GT(width, static_cast<double>(title.size()) + 1) << title;
    }
    // Iteration sheets: seconds to three decimals, milliseconds to three or, below 1 ms, six.
    ASSERT_TRUE(write_latency_workbook(group, file("latency.xlsx")));
    const auto latency = testing::sheet_styles(zip_member(file("latency.xlsx"), "xl/worksheets/sheet1.xml"));
    const auto latency_styles = zip_member(file("latency.xlsx"), "xl/styles.xml");
    EXPECT_EQ(testing::format_code(latency_styles, latency.at("A3")), "0.000") << "t_s";
    EXPECT_EQ(testing::format_code(latency_styles, latency.at("B3")), "[&lt;1]0.000000;0.000") << "e2e_ms";
}

// Iterations 181 ms apart in 100 ms buckets left every other bucket of that batch size empty, and its
// line broken into dots: the buckets are now at least the slowest series' median interval (200 ms here),
// and each series has a value in every bucket between its first and its last.
TEST_F(ExcelReport, TimeSheetsLeaveNoEmptyBucketsWhereIterationsAreSlowerThanTheGrid) {
    ReportGroup group = testing::sample_group();
    for (auto& b : group.benchmarks) {
        b.gpu.clear();
        b.cpu.clear();
    }
    auto& slow = group.benchmarks[1];
    slow.iterations.resize(20);
    for (std::size_t i = 0; i < slow.iterations.size(); ++i) {
        slow.iterations[i].start_ns = testing::kT0 + static_cast<std::int64_t>(i) * 181'000'000LL;
        slow.iterations[i].e2e_ns = 12'000'000;
    }
    auto& fast = group.benchmarks[0];
    fast.iterations.resize(90, fast.iterations.front());
    for (std::size_t i = 0; i < fast.iterations.size(); ++i)
        fast.iterations[i].start_ns = testing::kT0 + static_cast<std::int64_t>(i) * 40'000'000LL;
    ASSERT_TRUE(write_summary_workbook(group, file("summary.xlsx")));
    const auto e2e = sheet_cells(zip_member(file("summary.xlsx"), "xl/worksheets/sheet2.xml"));
    ASSERT_EQ(e2e.at("C1"), "batch 8");
    EXPECT_EQ(e2e.at("A3"), "0.2") << "200 ms buckets";
    for (const char column : {'B', 'C'}) {
        std::vector<int> rows;
        for (const auto& [ref, value] : e2e)
            if (ref[0] == column && ref.substr(1) != "1") rows.push_back(std::stoi(ref.substr(1)));
        std::sort(rows.begin(), rows.end());
        ASSERT_GT(rows.size(), 10u) << column;
        EXPECT_EQ(rows.back() - rows.front() + 1, static_cast<int>(rows.size())) << "an empty bucket in column " << column;
    }
    std::string title;
    for (const auto& member : zip_members(file("summary.xlsx"))) {
        if (!member.starts_with("xl/charts/")) continue;
        const auto chart = zip_member(file("summary.xlsx"), member);
        if (chart.find("'e2e latency'!") != std::string::npos) title = chart;
    }
    EXPECT_NE(title.find("end-to-end latency over time (200 ms means)"), std::string::npos) << title;
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

// Every workbook as Python's zipfile and XML parser read it (check_xlsx.py): parts, content types,
// relationships, rows and cells in order, charts over cells that exist.
TEST_F(ExcelReport, WorkbooksAreWellFormedPackages) {
    if (!find_program("python3")) GTEST_SKIP() << "needs python3";
    const auto group = testing::sample_group();
    const auto files = write_excel_workbooks(group, scratch_.path());
    ASSERT_EQ(files.written.size(), 4u);
    std::vector<std::string> command = {"python3", INFERBENCH_CHECK_XLSX};
    for (const auto& f : files.written) command.push_back(f.string());
    const auto run = run_captured(command, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
    EXPECT_THAT(run.out, ::testing::HasSubstr("latency-" + group.key + ".xlsx: sheets batch 1=11x6,batch 8=7x6; charts 0"));
    EXPECT_THAT(run.out, ::testing::HasSubstr("gpu-" + group.key + ".xlsx: sheets batch 8=5x11; charts 0"));
    EXPECT_THAT(run.out, ::testing::HasSubstr("cpu-" + group.key + ".xlsx: sheets batch 1=4x6,batch 8=4x6; charts 0"));
    EXPECT_THAT(run.out, ::testing::HasSubstr("summary-" + group.key + ".xlsx: sheets summary=3x"));
    EXPECT_THAT(run.out, ::testing::HasSubstr("; charts 14;"));
}

TEST_F(ExcelReport, AFileThatCannotBeWrittenIsAnEnvironmentErrorNamingIt) {
    const auto group = testing::sample_group();
    const auto target = scratch_.path() / "missing-folder" / "latency.xlsx";
    try {
        write_latency_workbook(group, target);
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
    const auto workbook = zip_member(file, "xl/workbook.xml");
    const auto sheets = count(workbook, "<sheet name=");
    const auto findings = zip_member(file, "xl/worksheets/sheet" + std::to_string(sheets) + ".xml");
    EXPECT_NE(findings.find("<t>throttling.power_cap</t>"), std::string::npos) << findings;
    EXPECT_NE(findings.find("<t>held by the power cap</t>"), std::string::npos);
    EXPECT_EQ(findings.find("another group's"), std::string::npos);
    // Without findings, no sheet.
    ASSERT_TRUE(write_summary_workbook(group, file));
    EXPECT_EQ(zip_member(file, "xl/workbook.xml").find("Findings"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
