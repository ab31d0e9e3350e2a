// `inferbench devices [KEY] [--json]`: the device catalog, and the devices present here with the entry
// each matched (or why none did).
#include <unistd.h>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "devices/catalog.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/match.hpp"
#include "devices/quantities.hpp"
#include "report/table.hpp"
#include "telemetry/gpu_inventory.hpp"

namespace inferbench::cli {
namespace {

using devices::Precision;

struct DevicesArgs {
    std::string key;
    OutputOptions output;
};

report::Cell peak_cell(const devices::DeviceSpec& spec, Precision precision) {
    const auto* peak = spec.peak(precision);
    if (!peak || !peak->has_rate()) return report::Null{};
    return peak->dense;
}

report::Table catalog_table(const devices::Catalog& catalog) {
    report::Table table{"devices",
                        {{"key", "key"},
                         {"name", "name"},
                         {"architecture", "architecture", 2, report::Fit::keep, 2},
                         {"sms", "SMs", 0, report::Fit::keep, 2},
                         {"memory_gb", "memory GB", 0, report::Fit::keep, 1},
                         {"bandwidth_gb_s", "GB/s", 1},
                         {"tdp_w", "TDP W", 0, report::Fit::keep, 2}},
                        {}};
    for (const Precision precision : devices::kPrecisions) {
        const std::string name(devices::precision_name(precision));
        const std::string unit = devices::is_integer(precision) ? "tops" : "tflop_s";
        const int decimals = precision == Precision::fp64 ? 2 : 1;  // consumer GPUs' FP64 is a fraction of a TFLOP/s
        table.columns.push_back(
            {name + "_dense_" + unit, fmt::format("{} {}", name, devices::rate_unit(precision)), decimals,
             report::Fit::keep, 1});
    }
    for (const auto& d : catalog.devices) {
        std::vector<report::Cell> row = {d.key,
                                         d.name,
                                         d.architecture.value,
                                         static_cast<std::int64_t>(d.sms.value),
                                         d.memory_size_gb.value,
                                         d.memory_bandwidth_gbs->value,
                                         d.tdp_w->value};
        for (const Precision precision : devices::kPrecisions) row.push_back(peak_cell(d, precision));
        table.rows.push_back(std::move(row));
    }
    return table;
}

std::string source_text(const devices::Catalog& catalog, const std::string& id) {
    const auto* source = catalog.source(id);
    return source ? fmt::format("{} <{}>", source->title, source->url) : id;
}

std::string how(const std::string& derived, const std::string& note) {
    std::string text = derived.empty() ? "" : "derived: " + derived;
    if (!note.empty()) text += (text.empty() ? "" : "; ") + note;
    return text;
}

// Every figure of one entry with its source.
report::Table entry_table(const devices::Catalog& catalog, const devices::DeviceSpec& d) {
    report::Table table{
        "device",
        {{"figure", "figure"}, {"value", "value", 2, report::Fit::wrap}, {"how", "derived / note", 2, report::Fit::wrap},
         {"source", "source", 2, report::Fit::wrap}},
        {}};
    const auto figure = [&](const char* name, const devices::Figure& f, const std::string& unit) {
        table.rows.push_back({std::string(name), fmt::format("{:g}{}", f.value, unit), how(f.derived, f.note),
                              source_text(catalog, f.source)});
    };
    table.rows.push_back(
        {std::string("architecture"), d.architecture.value + " (compute capability " + d.compute_capability + ")",
         how(d.architecture.derived, d.architecture.note), source_text(catalog, d.architecture.source)});
    figure("SMs", d.sms, "");
    figure("CUDA cores", d.cuda_cores, "");
    figure("tensor cores", d.tensor_cores, "");
    figure("boost clock", d.boost_clock_mhz, " MHz");
    figure("memory", d.memory_size_gb, " GB " + d.memory_type);
    figure("memory bandwidth", *d.memory_bandwidth_gbs, " GB/s");
    figure("TDP", *d.tdp_w, " W");
    for (const auto& [precision, p] : d.peaks) {
        std::string value = !p.supported ? "not supported" : !p.published ? "not published" : "";
        if (p.has_rate()) {
            value = fmt::format("{:g} {} dense", p.dense, devices::rate_unit(precision));
            if (p.sparse) value += fmt::format(", {:g} sparse", *p.sparse);
            value += p.cuda_cores ? " (CUDA cores)" : " (tensor cores)";
        }
        table.rows.push_back({fmt::format("{} peak", devices::precision_name(precision)), value, how(p.derived, p.note),
                              source_text(catalog, p.source)});
    }
    std::vector<std::string> ids;
    for (const auto id : d.pci_device_ids) ids.push_back(fmt::format("0x{:04X}", id));
    table.rows.push_back({std::string("matched by"),
                          fmt::format("PCI device ids [{}]; names [{}]", join(ids, ", "), join(d.nvml_names, ", ")),
                          std::string(), source_text(catalog, d.match_source)});
    return table;
}

struct Present {
    report::Table table{"present",
                        {{"device", "device"},
                         {"name", "name", 2, report::Fit::wrap},
                         {"pci_device_id", "PCI id"},
                         {"entry", "catalog entry", 2, report::Fit::wrap},
                         {"match", "matched by / problem", 2, report::Fit::wrap}},
                        {}};
    std::string gpu_note;  // why no GPU is listed
};

Present present_devices(const devices::Catalog& catalog) {
    Present present;
    const auto cpu = devices::host_cpuinfo();
    const auto estimate = devices::estimate_cpu_peaks(cpu, devices::host_max_freq_khz());
    const std::string cpu_what =
        estimate
            ? fmt::format(
                  "estimated: fp32 {}, fp64 {} = {} cores x {} fp32 lanes x 2 FLOP x {} FMA pipes x {:.3f} GHz ({})",
                  devices::format_rate(estimate->fp32_gflops * 1e9, false),
                  devices::format_rate(estimate->fp64_gflops * 1e9, false), estimate->cores, estimate->vector_bits / 32,
                  estimate->fma_pipes, estimate->clock_ghz, estimate->isa)
            : std::string("no clock known: no estimate");
    present.table.rows.push_back(
        {std::string("cpu"), cpu.model_name, std::string(), devices::cpu_device_key(cpu.model_name), cpu_what});
    const auto inventory = telemetry::list_gpus();
    for (const auto& gpu : inventory.gpus) {
        const auto match = devices::match_gpu(catalog, gpu.name, gpu.pci_device_id);
        const auto id = gpu.pci_device_id ? devices::nvidia_device_id(*gpu.pci_device_id) : std::nullopt;
        present.table.rows.push_back(
            {fmt::format("gpu {} ({})", gpu.index, inventory.source), gpu.name,
             id ? report::Cell(fmt::format("0x{:04X}", *id)) : report::Cell(report::Null{}),
             match.device ? report::Cell(match.device->key) : report::Cell(report::Null{}),
             match.device ? match.how : devices::no_match_message(gpu.name, gpu.pci_device_id)});
    }
    if (inventory.gpus.empty())
        present.gpu_note = inventory.unavailable.empty() ? "no GPU listed" : "no GPU listed: " + inventory.unavailable;
    return present;
}

nlohmann::ordered_json spec_json(const devices::DeviceSpec& d) {
    const auto figure = [](const devices::Figure& f) {
        nlohmann::ordered_json j{{"value", f.value}, {"source", f.source}};
        if (!f.derived.empty()) j["derived"] = f.derived;
        if (!f.note.empty()) j["note"] = f.note;
        return j;
    };
    nlohmann::ordered_json j{{"key", d.key}, {"name", d.name}, {"nvml_names", d.nvml_names}};
    j["pci_device_ids"] = nlohmann::ordered_json::array();
    for (const auto id : d.pci_device_ids) j["pci_device_ids"].push_back(fmt::format("0x{:04X}", id));
    j["architecture"] = {{"value", d.architecture.value},
                         {"compute_capability", d.compute_capability},
                         {"source", d.architecture.source}};
    j["sms"] = figure(d.sms);
    j["cuda_cores"] = figure(d.cuda_cores);
    j["tensor_cores"] = figure(d.tensor_cores);
    j["boost_clock_mhz"] = figure(d.boost_clock_mhz);
    j["memory_size_gb"] = figure(d.memory_size_gb);
    j["memory_type"] = d.memory_type;
    j["memory_bandwidth_gb_s"] = figure(*d.memory_bandwidth_gbs);
    j["tdp_w"] = figure(*d.tdp_w);
    for (const auto& [precision, p] : d.peaks) {
        nlohmann::ordered_json peak{
            {"unit", devices::rate_unit(precision)}, {"supported", p.supported}, {"published", p.published}};
        if (p.has_rate()) {
            peak["dense"] = p.dense;
            if (p.sparse) peak["sparse"] = *p.sparse;
            peak["units"] = p.cuda_cores ? "CUDA cores" : "tensor cores";
        }
        peak["source"] = p.source;
        if (!p.derived.empty()) peak["derived"] = p.derived;
        if (!p.note.empty()) peak["note"] = p.note;
        j["peaks"][std::string(devices::precision_name(precision))] = peak;
    }
    return j;
}

nlohmann::ordered_json catalog_json(const devices::Catalog& catalog, const Present& present) {
    nlohmann::ordered_json doc{{"schema_version", report::kJsonSchemaVersion}, {"catalog", catalog.origin}};
    for (const auto& [id, s] : catalog.sources) doc["sources"][id] = {{"title", s.title}, {"url", s.url}};
    doc["devices"] = nlohmann::ordered_json::array();
    for (const auto& d : catalog.devices) doc["devices"].push_back(spec_json(d));
    doc["present"] = report::table_json(present.table)["rows"];
    if (!present.gpu_note.empty()) doc["present_note"] = present.gpu_note;
    return doc;
}

// `devices KEY`: every figure of one entry.
void show_entry(const DevicesArgs& args, const devices::Catalog& catalog) {
    const auto* spec = catalog.find(args.key);
    if (!spec) {
        std::vector<std::string> keys;
        for (const auto& d : catalog.devices) keys.push_back(d.key);
        throw UserError(fmt::format("no catalog entry '{}'; valid keys: {}", args.key, join(keys, ", ")));
    }
    if (args.output.resolved() == "json") {
        std::cout << spec_json(*spec).dump(2) << "\n";
    } else {
        if (!args.output.quiet) print_wrapped(fmt::format("{} ({})", spec->name, catalog.origin));
        print_table(entry_table(catalog, *spec), args.output);
    }
}

int execute(const DevicesArgs& args) {
    const auto catalog = devices::load_catalog();
    if (!args.key.empty()) {
        show_entry(args, catalog);
        return kExitOk;
    }
    const Present present = present_devices(catalog);
    if (args.output.resolved() == "json") {
        std::cout << catalog_json(catalog, present).dump(2) << "\n";
        return kExitOk;
    }
    report::parse_format(args.output.resolved());  // a bad --format fails before anything is printed
    if (!args.output.quiet)
        print_wrapped(fmt::format(
            "Catalog ({}; dense peaks; `inferbench devices KEY` shows every figure with its source):", catalog.origin));
    print_table(catalog_table(catalog), args.output);
    fmt::print("\nPresent:\n");
    print_table(present.table, args.output, false);
    if (!present.gpu_note.empty() && !args.output.quiet) print_wrapped(present.gpu_note);
    return kExitOk;
}

}  // namespace

void add_devices_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<DevicesArgs>();
    CLI::App* cmd = app.add_subcommand(
        "devices", "list the device catalog (datasheet peaks, each with its source) and the devices present here");
    cmd->add_option("key", args->key, "show every figure of one catalog entry with its source");
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
