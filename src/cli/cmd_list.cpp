#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "core/driver_gpus.hpp"
#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "core/units.hpp"
#include "devices/cpu_peaks.hpp"
#include "models/zoo.hpp"
#include "report/table.hpp"

namespace inferbench::cli {
namespace {

struct ListArgs {
    std::string what;
    std::vector<std::string> option_backends;  // with --options: these backends (none named: every one)
    bool options = false;
    OutputOptions output;
};

// "cpu: usable; cuda:0: <why not>", from the backend's default cell on each device.
std::string devices_text(const BackendEntry& entry) {
    std::vector<std::string> parts;
    for (const auto& d : entry.devices)
        parts.push_back(d.device.empty() ? d.problem : fmt::format("{}: {}", d.device, d.problem.empty() ? "usable" : d.problem));
    return fmt::format("{}", fmt::join(parts, "; "));
}

report::Table backends_table() {
    report::Table table{"backends", {{"name", "name"}, {"usable", "usable"},
                                     {"description", "description", 2, report::Fit::wrap},
                                     {"version", "version", 2, report::Fit::wrap, 3},
                                     {"origin", "origin", 2, report::Fit::wrap, 1},
                                     {"problem", "problem", 2, report::Fit::wrap},
                                     {"devices", "devices", 2, report::Fit::wrap, 2}}, {}};
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    for (const auto& e : registry.entries())
        table.rows.push_back({e.name, e.usable(), e.description, e.version, e.origin, e.problem, devices_text(e)});
    return table;
}

// The backends whose options --options lists: those named (a name it does not know is a bad input), else
// every one.
std::vector<std::string> option_backend_names(const ListArgs& args, const BackendRegistry& registry) {
    const auto known = registry.names();
    std::vector<std::string> named = args.option_backends;
    std::erase(named, "");  // a bare --options
    if (named.empty()) return known;
    for (const auto& name : named)
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw UserError(fmt::format("--options {}: no such backend{}; backends: {}", name,
                                        did_you_mean(name, known), join(known, ", ")));
    return named;
}

// Every option of the backends, with its type, default and help: what backend_options.<backend>.<option>
// takes. A backend that cannot be created here (not built) has its reason on stderr instead.
report::Table backend_options_table(const ListArgs& args) {
    report::Table table{"backend_options",
                        {{"backend", "backend"},
                         {"option", "option"},
                         {"type", "type"},
                         {"default", "default", 2, report::Fit::wrap},
                         {"help", "help", 2, report::Fit::wrap}},
                        {}};
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    for (const auto& name : option_backend_names(args, registry)) {
        std::vector<BackendOption> options;
        try {
            options = registry.create(name)->options();
        } catch (const std::exception& e) {
            if (!args.output.quiet) fmt::print(stderr, "{}: options not listed: {}\n", name, e.what());
            continue;
        }
        for (const auto& o : options)
            table.rows.push_back({name, o.name, std::string(to_string(o.type)), o.default_value, o.help});
    }
    return table;
}

// GPUs the NVIDIA driver reports in /proc; telemetry through NVML comes with the telemetry module.
report::Table devices_table() {
    report::Table table{"devices", {{"device", "device"}, {"name", "name", 2, report::Fit::wrap},
                                    {"detail", "detail", 2, report::Fit::wrap}}, {}};
    const std::string cpu = devices::host_cpuinfo().model_name;
    table.rows.push_back({std::string("cpu"), cpu.empty() ? std::string("unknown CPU") : cpu,
                          fmt::format("{} logical cores", std::thread::hardware_concurrency())});
    std::int64_t index = 0;
    for (const auto& gpu : driver_gpus()) {
        const std::string model = gpu.model.empty() ? std::string("NVIDIA GPU") : gpu.model;
        table.rows.push_back({fmt::format("cuda:{}", index++), model, "PCI " + gpu.pci_address});
    }
    return table;
}

int execute(const ListArgs& args) {
    if (args.options && args.what != "backends")
        throw UserError(fmt::format("--options: `list {}` has none; `inferbench list backends --options` lists the "
                                    "backends' options",
                                    args.what));
    report::Table table;
    if (args.options) table = backend_options_table(args);
    else if (args.what == "backends") table = backends_table();
    else if (args.what == "models") table = zoo_models_table();
    else table = devices_table();
    print_table(table, args.output);
    return kExitOk;
}

}  // namespace

report::Table zoo_models_table() {
    report::Table table{"models", {{"name", "name"}, {"parameters", "trainable params"},
                                   {"description", "description", 2, report::Fit::wrap},
                                   {"source", "source", 2, report::Fit::wrap, 1}}, {}};
    for (const auto& m : models::zoo()) table.rows.push_back({m.name, m.parameters, m.description, m.source});
    return table;
}

void add_list_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<ListArgs>();
    CLI::App* list = app.add_subcommand("list", "list backends, zoo models or devices");
    list->add_option("what", args->what, "backends, models or devices")
        ->required()
        ->check(CLI::IsMember({"backends", "models", "devices"}));
    list->add_option("--options", args->option_backends,
                     "with backends: list each backend's options (backend_options.BACKEND.OPTION) with type, default "
                     "and help, instead of checking which backends run here; optionally only these backends")
        ->expected(0, -1)
        ->delimiter(',')
        ->option_text("[BACKEND,...]");
    args->output.add_to(*list);
    list->callback([&context, args, list] {
        args->options = list->count("--options") > 0;
        context.action = [args] { return execute(*args); };
    });
}

}  // namespace inferbench::cli
