#include "cli/app.hpp"

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "runner/worker.hpp"
#include "runner/worker_protocol.hpp"

namespace inferbench::cli {

int main(int argc, char** argv) {
    // The worker is this same executable; it must not go through the user-facing parser.
    if (argc >= 2 && argv[1] == worker_protocol::kWorkerCommand) return worker_main();

    CLI::App app{"inferbench: benchmark AI inference on CPUs and GPUs, store every iteration, explain the results"};
    app.name("inferbench");
    app.set_version_flag("--version", fmt::format("inferbench {} ({}, {} build)", kVersion, kGitCommit, kBuildType));
    app.require_subcommand(1);
    app.footer("Run `inferbench COMMAND --help` for the options of a command.");
    CommandContext context;
    add_run_command(app, context);
    add_summary_command(app, context);
    add_report_command(app, context);
    add_compare_command(app, context);
    add_list_command(app, context);
    add_import_command(app, context);
    add_models_command(app, context);
    add_devices_command(app, context);
    add_probe_command(app, context);
    add_roofline_command(app, context);
    try {
        app.parse(argc, argv);
        return context.action ? context.action() : kExitOk;
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
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
