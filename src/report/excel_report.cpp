#include "report/excel_report.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "core/statistics/statistics.hpp"
#include "core/time_units.hpp"
#include "report/cost_figure.hpp"
#include "report/findings_section.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {
namespace {

using Sheet = XlsxWorkbook::Sheet;
using Row = XlsxWorkbook::Row;
using Col = XlsxWorkbook::Col;
using Column = XlsxWorkbook::Column;
using NumberFormat = XlsxWorkbook::NumberFormat;

// Milliseconds to the microsecond (to the nanosecond below 1 ms), seconds to the millisecond, joules to
// the microjoule, the other units (W, MHz, %, MiB, C, inferences/s, 1/J) to one decimal: the cell keeps
// the full value.
NumberFormat format_for(std::string_view unit) {
    if (unit == "ms") return NumberFormat::decimals3_or_6;
    if (unit == "s") return NumberFormat::decimals3;
    if (unit == "J") return NumberFormat::decimals6;
    return NumberFormat::decimals1;
}

constexpr auto kSeconds = NumberFormat::decimals3;
constexpr auto kMs = NumberFormat::decimals3_or_6;
constexpr auto kCount = NumberFormat::integer;
constexpr auto kOneDecimal = NumberFormat::decimals1;

// Time charts with this many buckets or fewer mark their points as well as joining them.
constexpr std::size_t kMarkedPoints = 40;

std::optional<double> device_ms(std::int64_t ns) {
    return ns == kNotMeasured ? std::nullopt : std::optional<double>(ns_to_ms(ns));
}

// One sheet per benchmark with rows (continued on "label (2)", ... past the sheet's row limit);
// `write(sheet, row, item)` fills one row. Returns whether any benchmark had rows.
template <typename Rows, typename Write>
bool write_row_sheets(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options,
                      const std::vector<Column>& header, Rows rows_of, Write write) {
    const bool any = std::any_of(group.benchmarks.begin(), group.benchmarks.end(),
                                 [&](const ReportBenchmark& b) { return !rows_of(b).empty(); });
    if (!any) return false;
    XlsxWorkbook book(file);
    const auto per_sheet = static_cast<std::size_t>(std::max<std::int64_t>(options.max_rows_per_sheet - 1, 1));
    for (const auto& b : group.benchmarks) {
        const auto& rows = rows_of(b);
        for (std::size_t start = 0, part = 1; start < rows.size(); start += per_sheet, ++part) {
            Sheet sheet = book.add_sheet(part == 1 ? b.label : fmt::format("{} ({})", b.label, part));
            sheet.header(header);
            const std::size_t end = std::min(rows.size(), start + per_sheet);
            for (std::size_t i = start; i < end; ++i) write(sheet, static_cast<Row>(i - start + 1), b, rows[i]);
        }
    }
    book.close();
    return true;
}

// The median time between a series' points (0 with fewer than two).
double median_interval_s(const std::vector<Point>& points) {
    std::vector<double> intervals;
    for (std::size_t i = 1; i < points.size(); ++i) intervals.push_back(points[i].t_s - points[i - 1].t_s);
    std::sort(intervals.begin(), intervals.end());
    return percentile_sorted(intervals, 50);
}

// `value` rounded up to 1, 2 or 5 times a power of ten, so that the chart's title names a plain width.
double round_up_125(double value) {
    const double decade = std::pow(10.0, std::floor(std::log10(value)));
    for (const double step : {1.0, 2.0, 5.0, 10.0})
        if (value <= step * decade * (1 + 1e-9)) return step * decade;
    return 10 * decade;
}

// A bucket at least as wide as the slowest series' median time between points (a 181 ms iteration in
// 100 ms buckets would leave every other bucket empty), so that most buckets hold a mean of each series;
// the charts join the values across the buckets that are still empty (xlsx_parts: dispBlanksAs span).
double bucket_for(const std::vector<std::vector<Point>>& series, double bucket_s) {
    double widest = 0;
    for (const auto& points : series) widest = std::max(widest, median_interval_s(points));
    constexpr double kJitter = 1.1;  // samples every 100 ms that come a little late keep their 100 ms buckets
    return widest > bucket_s * kJitter ? round_up_125(widest) : bucket_s;
}

struct TimeGrid {
    Grid grid;
    double bucket_s = 0;
};

// Where a time sheet's grid would pass the sheet's rows, wider buckets.
TimeGrid grid_within(const std::vector<std::vector<Point>>& series, double bucket_s, std::int64_t max_rows) {
    Grid grid = align_on_grid(series, bucket_s);
    while (static_cast<std::int64_t>(grid.t_s.size()) > max_rows - 1) {
        bucket_s *= std::ceil(static_cast<double>(grid.t_s.size()) / static_cast<double>(max_rows - 1)) + 1;
        grid = align_on_grid(series, bucket_s);
    }
    return {std::move(grid), bucket_s};
}

void write_summary_sheet(XlsxWorkbook& book, const ReportGroup& group) {
    Sheet sheet = book.add_sheet("summary");
    std::vector<Column> header = {{"batch_size", kCount}, "series", "status", {"iterations", kCount}};
    const auto& metrics = batch_metrics();
    for (const auto& m : metrics) header.emplace_back(std::string(m.column), format_for(m.unit));
    const auto gflops_col = static_cast<Col>(header.size());
    header.emplace_back("GFLOP_per_inference", NumberFormat::decimals3);
    header.emplace_back("GFLOP_per_inference_note");  // the bound and node counts where not a total
    const auto stop_col = static_cast<Col>(header.size());
    for (const char* name : {"convergence", "stop_reason"}) header.emplace_back(name);
    for (const char* name : {"mean_ci95_low_ms", "mean_ci95_high_ms"}) header.emplace_back(name, kMs);
    sheet.header(header);
    std::vector<bool> has_values(metrics.size(), false);
    Row row = 1;
    for (const auto& b : group.benchmarks) {
        const auto& s = b.summary;
        sheet.number(row, 0, static_cast<double>(s.benchmark.batch_size));
        sheet.text(row, 1, b.label);
        sheet.text(row, 2, to_string(s.benchmark.status));
        if (s.e2e.count > 0) sheet.number(row, 3, static_cast<double>(s.e2e.count));
        for (std::size_t m = 0; m < metrics.size(); ++m) {
            const auto value = metrics[m].value(s);
            sheet.number(row, static_cast<Col>(4 + m), value);
            has_values[m] = has_values[m] || value.has_value();
        }
        const GflopsFigure gflops = gflops_figure(s.model);
        sheet.number(row, gflops_col, gflops.gflops);
        if (!gflops.bound.empty()) sheet.text(row, static_cast<Col>(gflops_col + 1), gflops.text);
        sheet.text(row, stop_col, convergence_label(s.benchmark.convergence));
        if (!s.benchmark.stop_reason.empty()) sheet.text(row, static_cast<Col>(stop_col + 1), s.benchmark.stop_reason);
        if (s.ci.mean) {
            sheet.number(row, static_cast<Col>(stop_col + 2), ns_to_ms(s.ci.mean->low));
            sheet.number(row, static_cast<Col>(stop_col + 3), ns_to_ms(s.ci.mean->high));
        }
        ++row;
    }
    const auto chart_col = static_cast<Col>(header.size() + 1);
    Row chart_row = 1;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
        if (!has_values[m]) continue;
        XlsxWorkbook::Chart chart;
        chart.title = fmt::format("{} against batch size, {}", metrics[m].title, group.title);
        chart.x_title = "batch size";
        chart.y_title = fmt::format("{} ({})", metrics[m].title, metrics[m].unit);
        chart.markers = true;
        chart.log2_x = true;
        chart.series.push_back(
            {std::string(metrics[m].title), sheet.name(), 1, row - 1, 0, static_cast<Col>(4 + m)});
        book.insert_chart(sheet, chart_row, chart_col, chart);
        chart_row += 19;
    }
}

