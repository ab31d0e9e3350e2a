#include "report/report_writer.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "report/html_page.hpp"
#include "report/html_report.hpp"
#include "report/report_charts.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {

ReportResult write_report(const store::ResultsStore& results, const ReportOptions& options) {
    const auto selected = select_benchmarks(results, options.filter);
    if (options.plots && !gnuplot_available())
        throw EnvironmentError(
            "gnuplot not found: install Debian's gnuplot-nox (scripts/setup.sh does), set "
            "INFERBENCH_GNUPLOT to a gnuplot executable, or pass --no-plots");
    const auto& dir = options.out_dir;
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error)
        throw EnvironmentError(fmt::format("{}: cannot create the report folder: {}", dir.string(), error.message()));
    remove_stale_staging(dir);

    // One pass over the store: each group's rows are read once and drawn into every output that needs
    // them (workbooks and figures on the chosen clock, the page's charts from zero), then released.
    ReportFiles group_files;
    std::vector<ChartGroup> charts;
    const auto selection = load_selection(results, selected, [&](ReportGroup& group) {
        if (options.html) charts.push_back({group.title, group_charts(group)});
        if (!options.excel && !options.plots) return;
        set_clock(group, options.clock_from_zero);
        if (options.excel) group_files.add(write_excel_workbooks(group, dir, options.excel_options));
        if (options.plots) group_files.add(write_group_plots(group, dir, options.plot));
    });
    const auto summaries = selection.summaries();

    ReportResult result;
    result.summary = summary_table(summaries);
    for (const auto& [name, format] : {std::pair{"summary.md", Format::markdown}, std::pair{"summary.csv", Format::csv},
                                       std::pair{"summary.json", Format::json}}) {
        write_text_file(dir / name, render(result.summary, format));
        result.files.written.push_back(dir / name);
    }
    result.files.add(std::move(group_files));
    if (options.plots)
        result.files.add(write_throughput_latency_plots(group_benchmarks(selected), summaries, dir, options.plot));
    if (options.html) {
        write_text_file(dir / "report.html", render_html_report(selection, charts, roofline_section(results, summaries)));
        result.files.written.push_back(dir / "report.html");
    }
    return result;
}

}  // namespace inferbench::report
