#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "analysis/default_run.hpp"
#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
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
    bool run_given = false;  // --run on the command line; else analysis::default_runs
};

// Where the report goes without --out: beside the database `run` writes by default.
std::filesystem::path default_report_dir() { return std::filesystem::path(RunSettings{}.output_dir) / "report"; }

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
    options.out_dir = args.out.empty() ? default_report_dir() : std::filesystem::path(args.out);
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

// Files named before "and N more" in one line of skipped files.
constexpr std::size_t kNamedSkipped = 3;

// "skipped gpu-a.xlsx: no GPU samples stored" for each file, or, where several were skipped for one
// reason (a CPU run has no GPU samples in any group), that reason once: "skipped 12 files, no GPU
// samples stored: gpu-a.xlsx, gpu-b.xlsx, gpu-c.xlsx and 9 more".
std::vector<std::string> skipped_lines(const std::vector<std::string>& skipped) {
    std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // in the order first seen
    for (const auto& entry : skipped) {
        const auto colon = entry.find(": ");
        const std::string file = entry.substr(0, colon);
        const std::string why = colon == std::string::npos ? "" : entry.substr(colon + 2);
        auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == why; });
        if (it == reasons.end()) it = reasons.insert(reasons.end(), {why, {}});
        it->second.push_back(file);
    }
    std::vector<std::string> lines;
    for (const auto& [why, files] : reasons) {
        if (files.size() == 1) {
            lines.push_back(fmt::format("skipped {}{}", files.front(), why.empty() ? "" : ": " + why));
            continue;
        }
        const std::vector<std::string> named(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(
                                                                                std::min(files.size(), kNamedSkipped)));
        lines.push_back(fmt::format("skipped {} files{}: {}{}", files.size(), why.empty() ? "" : ", " + why,
                                    join(named, ", "),
                                    files.size() > named.size() ? fmt::format(" and {} more", files.size() - named.size())
                                                                : ""));
    }
    return lines;
}

int execute(const ReportArgs& args) {
    auto options = options_from(args);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (store::store_file_missing(path))
        throw UserError(
            fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path, store::ResultsStore::Access::read);
    if (!args.run_given) {
        const auto choice = analysis::default_runs(results);
        if (!choice.note.empty() && !args.quiet) fmt::print(stderr, "inferbench: {}\n", choice.note);
        options.filter.runs = choice.runs;
    }
    const auto report = report::write_report(results, options);
    if (args.quiet) return kExitOk;
    for (const auto& line : skipped_lines(report.files.skipped)) print_wrapped(line);
    std::size_t workbooks = 0, images = 0;
    bool side_by_side = false;
    for (const auto& file : report.files.written) {
        const auto ext = file.extension();
        workbooks += ext == ".xlsx";
        images += ext == ".png" || ext == ".svg";
        side_by_side = side_by_side || file.filename() == "comparison.md";
    }
    fmt::print("{}\n", report_headline(report.summary));
    fmt::print("report: {} files in {}: summary.md/.csv/.json{}, {} workbooks, {} images{}\n",
               report.files.written.size(), options.out_dir.string(),
               side_by_side ? ", comparison.md/.csv/.json (hosts and GPUs side by side)" : "", workbooks, images,
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
    add_db_option(*cmd, args->db);
    cmd->add_option("--out", args->out, fmt::format("report folder (default {})", default_report_dir().string()));
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
    cmd->callback([&context, args, cmd] {
        args->run_given = cmd->count("--run") > 0;
        context.action = [args] { return execute(*args); };
    });
}

}  // namespace inferbench::cli
