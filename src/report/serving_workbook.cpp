#include "report/serving_workbook.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/serving_figures.hpp"
#include "core/time_units.hpp"
#include "report/generation_workbook.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

using Sheet = XlsxWorkbook::Sheet;
using Row = XlsxWorkbook::Row;
using Col = XlsxWorkbook::Col;
using NumberFormat = XlsxWorkbook::NumberFormat;

constexpr std::string_view kUnknown = "unknown";

// The sheet's header from a table's columns, with `extra` columns after them.
std::vector<XlsxWorkbook::Column> header_of(const Table& table, std::vector<XlsxWorkbook::Column> extra = {}) {
    std::vector<XlsxWorkbook::Column> header;
    for (const auto& column : table.columns) header.emplace_back(column.key, column_format(column.key));
    header.insert(header.end(), extra.begin(), extra.end());
    return header;
}

void write_rows(Sheet& sheet, const Table& table) {
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            write_table_cell(sheet, static_cast<Row>(r + 1), static_cast<Col>(c), table.rows[r][c]);
}

Col column_of(const Table& table, std::string_view key) {
    const auto it = std::find_if(table.columns.begin(), table.columns.end(), [&](const Column& c) { return c.key == key; });
    return static_cast<Col>(it - table.columns.begin());
}

bool all_numbers(const Table& table, Col column, Row first, Row last) {
    for (Row r = first; r <= last; ++r) {
        const Cell& cell = table.rows[r - 1][column];
        if (!std::holds_alternative<Duration>(cell) && !std::holds_alternative<double>(cell)) return false;
    }
    return true;
}

// The chart columns of a sweep's rows: the throughput on the sweep's Pareto axis where the point is placed, the
// same on the front only, at the knee only; nothing elsewhere (an empty cell, which a chart skips).
std::vector<std::array<std::optional<double>, 3>> chart_values(const SweepView& view) {
    std::vector<std::array<std::optional<double>, 3>> rows(view.sweep.points.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& p = view.sweep.points[i];
        const auto y = analysis::throughput_on(view.front.axis, p);
        if (!y || !p.user_tokens_per_s) continue;
        const bool front = std::find(view.front.points.begin(), view.front.points.end(), i) != view.front.points.end();
        rows[i] = {y, front ? y : std::nullopt, view.knee.point == i ? y : std::nullopt};
    }
    return rows;
}

// A sweep's charts, over its rows [first, last] of the Sweep sheet: the Pareto chart, TTFT and TPOT against load.
std::vector<XlsxWorkbook::Chart> sweep_charts(const SweepView& view, const Table& table, const std::string& sheet,
                                              Row first, Row last) {
    const auto y_col = static_cast<Col>(table.columns.size());
    const Col x_col = column_of(table, "user_tokens_per_s_p50"), load_col = column_of(table, "load");
    const auto axis = std::string(to_string(view.front.axis));
    std::vector<XlsxWorkbook::Chart> charts;
    XlsxWorkbook::Chart pareto{.title = fmt::format("{}: tokens/s per user against {}", view.sweep.name, axis),
                               .x_title = "output tokens/s per user (median request)", .y_title = axis,
                               .markers = true, .log2_x = false, .series = {}};
    pareto.series = {{"every load", sheet, first, last, x_col, y_col},
                     {"Pareto front", sheet, first, last, x_col, static_cast<Col>(y_col + 1)}};
    if (view.knee.point)
        pareto.series.push_back({view.knee.next ? "goodput knee" : "knee (lower bound)", sheet, first, last, x_col,
                                 static_cast<Col>(y_col + 2)});
    charts.push_back(std::move(pareto));
    for (const std::string what : {"ttft", "tpot"}) {
        XlsxWorkbook::Chart latency{.title = fmt::format("{}: {} p50 and p99 against {}", view.sweep.name,
                                                         what == "ttft" ? "TTFT" : "TPOT", to_string(view.sweep.kind)),
                                    .x_title = std::string(load_unit(view.sweep.kind)), .y_title = "ms",
                                    .markers = true, .log2_x = view.sweep.kind == analysis::LoadKind::concurrency,
                                    .series = {}};
        for (const char* statistic : {"p50", "p99"}) {
            const Col col = column_of(table, fmt::format("{}_{}_ms", what, statistic));
            if (all_numbers(table, col, first, last)) latency.series.push_back({statistic, sheet, first, last, load_col, col});
        }
        if (!latency.series.empty()) charts.push_back(std::move(latency));
    }
    return charts;
}