// One sheet per time metric with data: t_s, then one column per benchmark that has the metric.
void write_time_sheets(XlsxWorkbook& book, const ReportGroup& group, const ExcelOptions& options) {
    for (const auto& metric : time_metrics()) {
        std::vector<std::vector<Point>> series;
        std::vector<Column> header = {{"t_s", kSeconds}};
        for (const auto& b : group.benchmarks) {
            auto points = metric.points(b);
            if (points.empty()) continue;
            series.push_back(std::move(points));
            header.emplace_back(b.label, format_for(metric.unit));
        }
        if (series.empty()) continue;
        const auto [grid, bucket_s] =
            grid_within(series, bucket_for(series, options.summary_bucket_s), options.max_rows_per_sheet);
        Sheet sheet = book.add_sheet(std::string(metric.sheet));
        sheet.header(header);
        for (std::size_t r = 0; r < grid.t_s.size(); ++r) {
            const auto row = static_cast<Row>(r + 1);
            sheet.number(row, 0, grid.t_s[r]);
            for (std::size_t s = 0; s < series.size(); ++s)
                sheet.number(row, static_cast<Col>(s + 1), grid.columns[s][r]);
        }
        XlsxWorkbook::Chart chart;
        chart.markers = grid.t_s.size() <= kMarkedPoints;  // a series of one bucket is a point, not a line
        chart.title = fmt::format("{} over time ({} ms means), {}", metric.title,
                                  fmt::format("{:g}", bucket_s * 1e3), group.title);
        chart.x_title = time_axis_label(group.clock_from_zero);
        chart.y_title = fmt::format("{} ({})", metric.title, metric.unit);
        const auto last = static_cast<Row>(grid.t_s.size());
        for (std::size_t s = 0; s < series.size(); ++s)
            chart.series.push_back({header[s + 1].title, sheet.name(), 1, last, 0, static_cast<Col>(s + 1)});
        book.insert_chart(sheet, 1, static_cast<Col>(header.size() + 1), chart);
    }
}

}  // namespace

