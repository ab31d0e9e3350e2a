// Excel workbooks (.xlsx: a zip of SpreadsheetML parts) written in one pass, for the report's workbooks.
// Sheets are written one after another and each sheet's cells row by row, left to right, straight into
// the zip (zip_writer: deflated on a second thread), so memory stays flat for millions of rows: numbers
// as their shortest round-trip text (std::to_chars), text as inline strings (never a formula, whatever
// it says), empty or non-finite values as no cell at all, cell references written only after a gap.
// Each column has a number format (the cell keeps its full value) and is at least as wide as its title.
// Charts are native scatter charts over a sheet's cells, each series with its own line colour. The file
// is written at an OutputFile's staging path: complete or absent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/file_io.hpp"

namespace inferbench::report {

class ZipWriter;

class XlsxWorkbook {
public:
    using Row = std::uint32_t;  // 0-based; a sheet has Excel's 1,048,576 rows
    using Col = std::uint16_t;  // 0-based; and 16,384 columns
    static constexpr Row kMaxRows = 1'048'576;
    static constexpr Col kMaxCols = 16'384;

    // How a column's numbers are shown; the cell always holds the full value. decimals3_or_6: 6 decimals
    // below 1, so that a small value (16 ns in ms) does not show as 0.000.
    enum class NumberFormat : std::uint8_t { general, integer, decimals1, decimals3, decimals6, decimals3_or_6 };
    struct Column {
        Column(std::string title_, NumberFormat format_ = NumberFormat::general)  // NOLINT: from a title
            : title(std::move(title_)), format(format_) {}
        Column(const char* title_, NumberFormat format_ = NumberFormat::general)  // NOLINT: from a title
            : Column(std::string(title_), format_) {}
        std::string title;
        NumberFormat format;
    };

    struct Options {
        // Keep each sheet's numbers until the workbook is closed, so that charts carry their values
        // (for viewers that do not compute them); for small sheets only.
        bool chart_values = false;
    };

    class Sheet {
    public:
        // Non-finite or empty values leave the cell empty. Cells come row by row, left to right.
        void number(Row row, Col col, double value);
        void number(Row row, Col col, std::optional<double> value);
        // A text cell (an empty text leaves the cell empty).
        void text(Row row, Col col, std::string_view value);
        // Row 0: bold titles, frozen; each column `min_width` characters wide or its title's width, so
        // that no title is cut; its numbers in its format. Before any other cell.
        void header(const std::vector<Column>& columns, double min_width = 12);
        const std::string& name() const;

    private:
        friend class XlsxWorkbook;
        Sheet(XlsxWorkbook* book, std::size_t index) : book_(book), index_(index) {}
        XlsxWorkbook* book_;
        std::size_t index_;
    };

    struct ChartSeries {
        std::string name;
        std::string sheet;
        Row first_row = 1, last_row = 1;
        Col x_col = 0, y_col = 1;
    };
    struct Chart {
        std::string title, x_title, y_title;
        bool markers = false;  // points marked as well as joined (few points), else lines alone
        bool log2_x = false;
        std::vector<ChartSeries> series;
    };

    explicit XlsxWorkbook(const std::filesystem::path& file);
    XlsxWorkbook(const std::filesystem::path& file, const Options& options);
    XlsxWorkbook(const XlsxWorkbook&) = delete;
    XlsxWorkbook& operator=(const XlsxWorkbook&) = delete;
    ~XlsxWorkbook();

    // Ends the sheet before. Names: 1 to 31 characters, none of []:*?/\, not starting or ending with an
    // apostrophe, unique regardless of case (checked: EnvironmentError naming the file).
    Sheet add_sheet(const std::string& name);
    // A native Excel scatter chart with straight lines, anchored at (row, col) of `sheet` (the sheet being
    // written), over cells already written.
    void insert_chart(Sheet& sheet, Row row, Col col, const Chart& chart);
    // Writes the rest of the file and renames it over its name. Without close() nothing is written.
    void close();

    const std::filesystem::path& file() const { return file_; }

    struct SheetState;  // xlsx_writer.cpp's

private:
    SheetState& writing(std::size_t index);
    void end_sheet();
    void start_cell(SheetState& sheet, Row row, Col col);
    std::string& out();
    void flush_if_full();

    std::filesystem::path file_;
    Options options_;
    OutputFile output_;
    std::unique_ptr<ZipWriter> zip_;
    std::vector<std::unique_ptr<SheetState>> sheets_;
    std::vector<std::string> charts_;  // chart XML parts, in order
};

}  // namespace inferbench::report
