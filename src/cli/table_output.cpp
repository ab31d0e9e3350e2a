#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"

namespace inferbench::cli {

void OutputOptions::add_to(CLI::App& command) {
    command.add_option("--format", format, "output format: table, md, csv, json")->capture_default_str();
    command.add_flag("--json", json, "same as --format json");
    command
        .add_option("--columns", columns,
                    "columns to show, in this order, by their CSV/JSON names (e.g. model,mean_ms,throughput_per_s); "
                    "`all`: every column, none left out for the terminal's width")
        ->delimiter(',');
    // `run` has its own --quiet (no progress lines), which also quiets the rest.
    if (command.get_option_no_throw("--quiet") == nullptr)
        command.add_flag("--quiet", quiet, "print only the table or the files: no notes, hints or headlines");
}

report::RenderOptions render_options(const OutputOptions& output, bool main) {
    report::RenderOptions options;
    if (main) options.columns = output.columns;
    if (report::parse_format(output.resolved()) == report::Format::text)
        options.width = report::terminal_width(STDOUT_FILENO);
    return options;
}

void print_table(const report::Table& table, const OutputOptions& output, bool main) {
    std::cout << report::render(table, report::parse_format(output.resolved()), render_options(output, main));
}

void print_wrapped(const std::string& text) {
    std::cout << report::wrap_paragraph(text, report::terminal_width(STDOUT_FILENO));
}

}  // namespace inferbench::cli