bool write_latency_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options) {
    return write_row_sheets(
        group, file, options,
        {{"t_s", kSeconds}, {"e2e_ms", kMs}, {"h2d_ms", kMs}, {"compute_ms", kMs}, {"d2h_ms", kMs}, {"queue_ms", kMs}},
        [](const ReportBenchmark& b) -> const std::vector<IterationRecord>& { return b.iterations; },
        [](Sheet& sheet, Row row, const ReportBenchmark& b, const IterationRecord& it) {
            sheet.number(row, 0, b.seconds(it.start_ns));
            sheet.number(row, 1, ns_to_ms(it.e2e_ns));
            sheet.number(row, 2, device_ms(it.h2d_ns));
            sheet.number(row, 3, device_ms(it.compute_ns));
            sheet.number(row, 4, device_ms(it.d2h_ns));
            sheet.number(row, 5, device_ms(it.queue_ns));  // scheduled arrival to start (the load scenarios)
        });
}

bool write_gpu_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options) {
    return write_row_sheets(
        group, file, options,
        {{"t_s", kSeconds}, "phase", {"gpu", kCount}, {"power_W", kOneDecimal}, {"temp_C", kOneDecimal},
         {"sm_clock_MHz", kOneDecimal}, {"mem_clock_MHz", kOneDecimal}, {"gpu_util_pct", kOneDecimal},
         {"mem_util_pct", kOneDecimal}, {"fb_used_MiB", kOneDecimal}, "throttle_reasons"},
        [](const ReportBenchmark& b) -> const std::vector<GpuSample>& { return b.gpu; },
        [](Sheet& sheet, Row row, const ReportBenchmark& b, const GpuSample& s) {
            sheet.number(row, 0, b.seconds(s.t_ns));
            sheet.text(row, 1, to_string(s.phase));
            sheet.number(row, 2, static_cast<double>(s.gpu_index));
            sheet.number(row, 3, s.power_w);
            sheet.number(row, 4, s.temperature_c);
            sheet.number(row, 5, s.sm_clock_mhz);
            sheet.number(row, 6, s.memory_clock_mhz);
            sheet.number(row, 7, s.gpu_util_pct);
            sheet.number(row, 8, s.memory_util_pct);
            sheet.number(row, 9, s.fb_used_mib);
            if (s.clock_event_reasons) sheet.text(row, 10, clock_event::describe(*s.clock_event_reasons));
        });
}

bool write_cpu_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options) {
    return write_row_sheets(
        group, file, options,
        {{"t_s", kSeconds}, "phase", {"process_cpu_pct", kOneDecimal}, {"rss_MiB", kOneDecimal},
         {"host_cpu_pct", kOneDecimal}, {"host_mem_used_MiB", kOneDecimal}},
        [](const ReportBenchmark& b) -> const std::vector<CpuSample>& { return b.cpu; },
        [](Sheet& sheet, Row row, const ReportBenchmark& b, const CpuSample& s) {
            sheet.number(row, 0, b.seconds(s.t_ns));
            sheet.text(row, 1, to_string(s.phase));
            sheet.number(row, 2, s.process_cpu_pct);
            sheet.number(row, 3, s.process_rss_mib);
            sheet.number(row, 4, s.host_cpu_pct);
            sheet.number(row, 5, s.host_memory_used_mib);
        });
}

bool write_summary_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options) {
    const bool any = std::any_of(group.benchmarks.begin(), group.benchmarks.end(),
                                 [](const ReportBenchmark& b) { return b.has_data(); });
    if (!any) return false;
    // Small (one row per batch size, 100 ms means): the charts carry the values they show.
    XlsxWorkbook book(file, {.chart_values = true});
    write_summary_sheet(book, group);
    write_time_sheets(book, group, options);
    std::vector<std::int64_t> ids;
    for (const auto& b : group.benchmarks) ids.push_back(b.summary.benchmark.benchmark_id);
    write_findings_sheet(book, findings_of(options.findings, ids));
    book.close();
    return true;
}

ReportFiles write_excel_workbooks(const ReportGroup& group, const std::filesystem::path& dir,
                                  const ExcelOptions& options) {
    using Writer = bool (*)(const ReportGroup&, const std::filesystem::path&, const ExcelOptions&);
    struct Kind {
        const char* prefix;
        Writer write;
        const char* why_not;
    };
    static constexpr Kind kinds[] = {
        {"latency", &write_latency_workbook, "no iterations stored (failed, skipped, or imported as aggregates)"},
        {"gpu", &write_gpu_workbook, "no GPU samples stored"},
        {"cpu", &write_cpu_workbook, "no CPU samples stored"},
        {"summary", &write_summary_workbook, "nothing measured"},
    };
    ReportFiles files;
    for (const auto& kind : kinds) {
        const auto file = dir / fmt::format("{}-{}.xlsx", kind.prefix, group.key);
        if (kind.write(group, file, options)) {
            files.written.push_back(file);
        } else {
            // A workbook of an earlier report in the same folder would now describe other data.
            std::error_code ignored;
            std::filesystem::remove(file, ignored);
            files.skipped.push_back(fmt::format("{}: {}", file.filename().string(), kind.why_not));
        }
    }
    return files;
}

}  // namespace inferbench::report
