// Text that a spreadsheet would run as a formula stays text: in CSV with a leading apostrophe (OWASP's
// CSV-injection guidance), in xlsx as a string cell (never a formula).
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "report/report_fixture.hpp"
#include "report/table.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Table names_table(const std::vector<std::string>& names) {
    Table table{"t", {{"model", "model"}, {"mean_ms", "mean"}, {"delta", "delta"}}, {}};
    for (const auto& name : names) table.rows.push_back({name, Cell{Duration{1.5e6}}, Cell{-1.5}});
    return table;
}

// The rows of a CSV without its header; the number cells' digits are the table's business, not this test's.
std::vector<std::string> rows_of(const std::string& csv) {
    std::vector<std::string> rows;
    std::size_t begin = csv.find('\n') + 1;
    while (begin < csv.size()) {
        auto end = csv.find('\n', begin);
        while (end != std::string::npos && std::count(csv.begin() + static_cast<std::ptrdiff_t>(begin),
                                                       csv.begin() + static_cast<std::ptrdiff_t>(end), '"') % 2)
            end = csv.find('\n', end + 1);  // a newline inside quotes
        rows.push_back(csv.substr(begin, end - begin));
        begin = end + 1;
    }
    return rows;
}

TEST(CsvQuoting, FormulaLikeTextGetsALeadingApostrophe) {
    const auto rows = rows_of(render(names_table({"=1+1|x.onnx", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"}), Format::csv));
    ASSERT_EQ(rows.size(), 6u);
    EXPECT_THAT(rows[0], StartsWith("'=1+1|x.onnx,1.5"));
    EXPECT_THAT(rows[1], StartsWith("'+cmd,1.5"));
    EXPECT_THAT(rows[2], StartsWith("'-2+3,1.5"));
    EXPECT_THAT(rows[3], StartsWith("'@SUM(A1),1.5"));
    EXPECT_THAT(rows[4], StartsWith("'\tx,1.5"));
    EXPECT_THAT(rows[5], StartsWith("\"'\rx\",1.5"));
    for (const auto& row : rows) EXPECT_THAT(row, HasSubstr(",-1.5")) << "a negative number stays a number";
}

TEST(CsvQuoting, PlainTextAndNumbersStayAsTheyAre) {
    const auto rows = rows_of(render(names_table({"resnet50", "-1.5", "a=b", "x, \"y\""}), Format::csv));
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_THAT(rows[0], StartsWith("resnet50,"));
    EXPECT_THAT(rows[1], StartsWith("-1.5,")) << "text that is a number cannot be a formula";
    EXPECT_THAT(rows[2], StartsWith("a=b,"));
    EXPECT_THAT(rows[3], StartsWith("\"x, \"\"y\"\"\","));
}

TEST(XlsxText, AFormulaLikeNameIsAStringCellNotAFormula) {
    if (!find_program("unzip")) GTEST_SKIP() << "reading xlsx files needs Debian's unzip (scripts/setup.sh)";
    inferbench::testing::ScratchDir dir;
    const auto file = dir.path() / "names.xlsx";
    {
        XlsxWorkbook book(file, {});
        auto sheet = book.add_sheet("names");
        sheet.text(0, 0, "=1+1|x.onnx");
        sheet.text(1, 0, "@SUM(A1)");
        book.close();
    }
    const auto sheet = testing::zip_member(file, "xl/worksheets/sheet1.xml");
    EXPECT_EQ(sheet.find("<f>"), std::string::npos) << sheet;
    EXPECT_THAT(sheet, HasSubstr("<row><c t=\"inlineStr\"><is><t>=1+1|x.onnx</t></is></c></row>"));
    EXPECT_THAT(sheet, HasSubstr("<row><c t=\"inlineStr\"><is><t>@SUM(A1)</t></is></c></row>"));
}

}  // namespace
}  // namespace inferbench::report
