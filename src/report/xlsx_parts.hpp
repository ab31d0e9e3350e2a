// The XML of an .xlsx file's parts other than the sheets' rows (xlsx_writer.cpp's): the package's
// content types and relationships, the workbook, the styles (bold titles, number formats), drawings and charts; and
// the escaping every part's text goes through. For xlsx_writer alone.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/xlsx_writer.hpp"

namespace inferbench::report::xlsx {

constexpr std::string_view kXmlDeclaration = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";

// `text` as XML character data (or, with `attribute`, an attribute value): & < > (and ") escaped,
// control characters as Excel's _xHHHH_, bytes that are not UTF-8 as the text \xHH.
void append_escaped(std::string& out, std::string_view text, bool attribute = false);
// "A", "Z", "AA", ... for a 0-based column; "B2" for row 1, column 1.
std::string column_name(XlsxWorkbook::Col col);
std::string cell_ref(XlsxWorkbook::Row row, XlsxWorkbook::Col col);
// Excel's stored column width for `width` characters of the default font (7-pixel digits, 5 pixels of padding).
double stored_width(double width);
// The width in characters a column needs to show `title` (bold) whole, and at least `min_width`.
double title_width(std::string_view title, double min_width);
// The cell style (an index into styles()' cellXfs) of numbers in `format`; 0 for general.
unsigned style_of(XlsxWorkbook::NumberFormat format);

struct SheetPart {
    std::string name;
    bool has_drawing = false;
};
std::string content_types(const std::vector<SheetPart>& sheets, std::size_t drawings, std::size_t charts);
std::string package_relationships();
std::string workbook(const std::vector<SheetPart>& sheets);
std::string workbook_relationships(std::size_t sheets);
std::string styles();
// A sheet's link to its drawing (drawing number, 1-based).
std::string sheet_relationships(std::size_t drawing);

// A chart placed on a sheet: its top-left cell and its number in the workbook (1-based).
struct ChartAnchor {
    XlsxWorkbook::Row row = 0;
    XlsxWorkbook::Col col = 0;
    std::size_t chart = 0;
};
// The drawing of one sheet whose first columns are `widths` characters wide (the others Excel's default):
// each chart 720 x 346 pixels (Excel's default 480 x 288, scaled by 1.5 and 1.2).
std::string drawing(const std::vector<ChartAnchor>& anchors, const std::vector<double>& widths);
std::string drawing_relationships(const std::vector<ChartAnchor>& anchors);

// A series' values as the sheet holds them, for the chart's cache (NaN: empty cell); empty: no cache.
struct SeriesValues {
    std::vector<double> x, y;
};
std::string chart(const XlsxWorkbook::Chart& chart, const std::vector<SeriesValues>& values);

}  // namespace inferbench::report::xlsx
