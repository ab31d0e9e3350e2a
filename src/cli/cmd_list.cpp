#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "core/driver_gpus.hpp"
#include "core/error.hpp"
#include "devices/cpu_peaks.hpp"
#include "models/zoo.hpp"
#include "report/table.hpp"

namespace inferbench::cli {
namespace {

struct ListArgs {
    std::string what;
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
    report::Table table;
    if (args.what == "backends") table = backends_table();
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
    args->output.add_to(*list);
    list->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
