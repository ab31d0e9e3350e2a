#include "report/report_writer.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "findings/findings.hpp"
#include "report/html_page.hpp"
#include "report/html_report.hpp"
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

    ReportResult result;
    std::vector<analysis::BenchmarkSummary> summaries;
    for (auto& entry : load_report_data(results, selected, false).benchmarks)
        summaries.push_back(std::move(entry.summary));
    result.summary = summary_table(summaries);
    for (const auto& [name, format] : {std::pair{"summary.md", Format::markdown}, std::pair{"summary.csv", Format::csv},
                                       std::pair{"summary.json", Format::json}}) {
        write_text_file(dir / name, render(result.summary, format));
        result.files.written.push_back(dir / name);
    }

    const auto groups = group_benchmarks(selected);
    ExcelOptions excel_options = options.excel_options;
    excel_options.findings = findings::explain(results, selected);
    if (options.excel || options.plots) {
        for (const auto& group : groups) {
            // One group in memory at a time: its iterations may be millions.
            const LoadedGroup loaded = load_group(results, group, summaries, options.clock_from_zero);
            if (options.excel) result.files.add(write_excel_workbooks(loaded, dir, excel_options));
            if (options.plots) result.files.add(write_group_plots(loaded, dir, options.plot));
        }
    }
    if (options.plots) result.files.add(write_throughput_latency_plots(groups, summaries, dir, options.plot));
    if (options.html) {
        write_html_report(results, selected, dir / "report.html", excel_options.findings);
        result.files.written.push_back(dir / "report.html");
    }
    return result;
}

}  // namespace inferbench::report
