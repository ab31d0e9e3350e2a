// The workbook writer's cells as a spreadsheet reads them: numbers in their shortest exact form, text
// escaped for XML (control characters as Excel's _xHHHH_, bytes that are not UTF-8 as \xHH), references
// only after a gap, Excel's sheet-name rules and row limit, and cells in order or an error.
#include "report/xlsx_writer.hpp"

#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

using ::testing::HasSubstr;
using Row = XlsxWorkbook::Row;

class XlsxWriter : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(find_program("unzip")) << "the workbook tests read xlsx files with Debian's unzip (scripts/setup.sh)";
    }
    std::string sheet_xml(const std::filesystem::path& file, int sheet = 1) {
        return testing::zip_member(file, "xl/worksheets/sheet" + std::to_string(sheet) + ".xml");
    }
    inferbench::testing::ScratchDir scratch_;
};

TEST_F(XlsxWriter, NumbersAreShortestExactAndNonFiniteOnesAreEmpty) {
    const auto file = scratch_.path() / "n.xlsx";
    XlsxWorkbook book(file);
    auto sheet = book.add_sheet("n");
    sheet.number(0, 0, 0.1 + 0.2);
    sheet.number(0, 1, 1e-7);
    sheet.number(0, 2, 123456789.012345678);
    sheet.number(0, 3, std::numeric_limits<double>::quiet_NaN());
    sheet.number(0, 4, std::numeric_limits<double>::infinity());
    sheet.number(0, 5, std::optional<double>{});
    sheet.number(0, 6, -0.5);
    book.close();
    const auto cells = testing::sheet_cells(sheet_xml(file));
    EXPECT_EQ(cells.at("A1"), "0.30000000000000004") << "round-trips exactly";
    EXPECT_EQ(cells.at("B1"), "1e-07");
    EXPECT_EQ(std::stod(cells.at("C1")), 123456789.012345678);
    EXPECT_EQ(cells.size(), 4u) << "NaN, infinity and nothing leave their cells empty";
    EXPECT_EQ(cells.at("G1"), "-0.5");
    EXPECT_THAT(sheet_xml(file), HasSubstr("<c r=\"G1\"><v>-0.5</v></c>")) << "the cell after a gap names itself";
}

TEST_F(XlsxWriter, TextIsEscapedAndKeepsItsSpaces) {
    const auto file = scratch_.path() / "t.xlsx";
    XlsxWorkbook book(file);
    auto sheet = book.add_sheet("t");
    sheet.text(0, 0, "a < b & c > \"d\"");
    sheet.text(1, 0, std::string("bell\a and tab\t", 14));
    sheet.text(2, 0, "  indented");
    sheet.text(3, 0, "caf\xe9");  // Latin-1, not UTF-8
    sheet.text(4, 0, "");         // empty: no cell
    sheet.text(6, 1, "\xc3\xa9t\xc3\xa9");
    book.close();
    const auto xml = sheet_xml(file);
    EXPECT_THAT(xml, HasSubstr("<t>a &lt; b &amp; c &gt; \"d\"</t>"));
    EXPECT_THAT(xml, HasSubstr("<t xml:space=\"preserve\">bell_x0007_ and tab\t</t>"));
    EXPECT_THAT(xml, HasSubstr("<t xml:space=\"preserve\">  indented</t>"));
    EXPECT_THAT(xml, HasSubstr("<t>caf\\xE9</t>"));
    EXPECT_THAT(xml, HasSubstr("<row r=\"7\"><c r=\"B7\" t=\"inlineStr\"><is><t>\xc3\xa9t\xc3\xa9</t></is></c></row>"))
        << "a row after a gap names itself: " << xml;
    EXPECT_EQ(testing::count(xml, "</row>"), 5u);
}

TEST_F(XlsxWriter, SheetNamesFollowExcelsRules) {
    const auto file = scratch_.path() / "s.xlsx";
    XlsxWorkbook book(file);
    book.add_sheet("batch 8");
    for (const std::string& bad : std::vector<std::string>{"", "a:b", "x[1]", "'quoted'", std::string(32, 'x'), "BATCH 8"}) {
        try {
            book.add_sheet(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const EnvironmentError& e) {
            EXPECT_THAT(e.what(), HasSubstr(file.string())) << e.what();
        }
    }
    book.add_sheet(std::string(31, 'x'));
    book.close();
    EXPECT_EQ(testing::count(testing::zip_member(file, "xl/workbook.xml"), "<sheet name="), 2u);
}

TEST_F(XlsxWriter, CellsComeInOrderWithinExcelsGrid) {
    XlsxWorkbook book(scratch_.path() / "o.xlsx");
    auto first = book.add_sheet("first");
    first.number(3, 2, 1);
    EXPECT_THROW(first.number(3, 1, 1), std::logic_error) << "left of the last cell";
    EXPECT_THROW(first.number(2, 5, 1), std::logic_error) << "above the last row";
    EXPECT_THROW(first.header({"late"}), std::logic_error) << "a header after cells";
    EXPECT_THROW(first.number(XlsxWorkbook::kMaxRows, 0, 1), std::out_of_range);
    EXPECT_THROW(first.number(4, XlsxWorkbook::kMaxCols, 1), std::out_of_range);
    first.number(XlsxWorkbook::kMaxRows - 1, XlsxWorkbook::kMaxCols - 1, 1);  // Excel's last cell
    book.add_sheet("second");
    EXPECT_THROW(first.number(XlsxWorkbook::kMaxRows - 1, 0, 1), std::logic_error) << "a finished sheet";
}

TEST_F(XlsxWriter, AWorkbookNotClosedLeavesNoFile) {
    const auto file = scratch_.path() / "x.xlsx";
    {
        XlsxWorkbook book(file);
        book.add_sheet("a").number(0, 0, 1);
    }
    EXPECT_FALSE(std::filesystem::exists(file));
    EXPECT_TRUE(std::filesystem::is_empty(scratch_.path())) << "no staging folder left";
}

}  // namespace
}  // namespace inferbench::report
