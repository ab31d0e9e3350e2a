#include "report/pipeline_workbook.hpp"

#include <system_error>

#include "report/generation_workbook.hpp"
#include "report/pipeline_plots.hpp"
#include "report/pipeline_rows.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

using Sheet = XlsxWorkbook::Sheet;
using Row = XlsxWorkbook::Row;
using Col = XlsxWorkbook::Col;

void write_table_sheet(XlsxWorkbook& book, const std::string& name, const Table& table) {
    Sheet sheet = book.add_sheet(name);
    std::vector<XlsxWorkbook::Column> header;
    for (const auto& column : table.columns) header.emplace_back(column.key, column_format(column.key));
    sheet.header(header);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            write_table_cell(sheet, static_cast<Row>(r + 1), static_cast<Col>(c), table.rows[r][c]);
}

void write_breakdown_sheet(XlsxWorkbook& book, const StageBreakdown& d) {
    Sheet sheet = book.add_sheet("Breakdown");
    std::vector<XlsxWorkbook::Column> header = {"cell"};
    for (const auto& segment : d.segments) header.emplace_back(segment + " ms", XlsxWorkbook::NumberFormat::decimals3);
    sheet.header(header);
    for (std::size_t c = 0; c < d.cells.size(); ++c) {
        const auto row = static_cast<Row>(c + 1);
        sheet.text(row, 0, d.cells[c]);
        for (std::size_t k = 0; k < d.segments.size(); ++k) sheet.number(row, static_cast<Col>(k + 1), d.ms[c][k]);
    }
}

}  // namespace

ReportFiles pipeline_workbook_files(std::span<const analysis::BenchmarkSummary> summaries,
                                    const std::filesystem::path& dir) {
    const auto file = dir / "pipeline.xlsx";
    const Table cells = pipeline_table(summaries);
    ReportFiles files;
    if (cells.rows.empty()) {
        std::error_code ignored;  // an earlier report's workbook would describe other data
        std::filesystem::remove(file, ignored);
        return files;
    }
    const Table stages = pipeline_stage_table(summaries);
    XlsxWorkbook book(file);
    write_table_sheet(book, "Pipeline", cells);
    write_table_sheet(book, "Stages", stages);
    write_breakdown_sheet(book, stage_breakdown(summaries));
    Table all = cells;
    for (const auto& column : stages.columns)
        if (std::none_of(all.columns.begin(), all.columns.end(), [&](const Column& c) { return c.key == column.key; }))
            all.columns.push_back(column);
    all.columns.push_back(Column{.key = "Breakdown",
                                 .title = "Breakdown",
                                 .hint = "ms per batch of each stage and of the time between stages, per cell: the "
                                         "stacked bar's data. No chart in this workbook: its writer draws scatter "
                                         "charts only; the stacked bars are pipeline-stages.png/.svg and the HTML "
                                         "page's Pipeline section."});
    write_definitions(book, all);
    book.close();
    files.written.push_back(file);
    return files;
}

}  // namespace inferbench::report
