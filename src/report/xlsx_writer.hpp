// A thin owner of one libxlsxwriter workbook: every lxw_error becomes an EnvironmentError naming the
// file, a workbook abandoned by an exception is freed without writing anything, empty values stay empty
// cells. libxlsxwriter writes the file at an OutputFile's staging path: complete or absent. For the report module's own use (it exposes libxlsxwriter's types).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <xlsxwriter.h>

#include "core/file_io.hpp"

namespace inferbench::report {

class XlsxWorkbook {
public:
    struct Options {
        // Rows go to a temporary file as they are written (each sheet's rows strictly in order): memory
        // stays flat for a million rows. Charts then show no cached values until the file is opened.
        bool constant_memory = false;
        std::filesystem::path tmpdir;  // for the temporary files; empty: the system's
    };

    class Sheet {
    public:
        // Non-finite or empty values leave the cell empty.
        void number(lxw_row_t row, lxw_col_t col, double value);
        void number(lxw_row_t row, lxw_col_t col, std::optional<double> value);
        // Always a text cell: worksheet_write_string never makes a formula, whatever the text.
        void text(lxw_row_t row, lxw_col_t col, std::string_view value);
        // Row 0: bold titles, frozen; every column `width` characters wide.
        void header(const std::vector<std::string>& titles, double width = 14);
        const std::string& name() const { return name_; }

    private:
        friend class XlsxWorkbook;
        Sheet(XlsxWorkbook* book, lxw_worksheet* sheet, std::string name)
            : book_(book), sheet_(sheet), name_(std::move(name)) {}
        XlsxWorkbook* book_;
        lxw_worksheet* sheet_;
        std::string name_;
    };

    struct ChartSeries {
        std::string name;
        std::string sheet;
        lxw_row_t first_row = 1, last_row = 1;
        lxw_col_t x_col = 0, y_col = 1;
    };
    struct Chart {
        std::string title, x_title, y_title;
        bool markers = false;  // points marked (few points), else plain lines
        bool log2_x = false;
        std::vector<ChartSeries> series;
    };

    XlsxWorkbook(const std::filesystem::path& file, const Options& options);
    XlsxWorkbook(const XlsxWorkbook&) = delete;
    XlsxWorkbook& operator=(const XlsxWorkbook&) = delete;
    ~XlsxWorkbook();

    // Names: at most 31 characters, none of []:*?/\ and unique (checked).
    Sheet add_sheet(const std::string& name);
    // A native Excel scatter chart with straight lines, anchored at (row, col) of `sheet`.
    void insert_chart(Sheet& sheet, lxw_row_t row, lxw_col_t col, const Chart& chart);
    // Writes the file. Without close() nothing is written.
    void close();

    const std::filesystem::path& file() const { return file_; }

private:
    void check(lxw_error error, std::string_view what) const;

    std::filesystem::path file_;
    OutputFile output_;
    std::string tmpdir_;  // outlives the workbook, which keeps the pointer
    lxw_workbook* book_ = nullptr;
    lxw_format* bold_ = nullptr;
};

}  // namespace inferbench::report
