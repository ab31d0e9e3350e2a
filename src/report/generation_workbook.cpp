#include "report/generation_workbook.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

using Sheet = XlsxWorkbook::Sheet;
using Row = XlsxWorkbook::Row;
using Col = XlsxWorkbook::Col;
using NumberFormat = XlsxWorkbook::NumberFormat;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr const char* kStepsSheet = "Generation steps";

}  // namespace

NumberFormat column_format(std::string_view key) {
    if (key.ends_with("_ms")) return NumberFormat::decimals3_or_6;
    if (key.ends_with("_tokens") || key == "batch_size" || key == "generations") return NumberFormat::integer;
    if (key.ends_with("_per_s") || key.ends_with("_mib") || key.ends_with("_pct") || key.ends_with("_bound"))
        return NumberFormat::decimals1;
    return NumberFormat::general;
}

void write_table_cell(Sheet& sheet, Row row, Col col, const Cell& cell) {
    std::visit(
        [&](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, std::string>) sheet.text(row, col, value);
            else if constexpr (std::is_same_v<T, std::int64_t>) sheet.number(row, col, static_cast<double>(value));
            else if constexpr (std::is_same_v<T, double>) sheet.number(row, col, value);
            else if constexpr (std::is_same_v<T, Duration>) sheet.number(row, col, ns_to_ms(value.ns));
            else if constexpr (std::is_same_v<T, bool>) sheet.text(row, col, value ? "yes" : "no");
            else if constexpr (std::is_same_v<T, Annotated>) sheet.number(row, col, value.value);
        },
        cell);
}

namespace {

// A charted metric, its bound's column, and the axis title with the unit.
struct ChartedMetric {
    const char* key;
    const char* bound_key;
    const char* title;
};
constexpr ChartedMetric kCharted[] = {
    {"ttft_p50_ms", "ttft_floor_ms", "TTFT p50 (ms)"},
    {"tpot_p50_ms", "tpot_floor_ms", "TPOT p50 (ms)"},
    {"decode_tokens_per_s", "decode_tokens_per_s_bound", "decode tokens/s"},
};

Col column_of(const std::vector<XlsxWorkbook::Column>& header, std::string_view key) {
    const auto it = std::find_if(header.begin(), header.end(), [&](const auto& c) { return c.title == key; });
    return static_cast<Col>(it - header.begin());
}

// Adjacent rows of one series (same model, backend, precision, device, options and lengths): sheet rows [first, last].
struct SeriesRun {
    std::string name;
    Row first = 1, last = 1;
};

std::vector<SeriesRun> series_runs(std::span<const GenerationRow> rows) {
    const bool several = several_runs(rows);
    std::vector<SeriesRun> out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto name = series_with_lengths(rows[i].summary.benchmark, several);
        const auto row = static_cast<Row>(i + 1);
        if (out.empty() || out.back().name != name) out.push_back({name, row, row});
        out.back().last = row;
    }
    return out;
}

// Whether every row of the run has a number in the column (a text such as "not defined" is no point).
bool all_numbers(const Table& table, std::size_t column, const SeriesRun& run) {
    for (Row r = run.first; r <= run.last; ++r) {
        const Cell& cell = table.rows[r - 1][column];
        if (!std::holds_alternative<Duration>(cell) && !std::holds_alternative<double>(cell)) return false;
    }
    return true;
}

void insert_charts(XlsxWorkbook& book, Sheet& sheet, std::span<const GenerationRow> rows, const Table& table,
                   const std::vector<XlsxWorkbook::Column>& header) {
    const auto runs = series_runs(rows);
    const Col batch = column_of(header, "batch_size");
    Row at = 1;
    for (const auto& metric : kCharted) {
        XlsxWorkbook::Chart chart;
        chart.title = fmt::format("{} against batch size", metric.title);
        chart.x_title = "batch size";
        chart.y_title = metric.title;
        chart.markers = true;
        chart.log2_x = true;
        const Col y = column_of(header, metric.key);
        const Col bound_col = column_of(header, metric.bound_key);
        for (const auto& run : runs) {
            if (!all_numbers(table, y, run)) continue;
            chart.series.push_back({run.name, sheet.name(), run.first, run.last, batch, y});
            if (all_numbers(table, bound_col, run))
                chart.series.push_back({run.name + " bound", sheet.name(), run.first, run.last, batch, bound_col});
        }
        if (chart.series.empty()) continue;
        book.insert_chart(sheet, at, static_cast<Col>(header.size() + 1), chart);
        at += 19;
    }
}

}  // namespace