// The Sweep sheet: the sweep table with the chart columns after it, row by row, then each sweep's charts.
void write_sweep_sheet(XlsxWorkbook& book, std::span<const SweepView> views) {
    const Table table = sweep_table(views);
    Sheet sheet = book.add_sheet("Sweep");
    sheet.header(header_of(table, {{"pareto_y_tokens_per_s", NumberFormat::decimals1},
                                   {"front_y_tokens_per_s", NumberFormat::decimals1},
                                   {"knee_y_tokens_per_s", NumberFormat::decimals1}}));
    const auto y_col = static_cast<Col>(table.columns.size());
    Row row = 1;
    std::vector<XlsxWorkbook::Chart> charts;
    for (const auto& view : views) {
        const Row first = row;
        for (const auto& values : chart_values(view)) {
            for (std::size_t c = 0; c < table.columns.size(); ++c)
                write_table_cell(sheet, row, static_cast<Col>(c), table.rows[row - 1][c]);
            for (std::size_t k = 0; k < values.size(); ++k) sheet.number(row, static_cast<Col>(y_col + k), values[k]);
            ++row;
        }
        auto made = sweep_charts(view, table, sheet.name(), first, row - 1);
        charts.insert(charts.end(), std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
    }
    Row at = 1;
    for (const auto& chart : charts) {
        book.insert_chart(sheet, at, static_cast<Col>(y_col + 4), chart);
        at += 19;
    }
}

const std::vector<XlsxWorkbook::Column>& request_columns() {
    static const std::vector<XlsxWorkbook::Column> columns = {
        {"benchmark_id", NumberFormat::integer}, {"request", NumberFormat::integer}, "warmup", "outcome",
        {"http_status", NumberFormat::integer}, {"scheduled_ms", NumberFormat::decimals3}, {"send_delay_ms", NumberFormat::decimals3},
        {"ttft_ms", NumberFormat::decimals3}, {"tpot_ms", NumberFormat::decimals3}, {"e2e_ms", NumberFormat::decimals3},
        {"input_tokens", NumberFormat::integer}, {"output_tokens", NumberFormat::integer}, "output_tokens_from",
        {"cached_tokens", NumberFormat::integer}, "finish_reason", {"server_prompt_ms", NumberFormat::decimals3},
        {"server_generation_ms", NumberFormat::decimals3}, {"chunks", NumberFormat::integer}, "error"};
    return columns;
}

void count_or_unknown(Sheet& sheet, Row row, Col col, std::int64_t value) {
    if (value < 0) sheet.text(row, col, kUnknown);
    else sheet.number(row, col, static_cast<double>(value));
}

void ms_or(Sheet& sheet, Row row, Col col, const std::optional<std::int64_t>& ns, std::string_view missing) {
    if (ns) sheet.number(row, col, ns_to_ms(*ns));
    else sheet.text(row, col, missing);
}

void write_request(Sheet& sheet, Row row, std::int64_t benchmark_id, std::int64_t origin_ns, const ServedRequest& r) {
    const RequestFigures f = request_figures(r);
    sheet.number(row, 0, static_cast<double>(benchmark_id));
    sheet.number(row, 1, static_cast<double>(r.index));
    sheet.text(row, 2, r.warmup ? "yes" : "no");
    sheet.text(row, 3, to_string(r.outcome));
    if (r.http_status > 0) sheet.number(row, 4, static_cast<double>(r.http_status));
    else sheet.text(row, 4, "no answer");
    sheet.number(row, 5, ns_to_ms(r.scheduled_ns - origin_ns));
    sheet.number(row, 6, ns_to_ms(f.send_delay_ns));
    const auto missing = r.outcome == RequestOutcome::ok ? analysis::kNotDefinedText : std::string_view("failed");
    ms_or(sheet, row, 7, f.ttft_ns, missing);
    ms_or(sheet, row, 8, f.tpot_ns, missing);
    ms_or(sheet, row, 9, f.e2e_ns, missing);
    count_or_unknown(sheet, row, 10, r.input_tokens);
    count_or_unknown(sheet, row, 11, f.output_tokens);
    sheet.text(row, 12, to_string(f.token_source));
    count_or_unknown(sheet, row, 13, r.cached_tokens);
    sheet.text(row, 14, r.finish_reason.empty() ? "none" : r.finish_reason);
    if (r.server_prompt_ms >= 0) sheet.number(row, 15, r.server_prompt_ms);
    else sheet.text(row, 15, "not reported");
    if (r.server_generation_ms >= 0) sheet.number(row, 16, r.server_generation_ms);
    else sheet.text(row, 16, "not reported");
    sheet.number(row, 17, static_cast<double>(r.chunks.size()));
    sheet.text(row, 18, r.error);
}

// A cell's first scheduled request (the zero of its request and chunk times) and its request count, in one pass.
std::pair<std::int64_t, std::int64_t> origin_and_count(const store::ResultsStore& results, std::int64_t id) {
    std::optional<std::int64_t> origin;
    std::int64_t count = 0;
    results.for_each_served_request(id, [&](ServedRequest&& r) {
        origin = origin ? std::min(*origin, r.scheduled_ns) : r.scheduled_ns;
        ++count;
    });
    return {origin.value_or(0), count};
}

// The Requests sheet; returns the chunks counted on the way.
std::int64_t write_requests_sheet(XlsxWorkbook& book, const store::ResultsStore& results,
                                  std::span<const std::pair<std::int64_t, std::int64_t>> cells) {
    Sheet sheet = book.add_sheet("Requests");
    sheet.header(request_columns());
    Row row = 1;
    std::int64_t chunks = 0;
    for (const auto& [id, origin] : cells) {
        results.for_each_served_request(id, [&](ServedRequest&& r) {
            chunks += static_cast<std::int64_t>(r.chunks.size());
            if (row < XlsxWorkbook::kMaxRows) write_request(sheet, row++, id, origin, r);
        });
    }
    return chunks;
}

void write_chunks_sheet(XlsxWorkbook& book, const store::ResultsStore& results,
                        std::span<const std::pair<std::int64_t, std::int64_t>> cells) {
    Sheet sheet = book.add_sheet("Chunks");
    sheet.header({{"benchmark_id", NumberFormat::integer}, {"request", NumberFormat::integer},
                  {"chunk", NumberFormat::integer}, {"arrival_ms", NumberFormat::decimals3},
                  {"gap_ms", NumberFormat::decimals3}, "tokens"});
    Row row = 1;
    for (const auto& [id, origin] : cells) {
        results.for_each_served_request(id, [&](ServedRequest&& r) {
            for (std::size_t c = 0; c < r.chunks.size(); ++c, ++row) {
                const auto& chunk = r.chunks[c];
                sheet.number(row, 0, static_cast<double>(id));
                sheet.number(row, 1, static_cast<double>(r.index));
                sheet.number(row, 2, static_cast<double>(c));
                sheet.number(row, 3, ns_to_ms(chunk.arrival_ns - origin));
                if (c > 0) sheet.number(row, 4, ns_to_ms(chunk.arrival_ns - r.chunks[c - 1].arrival_ns));
                else sheet.text(row, 4, "first chunk");
                if (chunk.tokens >= 0) sheet.number(row, 5, static_cast<double>(chunk.tokens));
                else sheet.text(row, 5, kUnknown);
            }
        });
    }
}

// Definitions of both tables' columns, the request columns', and what was left out.
void write_all_definitions(XlsxWorkbook& book, const Table& serving, const Table& sweep, std::int64_t requests_left_out,
                           std::optional<std::int64_t> chunks_left_out) {
    Table all;
    all.columns = serving.columns;
    for (const auto& column : sweep.columns)
        if (std::none_of(all.columns.begin(), all.columns.end(), [&](const Column& c) { return c.key == column.key; }))
            all.columns.push_back(column);
    const auto add = [&](const char* key, std::string hint) { all.columns.push_back(Column{.key = key, .title = key, .hint = std::move(hint)}); };
    add("scheduled_ms", "Requests: when the request was meant to be sent, from the cell's first scheduled request.");
    add("send_delay_ms", "Requests: sent - scheduled, the wait for a free connection in the client (open loop).");
    add("output_tokens_from", "Requests: where the output count came from: usage (the server's), chunks (their sum), "
                              "unknown.");
    add("pareto_y_tokens_per_s", "Sweep: the throughput on the sweep's Pareto axis (per GPU, else per server) where the "
                                 "point is placed; front_y and knee_y the same on the front and at the knee only.");
    if (requests_left_out > 0)
        add("Requests", fmt::format("{} requests not listed: past a sheet's {} rows", requests_left_out, XlsxWorkbook::kMaxRows - 1));
    if (chunks_left_out)
        add("Chunks", fmt::format("sheet left out: {} chunks, more than the {} rows it takes", *chunks_left_out, kMaxChunkRows));
    write_definitions(book, all);
}

}  // namespace

