#include "report/fleet_comparison.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "report/generation_workbook.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

constexpr const char* kStem = "comparison";

bool row_on_two_sides(const Comparison& comparison) {
    return std::any_of(comparison.rows.begin(), comparison.rows.end(), [&](const ComparisonRow& row) {
        return std::count_if(row.cells.begin(), row.cells.end(), [](const auto& cell) { return cell.has_value(); }) > 1;
    });
}

// A table as one sheet: a header of its keys, then its rows.
void write_sheet(XlsxWorkbook& book, const std::string& name, const Table& table) {
    auto sheet = book.add_sheet(name);
    std::vector<XlsxWorkbook::Column> header;
    for (const auto& column : table.columns) header.emplace_back(column.key, column_format(column.key));
    sheet.header(header);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            write_table_cell(sheet, static_cast<XlsxWorkbook::Row>(r + 1), static_cast<XlsxWorkbook::Col>(c),
                             table.rows[r][c]);
}

Table warnings_table(const Comparison& comparison) {
    Table table;
    table.name = "comparison_warnings";
    table.columns = {{"warning", "warning"}};
    for (auto& line : comparison_warnings(comparison)) table.rows.push_back({std::move(line)});
    return table;
}

void write_workbook(const Comparison& comparison, const std::filesystem::path& file) {
    XlsxWorkbook book(file);
    write_sheet(book, "Side by side", comparison_table(comparison));
    write_sheet(book, "Sides", comparison_sides_table(comparison));
    write_sheet(book, "Warnings", warnings_table(comparison));
    book.close();
}

}  // namespace

std::optional<Comparison> report_comparison(const std::string& db, const std::vector<store::RunRecord>& runs,
                                            const std::vector<analysis::BenchmarkSummary>& cells) {
    std::vector<ComparisonSource> sources = {{.db = db, .runs = runs, .summaries = cells}};
    std::optional<Comparison> comparison;
    try {
        comparison = build_comparison(std::move(sources), "");
    } catch (const UserError&) {  // nothing measured: nothing to put side by side
        return std::nullopt;
    }
    if (!comparison->spans_hosts_or_gpus() || !row_on_two_sides(*comparison)) return std::nullopt;
    return comparison;
}

ReportFiles write_comparison_files(const std::optional<Comparison>& comparison, const std::filesystem::path& dir,
                                   bool excel) {
    ReportFiles files;
    const auto xlsx = dir / (std::string(kStem) + ".xlsx");
    if (!comparison) {
        std::error_code ignored;  // an earlier report's files would describe other data
        for (const char* extension : {".md", ".csv", ".json", ".xlsx"})
            std::filesystem::remove(dir / (std::string(kStem) + extension), ignored);
        return files;
    }
    for (const auto& [extension, format] :
         {std::pair{".md", Format::markdown}, std::pair{".csv", Format::csv}, std::pair{".json", Format::json}}) {
        const auto file = dir / (std::string(kStem) + extension);
        write_text_file(file, render_comparison(*comparison, format));
        files.written.push_back(file);
    }
    if (excel) {
        write_workbook(*comparison, xlsx);
        files.written.push_back(xlsx);
    } else {
        std::error_code ignored;
        std::filesystem::remove(xlsx, ignored);
    }
    return files;
}

void comparison_section(HtmlPage& page, const Comparison& comparison) {
    page.open_section("Side by side", "side-by-side");
    page.paragraph(
        "The same model, precision and batch size on each host's device. [n] x: throughput relative to [1]; [n] eff "
        "x: inferences per joule relative to [1]; [n] verdict: mean latency against [1]'s. Energy only where the "
        "side's telemetry measured power; settings differ: a cell measured under other settings than the reference's.",
        "hint");
    page.list(comparison_legend(comparison));
    if (const auto warnings = comparison_warnings(comparison); !warnings.empty()) {
        page.paragraph("Warnings:");
        page.list(warnings);
    }
    page.table(without_empty_columns(comparison_table(comparison)));
    page.close_section();
}

}  // namespace inferbench::report
