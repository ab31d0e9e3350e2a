#include "cli/app.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/build_facts.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "report/table.hpp"
#include "runner/worker/worker.hpp"
#include "runner/wire/worker_protocol.hpp"

namespace inferbench::cli {
namespace {

// The deepest command the parser entered: the one a stray argument was meant for.
CLI::App* innermost_command(CLI::App& app) {
    CLI::App* command = &app;
    while (!command->get_subcommands().empty()) command = command->get_subcommands().back();
    return command;
}

std::vector<std::string> option_names(const CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::Option* option : command.get_options()) {
        for (const auto& name : option->get_lnames()) names.push_back("--" + name);
        for (const auto& name : option->get_snames()) names.push_back("-" + name);
    }
    return names;
}

std::vector<std::string> command_names(CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return names;
}

// CLI11 reports whatever it tripped over first (`run --durration 1s` gives "plan: File does not
// exist: 1s", as 1s became the plan); the first argument it could not place is the real mistake.
std::optional<std::string> unplaced_argument_message(CLI::App& app) {
    const auto left = app.remaining(/*recurse=*/true);
    if (left.empty()) return std::nullopt;
    CLI::App* command = innermost_command(app);
    const std::string path = command == &app ? "inferbench" : "inferbench " + command->get_name();
    const std::string& first = left.front();
    if (first.starts_with("-")) {
        const std::string flag = first.substr(0, first.find('='));
        return fmt::format("unknown option {}{} (`{} --help` lists the options)", flag,
                           did_you_mean(flag, option_names(*command)), path);
    }
    if (const auto commands = command_names(*command); !commands.empty())
        return fmt::format("unknown command '{}'{} (`{} --help` lists the commands)", first,
                           did_you_mean(first, commands), path);
    return fmt::format("unexpected argument '{}' (`{} --help` shows the usage)", first, path);
}

// Where an overlong help line's description begins: after its last run of two or more spaces that ends
// before `limit` (its last column, as far right as leaves room to wrap in), else after its indentation. CLI11 lays help out in columns ("  --duration TEXT   the
// measured ..."; the plan keys' "  KEY  TYPE  DEFAULT  help") without wrapping the last one.
std::size_t hanging_indent(const std::string& line, std::size_t limit) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) return 0;
    std::size_t best = indent;
    for (std::size_t at = line.find("  ", indent); at != std::string::npos && at < limit; at = line.find("  ", at)) {
        const std::size_t end = line.find_first_not_of(' ', at);
        if (end == std::string::npos || end >= limit) break;
        best = end;
        at = end;
    }
    return best;
}

// Help text whose lines fit `width`: a line too long wraps its last column under itself.
std::string fit_help(const std::string& text, std::size_t width) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (report::display_width(line) <= width) {
            out += line + "\n";
            continue;
        }
        constexpr std::size_t kRoom = 24;  // the least a wrapped description keeps beside its indent
        const std::size_t indent = hanging_indent(line, width > 2 * kRoom ? width - kRoom : width / 2);
        const std::string lead = line.substr(0, indent);
        const std::string wrapped = report::wrap_paragraph(line.substr(indent), width - report::display_width(lead));
        std::istringstream parts(wrapped);
        bool first = true;
        for (std::string part; std::getline(parts, part); first = false)
            out += (first ? lead : std::string(report::display_width(lead), ' ')) + part + "\n";
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    // The worker is this same executable; it must not go through the user-facing parser.
    if (argc >= 2 && argv[1] == runner::worker_protocol::kWorkerCommand) return runner::worker_main();

    CLI::App app{"inferbench: benchmark AI inference on CPUs and GPUs, store every iteration, explain the results"};
    app.name("inferbench");
    app.set_version_flag("--version", version_text());
    app.require_subcommand(1);
    app.footer("Run `inferbench COMMAND --help` for the options of a command.");
    CommandContext context;
    add_run_command(app, context);
    add_summary_command(app, context);
    add_report_command(app, context);
    add_compare_command(app, context);
    add_list_command(app, context);
    add_import_command(app, context);
    add_merge_command(app, context);
    add_models_command(app, context);
    add_devices_command(app, context);
    add_probe_command(app, context);
    add_roofline_command(app, context);
    add_explain_command(app, context);
    add_slurm_command(app, context);
    add_completion_command(app, context);
    try {
        app.parse(argc, argv);
        return context.action ? context.action() : kExitOk;
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() != 0) {
            if (const auto message = unplaced_argument_message(app)) {
                fmt::print(stderr, "inferbench: error: {}\n", escape_invalid_utf8(*message));
                return kExitUsage;
            }
        }
        // Help and errors as CLI11 words them, help fitted to the terminal.
        std::ostringstream help;
        const int code = app.exit(e, help, std::cerr);
        std::cout << fit_help(help.str(), report::terminal_width(STDOUT_FILENO));
        return code == 0 ? kExitOk : kExitUsage;
    } catch (const UserError& e) {
        fmt::print(stderr, "inferbench: error: {}\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        fmt::print(stderr, "inferbench: error: {}\n", e.what());
        return kExitFailure;
    }
}

}  // namespace inferbench::cli
