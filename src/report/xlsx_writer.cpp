#include "report/xlsx_writer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/xlsx_parts.hpp"
#include "report/zip_writer.hpp"

namespace inferbench::report {

struct XlsxWorkbook::SheetState {
    std::string name;
    bool started = false;    // the part's opening written
    std::int64_t row = -1;   // the row being written (its <row> open), -1 before the first
    std::int64_t next_col = 0;
    std::vector<double> widths;  // header(): each column's width in characters
    std::vector<XlsxWorkbook::NumberFormat> formats;  // header(): each column's number format
    std::vector<xlsx::ChartAnchor> charts;
    std::vector<std::vector<double>> values;  // [col][row], NaN where empty: Options::chart_values
};

namespace {

using SheetState = XlsxWorkbook::SheetState;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string lowercase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// Why Excel would refuse `name` as a sheet name, or nothing.
std::optional<std::string> sheet_name_problem(const std::string& name,
                                              const std::vector<std::unique_ptr<SheetState>>& sheets) {
    if (name.empty()) return "a sheet name cannot be empty";
    if (name.size() > 31) return "a sheet name has at most 31 characters";
    if (name.find_first_of("[]:*?/\\") != std::string::npos) return "a sheet name cannot contain any of []:*?/\\";
    if (name.front() == '\'' || name.back() == '\'') return "a sheet name cannot start or end with an apostrophe";
    for (const auto& sheet : sheets)
        if (lowercase(sheet->name) == lowercase(name)) return "the workbook has a sheet of that name (in any case)";
    return std::nullopt;
}

// The part's opening: views (the header row frozen), column widths, then the rows.
std::string sheet_opening(const SheetState& sheet, bool first) {
    std::string out(xlsx::kXmlDeclaration);
    out += "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
           "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheetViews><sheetView ";
    if (first) out += "tabSelected=\"1\" ";
    out += "workbookViewId=\"0\"";
    if (!sheet.widths.empty()) {
        out += "><pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/>"
               "<selection pane=\"bottomLeft\"/></sheetView>";
    } else {
        out += "/>";
    }
    out += "</sheetViews><sheetFormatPr defaultRowHeight=\"15\"/>";
    if (!sheet.widths.empty()) {
        out += "<cols>";
        for (std::size_t c = 0; c < sheet.widths.size(); ++c)
            out += fmt::format("<col min=\"{0}\" max=\"{0}\" width=\"{1}\" customWidth=\"1\"/>", c + 1,
                               xlsx::stored_width(sheet.widths[c]));
        out += "</cols>";
    }
    return out + "<sheetData>";
}

void append_number(std::string& out, double value) {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    out.append(buffer, end);
}

void append_text_cell(std::string& out, std::string_view text) {
    const bool preserve = std::isspace(static_cast<unsigned char>(text.front())) ||
                          std::isspace(static_cast<unsigned char>(text.back()));
    out += preserve ? " t=\"inlineStr\"><is><t xml:space=\"preserve\">" : " t=\"inlineStr\"><is><t>";
    xlsx::append_escaped(out, text);
    out += "</t></is></c>";
}

}  // namespace

XlsxWorkbook::XlsxWorkbook(const std::filesystem::path& file) : XlsxWorkbook(file, Options{}) {}

XlsxWorkbook::XlsxWorkbook(const std::filesystem::path& file, const Options& options)
    : file_(file), options_(options), output_(file), zip_(std::make_unique<ZipWriter>(output_)) {}

XlsxWorkbook::~XlsxWorkbook() = default;

std::string& XlsxWorkbook::out() { return zip_->buffer(); }

void XlsxWorkbook::flush_if_full() { zip_->flush_if_full(); }

SheetState& XlsxWorkbook::writing(std::size_t index) {
    if (index + 1 != sheets_.size())
        throw std::logic_error(fmt::format("{}: sheet '{}' is finished: sheets are written one after another",
                                           file_.string(), sheets_[index]->name));
    return *sheets_[index];
}

XlsxWorkbook::Sheet XlsxWorkbook::add_sheet(const std::string& name) {
    if (const auto problem = sheet_name_problem(name, sheets_))
        throw EnvironmentError(fmt::format("{}: sheet '{}': {}", file_.string(), name, *problem));
    end_sheet();
    auto& sheet = sheets_.emplace_back(std::make_unique<SheetState>());
    sheet->name = name;
    zip_->begin(fmt::format("xl/worksheets/sheet{}.xml", sheets_.size()));
    return Sheet(this, sheets_.size() - 1);
}

void XlsxWorkbook::end_sheet() {
    if (sheets_.empty()) return;
    SheetState& sheet = *sheets_.back();
    if (!sheet.started) out() += sheet_opening(sheet, sheets_.size() == 1);
    if (sheet.row >= 0) out() += "</row>";
    out() += "</sheetData><pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" "
             "footer=\"0.3\"/>";
    if (!sheet.charts.empty()) out() += "<drawing r:id=\"rId1\"/>";
    out() += "</worksheet>";
    sheet.values = {};
    sheet.started = true;
    sheet.row = std::numeric_limits<std::int64_t>::max();  // nothing more
}

// Opens the cell's <c: its row first where it starts one; references only where a cell or row is skipped.
void XlsxWorkbook::start_cell(SheetState& sheet, Row row, Col col) {
    if (row >= kMaxRows || col >= kMaxCols)
        throw std::out_of_range(fmt::format("{}: sheet '{}': no cell at row {} column {} (Excel has {} x {})",
                                            file_.string(), sheet.name, row + 1, col + 1, kMaxRows, kMaxCols));
    if (row < sheet.row || (row == sheet.row && col < sheet.next_col))
        throw std::logic_error(fmt::format("{}: sheet '{}': cell at row {} column {} written out of order",
                                           file_.string(), sheet.name, row + 1, col + 1));
    std::string& buffer = out();
    if (!sheet.started) {
        buffer += sheet_opening(sheet, sheets_.size() == 1);
        sheet.started = true;
    }
    if (row != sheet.row) {
        if (sheet.row >= 0) buffer += "</row>";
        if (row == sheet.row + 1) {
            buffer += "<row>";
        } else {
            buffer += "<row r=\"";
            buffer += std::to_string(row + 1);
            buffer += "\">";
        }
        sheet.row = row;
        sheet.next_col = 0;
    }
    if (col == sheet.next_col) {
        buffer += "<c";
    } else {
        buffer += "<c r=\"";
        buffer += xlsx::cell_ref(row, col);
        buffer += '"';
    }
    sheet.next_col = col + 1;
}

void XlsxWorkbook::Sheet::number(Row row, Col col, double value) {
    if (!std::isfinite(value)) return;
    SheetState& sheet = book_->writing(index_);
    book_->start_cell(sheet, row, col);
    std::string& buffer = book_->out();
    if (col < sheet.formats.size() && sheet.formats[col] != NumberFormat::general) {
        buffer += " s=\"";
        buffer += std::to_string(xlsx::style_of(sheet.formats[col]));
        buffer += '"';
    }
    buffer += "><v>";
    append_number(buffer, value);
    buffer += "</v></c>";
    if (book_->options_.chart_values) {
        if (sheet.values.size() <= col) sheet.values.resize(col + 1u);
        auto& column = sheet.values[col];
        if (column.size() <= row) column.resize(row + 1u, kNaN);
        column[row] = value;
    }
    book_->flush_if_full();
}

void XlsxWorkbook::Sheet::number(Row row, Col col, std::optional<double> value) {
    if (value) number(row, col, *value);
}

void XlsxWorkbook::Sheet::text(Row row, Col col, std::string_view value) {
    if (value.empty()) return;
    book_->start_cell(book_->writing(index_), row, col);
    append_text_cell(book_->out(), value);
    book_->flush_if_full();
}

void XlsxWorkbook::Sheet::header(const std::vector<Column>& columns, double min_width) {
    SheetState& sheet = book_->writing(index_);
    if (sheet.started) throw std::logic_error(fmt::format("sheet '{}': header() after other cells", sheet.name));
    const std::size_t count = std::min<std::size_t>(columns.size(), kMaxCols);
    for (std::size_t c = 0; c < count; ++c) {
        sheet.widths.push_back(xlsx::title_width(columns[c].title, min_width));
        sheet.formats.push_back(columns[c].format);
    }
    for (std::size_t c = 0; c < count; ++c) {
        if (columns[c].title.empty()) continue;
        book_->start_cell(sheet, 0, static_cast<Col>(c));
        book_->out() += " s=\"1\"";
        append_text_cell(book_->out(), columns[c].title);
    }
}

const std::string& XlsxWorkbook::Sheet::name() const { return book_->sheets_[index_]->name; }

void XlsxWorkbook::insert_chart(Sheet& sheet, Row row, Col col, const Chart& chart) {
    SheetState& state = writing(sheet.index_);
    std::vector<xlsx::SeriesValues> values;
    for (const auto& series : chart.series) {
        xlsx::SeriesValues& v = values.emplace_back();
        const auto source = std::find_if(sheets_.begin(), sheets_.end(),
                                         [&](const auto& s) { return s->name == series.sheet; });
        if (source == sheets_.end())
            throw std::logic_error(fmt::format("{}: chart '{}' refers to no sheet '{}'", file_.string(), chart.title,
                                               series.sheet));
        const auto column = [&](Col c) {
            std::vector<double> cells;
            if (!options_.chart_values) return cells;
            for (Row r = series.first_row; r <= series.last_row; ++r) {
                const auto& held = (*source)->values;
                cells.push_back(c < held.size() && r < held[c].size() ? held[c][r] : kNaN);
            }
            return cells;
        };
        v.x = column(series.x_col);
        v.y = column(series.y_col);
    }
    charts_.push_back(xlsx::chart(chart, values));
    state.charts.push_back({row, col, charts_.size()});
}

void XlsxWorkbook::close() {
    if (sheets_.empty()) add_sheet("Sheet1");  // Excel opens no workbook without a sheet
    end_sheet();
    std::vector<xlsx::SheetPart> parts;
    std::size_t drawings = 0;
    for (const auto& sheet : sheets_) {
        parts.push_back({sheet->name, !sheet->charts.empty()});
        if (sheet->charts.empty()) continue;
        ++drawings;
        const auto sheet_number = parts.size();
        zip_->begin(fmt::format("xl/worksheets/_rels/sheet{}.xml.rels", sheet_number));
        zip_->append(xlsx::sheet_relationships(drawings));
        zip_->begin(fmt::format("xl/drawings/drawing{}.xml", drawings));
        zip_->append(xlsx::drawing(sheet->charts, sheet->widths));
        zip_->begin(fmt::format("xl/drawings/_rels/drawing{}.xml.rels", drawings));
        zip_->append(xlsx::drawing_relationships(sheet->charts));
    }
    for (std::size_t i = 0; i < charts_.size(); ++i) {
        zip_->begin(fmt::format("xl/charts/chart{}.xml", i + 1));
        zip_->append(charts_[i]);
    }
    const std::pair<const char*, std::string> parts_last[] = {
        {"xl/workbook.xml", xlsx::workbook(parts)},
        {"xl/_rels/workbook.xml.rels", xlsx::workbook_relationships(parts.size())},
        {"xl/styles.xml", xlsx::styles()},
        {"_rels/.rels", xlsx::package_relationships()},
        {"[Content_Types].xml", xlsx::content_types(parts, drawings, charts_.size())},
    };
    for (const auto& [name, content] : parts_last) {
        zip_->begin(name);
        zip_->append(content);
    }
    zip_->finish();
    output_.commit();
}

}  // namespace inferbench::report