void write_definitions(XlsxWorkbook& book, const Table& table) {
    Sheet sheet = book.add_sheet("Definitions");
    sheet.header({"column", "definition"}, 24);
    Row row = 1;
    for (const auto& column : table.columns) {
        if (column.hint.empty()) continue;
        sheet.text(row, 0, column.key);
        sheet.text(row, 1, column.hint);
        ++row;
    }
}

bool write_generation_workbook(std::span<const GenerationRow> rows, const std::filesystem::path& file) {
    if (rows.empty()) return false;
    const Table table = generation_report_table(rows);
    XlsxWorkbook book(file, {.chart_values = true});  // one row per cell: small
    Sheet sheet = book.add_sheet("Generation");
    std::vector<XlsxWorkbook::Column> header;
    for (const auto& column : table.columns) header.emplace_back(column.key, column_format(column.key));
    sheet.header(header);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const auto row = static_cast<Row>(r + 1);
        for (std::size_t c = 0; c < table.columns.size(); ++c) write_table_cell(sheet, row, static_cast<Col>(c), table.rows[r][c]);
    }
    insert_charts(book, sheet, rows, table, header);
    write_definitions(book, table);
    book.close();
    return true;
}

struct GenerationStepsWorkbook::Writing {
    std::optional<Sheet> sheet;
    int part = 0;
    Row next_row = 1;
};

GenerationStepsWorkbook::GenerationStepsWorkbook(std::filesystem::path file, const ExcelOptions& options)
    : file_(std::move(file)),
      rows_per_sheet_(std::max<std::int64_t>(options.max_rows_per_sheet - 1, 1)),
      writing_(std::make_unique<Writing>()) {}

GenerationStepsWorkbook::~GenerationStepsWorkbook() = default;

void GenerationStepsWorkbook::next_sheet() {
    if (!book_) book_ = std::make_unique<XlsxWorkbook>(file_);
    ++writing_->part;
    writing_->sheet = book_->add_sheet(writing_->part == 1 ? kStepsSheet : fmt::format("{} ({})", kStepsSheet, writing_->part));
    writing_->sheet->header({{"benchmark_id", NumberFormat::integer},
                             "benchmark",
                             {"generation", NumberFormat::integer},
                             {"step", NumberFormat::integer},
                             {"since_generation_start_ms", NumberFormat::decimals3_or_6},
                             {"step_ms", NumberFormat::decimals3_or_6},
                             {"kv_cache_MiB", NumberFormat::decimals3}});
    writing_->next_row = 1;
}

void GenerationStepsWorkbook::add(const ReportGroup& group) {
    for (const auto& b : group.benchmarks) {
        const std::string name = fmt::format("{}, {}", group.title, b.label);
        std::int64_t start_ns = 0;  // of the generation being written: its step 0's end less its duration
        for (const auto& step : b.steps) {
            if (!writing_->sheet || writing_->next_row > rows_per_sheet_) next_sheet();
            if (step.step == 0) start_ns = step.end_ns - step.duration_ns;
            Sheet& sheet = *writing_->sheet;
            const Row row = writing_->next_row++;
            sheet.number(row, 0, static_cast<double>(b.summary.benchmark.benchmark_id));
            sheet.text(row, 1, name);
            sheet.number(row, 2, static_cast<double>(step.iteration));
            sheet.number(row, 3, static_cast<double>(step.step));
            sheet.number(row, 4, ns_to_ms(step.end_ns - start_ns));
            sheet.number(row, 5, ns_to_ms(step.duration_ns));
            sheet.number(row, 6, static_cast<double>(step.kv_cache_bytes) / kMiB);
        }
    }
}

bool GenerationStepsWorkbook::close() {
    if (!book_) return false;
    book_->close();
    book_.reset();
    return true;
}

ReportFiles generation_workbook_files(std::span<const GenerationRow> rows, GenerationStepsWorkbook& steps,
                                      const std::filesystem::path& dir) {
    ReportFiles files;
    const auto outcome = [&](const std::filesystem::path& file, bool written) {
        if (written) {
            files.written.push_back(file);
            return;
        }
        std::error_code ignored;  // an earlier report's workbook would describe other data
        std::filesystem::remove(file, ignored);
    };
    outcome(dir / "generation.xlsx", write_generation_workbook(rows, dir / "generation.xlsx"));
    outcome(steps.file(), steps.close());
    return files;
}

}  // namespace inferbench::report
