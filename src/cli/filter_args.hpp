// The list arguments the reading commands share (report, compare, roofline): comma lists split and
// checked the same way everywhere, batch sizes and image formats parsed once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/selection.hpp"

namespace CLI {
class App;
}

namespace inferbench::cli {

// CLI11 splits at commas; "1, 8" leaves spaces, and an empty item says something was mistyped:
// UserError naming `flag`.
std::vector<std::string> list_items(const std::vector<std::string>& values, std::string_view flag);

// `raw`'s lists cleaned, plus `batches` ("--batch" texts) parsed; runs kept as given.
report::ReportFilter cleaned_filter(const report::ReportFilter& raw, const std::vector<std::string>& batches);

// --run, --device, --model, --backend, --precision and --batch of a command that reads a selection of
// stored benchmarks (report, roofline, explain): into `filter`, the batch texts into `batches` for
// cleaned_filter().
void add_selection_options(CLI::App& cmd, report::ReportFilter& filter, std::vector<std::string>& batches);

// --db of a command that reads or imports results (summary, explain, report, roofline, import): the database
// `run` writes when given none, its default said from the settings' (core/plan/settings: db, output_dir).
void add_db_option(CLI::App& cmd, std::string& db);

// The figure formats of a command that draws: `--image-format png,svg`. `--format` names the table
// format everywhere, so its old use for figures is still taken here, with one deprecation line.
struct ImageFormatArgs {
    std::vector<std::string> names;         // --image-format; none given means png and svg
    std::vector<std::string> old_spelling;  // --format
};
void add_image_format_option(CLI::App& cmd, ImageFormatArgs& args);

// "png", "svg"; UserError for anything else or for both spellings at once. `command` names the
// subcommand in the deprecation line on stderr.
std::vector<report::ImageFormat> image_formats(const ImageFormatArgs& args, std::string_view command);

}  // namespace inferbench::cli
