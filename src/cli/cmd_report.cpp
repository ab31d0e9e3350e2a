#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/units.hpp"
#include "report/report_writer.hpp"

namespace inferbench::cli {
namespace {

struct ReportArgs {
    std::string db;
    std::string out;
    report::ReportFilter filter;
    std::vector<std::string> batches;
    ImageFormatArgs formats;
    int width = report::PlotSize{}.width_px;
    int height = report::PlotSize{}.height_px;
    int dpi = report::PlotSize{}.dpi;
    bool clock_from_zero = true;
    bool no_excel = false, no_plots = false, no_html = false;
    bool quiet = false;
};

report::ReportOptions options_from(const ReportArgs& args) {
    report::ReportOptions options;
    options.filter = cleaned_filter(args.filter, args.batches);
    options.plot.formats = image_formats(args.formats, "report");
    const auto check_range = [](std::string_view flag, int value, int low, int high) {
        if (value < low || value > high)
            throw UserError(fmt::format("{} {}: must be between {} and {}", flag, value, low, high));
    };
    check_range("--width", args.width, 100, 20000);
    check_range("--height", args.height, 100, 20000);
    check_range("--dpi", args.dpi, 24, 1200);
    options.plot.size = {args.width, args.height, args.dpi};
    options.out_dir =
        args.out.empty() ? std::filesystem::path(RunSettings{}.output_dir) / "report" : std::filesystem::path(args.out);
    options.excel = !args.no_excel;
    options.plots = !args.no_plots && !options.plot.formats.empty();
    options.html = !args.no_html;
    options.clock_from_zero = args.clock_from_zero;
    return options;
}

// "12 benchmarks: 10 ok, 1 failed, 1 skipped": the table itself is in the files.
std::string report_headline(const report::Table& summary) {
    const auto status = std::find_if(summary.columns.begin(), summary.columns.end(),
                                     [](const report::Column& c) { return c.key == "status"; });
    std::map<std::string, std::size_t> counts;
    if (status != summary.columns.end()) {
        const auto c = static_cast<std::size_t>(status - summary.columns.begin());
        for (const auto& row : summary.rows) ++counts[report::cell_display_text(row[c], *status)];
    }
    std::vector<std::string> parts;
    for (const auto& [name, count] : counts) parts.push_back(fmt::format("{} {}", count, name));
    return fmt::format("{} benchmark{}: {}", summary.rows.size(), summary.rows.size() == 1 ? "" : "s",
                       join(parts, ", "));
}

int execute(const ReportArgs& args) {
    const auto options = options_from(args);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (!std::filesystem::exists(path))
        throw UserError(
            fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path, store::ResultsStore::Access::read);
    const auto report = report::write_report(results, options);
    if (args.quiet) return kExitOk;
    for (const auto& skipped : report.files.skipped) fmt::print("skipped {}\n", skipped);
    std::size_t workbooks = 0, images = 0;
    for (const auto& file : report.files.written) {
        const auto ext = file.extension();
        workbooks += ext == ".xlsx";
        images += ext == ".png" || ext == ".svg";
    }
    fmt::print("{}\n", report_headline(report.summary));
    fmt::print("report: {} files in {}: summary.md/.csv/.json, {} workbooks, {} images{}\n",
               report.files.written.size(), options.out_dir.string(), workbooks, images,
               options.html ? ", report.html" : "");
    if (options.html) fmt::print("open {}\n", (options.out_dir / "report.html").string());
    return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<ReportArgs>();
    CLI::App* cmd = app.add_subcommand(
        "report",
        "write the summary table (md, csv, json), Excel workbooks, PNG/SVG figures and an HTML page of stored "
        "benchmarks into one folder");
    cmd->add_option("--db", args->db, "results database (default inferbench-results/results.db)");
    cmd->add_option("--out", args->out, "report folder (default inferbench-results/report)");
    add_selection_options(*cmd, args->filter, args->batches);
    add_image_format_option(*cmd, args->formats);
    cmd->add_option("--width", args->width, "figure width, pixels")->capture_default_str();
    cmd->add_option("--height", args->height, "figure height, pixels")->capture_default_str();
    cmd->add_option("--dpi", args->dpi, "figure resolution (scales fonts and lines; 96 = 1:1)")->capture_default_str();
    cmd->add_flag("--clock-from-zero,!--no-clock-from-zero", args->clock_from_zero,
                  "time axes in seconds since each benchmark's first measured iteration (default), or CLOCK_MONOTONIC");
    cmd->add_flag("--no-excel", args->no_excel, "write no Excel workbooks");
    cmd->add_flag("--no-plots", args->no_plots, "draw no figures (gnuplot is then not needed)");
    cmd->add_flag("--no-html", args->no_html, "write no HTML page");
    cmd->add_flag("--quiet", args->quiet, "print nothing but errors");
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