ReportFiles serving_workbook_files(const store::ResultsStore& results,
                                   std::span<const analysis::BenchmarkSummary> summaries,
                                   std::span<const SweepView> views, const std::filesystem::path& dir,
                                   std::int64_t max_chunk_rows) {
    const auto file = dir / "serving.xlsx";
    const Table serving = serving_table(summaries);
    ReportFiles files;
    if (serving.rows.empty()) {
        std::error_code ignored;  // an earlier report's workbook would describe other data
        std::filesystem::remove(file, ignored);
        return files;
    }
    XlsxWorkbook book(file, {.chart_values = true});  // the sheets with charts are small
    Sheet sheet = book.add_sheet("Serving");
    sheet.header(header_of(serving));
    write_rows(sheet, serving);
    write_sweep_sheet(book, views);
    std::vector<std::pair<std::int64_t, std::int64_t>> cells;  // every stored benchmark of each row, its origin
    std::int64_t requests = 0;
    for (const auto& s : summaries) {
        if (!is_serving(s)) continue;
        for (const auto id : analysis::benchmark_ids(s)) {
            const auto [origin, count] = origin_and_count(results, id);
            cells.emplace_back(id, origin);
            requests += count;
        }
    }
    const std::int64_t chunks = write_requests_sheet(book, results, cells);
    const bool chunks_fit = chunks <= max_chunk_rows;
    if (chunks_fit) write_chunks_sheet(book, results, cells);
    write_all_definitions(book, serving, sweep_table(views),
                          std::max<std::int64_t>(0, requests - static_cast<std::int64_t>(XlsxWorkbook::kMaxRows - 1)),
                          chunks_fit ? std::nullopt : std::optional(chunks));
    book.close();
    files.written.push_back(file);
    return files;
}

}  // namespace inferbench::report
