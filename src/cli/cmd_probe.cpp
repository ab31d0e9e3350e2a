// `inferbench probe [--device LIST] [--db PATH]`: measures the ceilings of the CPU and the GPUs (through
// the CUDA probe module) and stores them per device, for the roofline to draw beside the datasheet's (or,
// for a CPU, the estimated) roofs.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/spec.hpp"
#include "core/units.hpp"
#include "devices/catalog.hpp"
#include "devices/host_probes.hpp"
#include "devices/quantities.hpp"
#include "devices/roofline.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::cli {
namespace {

struct ProbeArgs {
    std::vector<std::string> devices = {"all"};
    bool cpu_only = false;
    std::vector<std::string> probes = {"all"};
    std::string db;
    bool no_store = false;
    std::string memory_size, l2_size;
    int gemm_size = 8192;
    int repetitions = 0;
    OutputOptions output;
};

devices::ProbeTargets parse_targets(const ProbeArgs& args) {
    devices::ProbeTargets t;
    if (args.cpu_only) {
        t.cpu = true;
        return t;
    }
    for (const auto& item : args.devices) {
        for (const auto& text : split_list(item)) {
            if (text == "all") {
                t.cpu = t.all_gpus = true;
            } else if (text == "cpu") {
                t.cpu = true;
            } else if (const auto index = parse_int(text); index && *index >= 0) {
                t.gpus.insert(static_cast<int>(*index));
            } else if (const auto device = parse_device(text); device && device->kind == DeviceKind::cuda) {
                t.gpus.insert(device->index);
            } else {
                throw UserError(fmt::format(
                    "--device {}: '{}' is not a device; write cpu, a CUDA index (0), cuda:N or all", item, text));
            }
        }
    }
    return t;
}

std::vector<std::string> selected_probes(const ProbeArgs& args) {
    std::vector<std::string> names;
    for (const auto& item : args.probes) {
        for (const auto& name : split_list(item)) {
            const auto& gpu = devices::gpu_probe_names();
            const auto& cpu = devices::cpu_probe_names();
            if (name != "all" && std::find(gpu.begin(), gpu.end(), name) == gpu.end() &&
                std::find(cpu.begin(), cpu.end(), name) == cpu.end())
                throw UserError(fmt::format("--probes: unknown probe '{}'; valid: all, {}", name, join(gpu, ", ")));
            names.push_back(name);
        }
    }
    return names;
}

std::int64_t size_option(const std::string& text, const char* flag) {
    if (text.empty()) return 0;  // the default
    std::string why;
    const auto bytes = devices::parse_byte_size(text, &why);
    if (!bytes) throw UserError(fmt::format("{} {}", flag, why));
    return *bytes;
}

devices::ProbeSettings parse_settings(const ProbeArgs& args) {
    devices::ProbeSettings settings;
    settings.probes = selected_probes(args);
    if (args.gemm_size < 256 || args.gemm_size > 65536)
        throw UserError(fmt::format("--gemm-size {}: must be between 256 and 65536", args.gemm_size));
    settings.memory_bytes = size_option(args.memory_size, "--memory-size");
    settings.l2_bytes = size_option(args.l2_size, "--l2-size");
    settings.gemm_size = args.gemm_size;
    settings.repetitions = args.repetitions;
    return settings;
}

// What a probe's figure is held against: the datasheet's (a catalog GPU), or an estimate (a CPU has no
// datasheet: its peaks are computed from cores, FMA lanes and clock), which the cell says.
report::Cell reference_cell(const devices::DeviceSpec& spec, double value) {
    report::Cell cell = value;
    if (spec.estimated) cell = report::Annotated{value, fmt::format("{:.3f} est.", value)};
    return cell;
}

report::Table results_table(const std::vector<devices::DeviceProbes>& probed) {
    report::Table table{"probes",
                        {{"device", "device"},
                         {"probe", "probe"},
                         {"value", "measured", 3},
                         {"unit", "unit"},
                         {"reference", "reference", 3},
                         {"of_reference_pct", "% of reference", 1},
                         {"detail", "detail", 2, report::Fit::wrap}},
                        {}};
    for (const auto& d : probed) {
        const devices::DeviceSpec* spec = d.spec ? d.spec : d.computed ? &*d.computed : nullptr;
        for (const auto& m : d.results) {
            const bool measured = m.skipped.empty();
            report::Cell sheet = report::Null{}, percent = report::Null{};
            if (const auto value = spec ? devices::datasheet_value(*spec, m.name) : std::nullopt; value.has_value()) {
                sheet = reference_cell(*spec, value.value());
                if (measured && value.value() > 0) percent = m.value / value.value() * 100;
            }
            table.rows.push_back({d.key, m.name, measured ? report::Cell(m.value) : report::Cell(report::Null{}),
                                  m.unit, sheet, percent, measured ? m.detail : "skipped: " + m.skipped});
        }
    }
    return table;
}

std::size_t store_results(const std::string& path, const std::vector<devices::DeviceProbes>& probed) {
    const auto now =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::vector<store::ProbeRecord> records;
    for (const auto& d : probed) {
        for (const auto& m : d.results) {
            if (!m.skipped.empty()) continue;
            records.push_back({0, d.key, d.name, d.uuid, now, m.name, m.value, m.unit, m.precision, m.details_json()});
        }
    }
    if (records.empty()) return 0;
    auto results = store::ResultsStore::open(path);
    results.add_probes(records);
    return records.size();
}

int execute(const ProbeArgs& args) {
    const devices::ProbeTargets targets = parse_targets(args);
    const devices::ProbeSettings settings = parse_settings(args);
    const auto catalog = devices::load_catalog();
    std::vector<std::string> notes;
    std::vector<devices::DeviceProbes> probed = devices::probe_gpus(targets, settings, catalog, notes);
    if (targets.cpu) probed.push_back(devices::probe_host_cpu(settings));
    const auto format = report::parse_format(args.output.resolved());
    print_table(results_table(probed), args.output);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    const std::size_t stored = args.no_store ? 0 : store_results(path, probed);
    if (args.output.quiet) return kExitOk;
    if (format == report::Format::json) {
        for (const auto& note : notes) fmt::print(stderr, "{}\n", note);
    } else {
        for (const auto& d : probed) print_wrapped(fmt::format("{}: {} ({})", d.key, d.name, d.identified));
        print_wrapped(
            "reference: the datasheet's figure; est.: an estimate, not a datasheet's (a CPU's peaks are "
            "computed: cores x FMA lanes x clock)");
        for (const auto& note : notes) print_wrapped(note);
        if (stored)
            print_wrapped(fmt::format(
                "stored {} figures in {} (the roofline draws them beside the datasheet's or estimated roofs)", stored,
                path));
    }
    return kExitOk;
}

}  // namespace

void add_probe_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<ProbeArgs>();
    CLI::App* cmd = app.add_subcommand(
        "probe",
        "measure the ceilings of this machine's CPU and GPUs (FMA peaks, memory and L2 bandwidth, GEMM peaks "
        "per precision) and store them for the roofline");
    cmd->add_option("--device,--devices", args->devices, "cpu, CUDA device indices (0 or cuda:0), or all")
        ->delimiter(',')
        ->capture_default_str();
    cmd->add_flag("--cpu", args->cpu_only, "the CPU alone (same as --device cpu)");
    cmd->add_option("--probes", args->probes,
                    "which probes: all, or of fma_fp64, fma_fp32, fma_fp16x2, imad_int32, dram_copy, dram_triad, "
                    "dram_memcpy, l2_read, gemm_tf32, gemm_fp16, gemm_bf16, gemm_fp8, gemm_int8")
        ->delimiter(',')
        ->capture_default_str();
    cmd->add_option(
        "--db", args->db,
        fmt::format("results database to store the figures in (default {})", resolved_db_path(RunSettings{})));
    cmd->add_flag("--no-store", args->no_store, "print the figures, store nothing");
    cmd->add_option("--memory-size", args->memory_size,
                    "each array of the copy/triad probes, e.g. 1GiB (default: GPU 1 GiB, CPU 4 x the last-level cache, "
                    "at least 256 MiB)");
    cmd->add_option("--l2-size", args->l2_size, "buffer of the GPU L2 probe (default 40% of the L2)");
    cmd->add_option("--gemm-size", args->gemm_size, "M = N = K of the GEMM probes")->capture_default_str();
    cmd->add_option("--repetitions", args->repetitions, "timed runs per probe, best kept (default: CPU 3, GPU 5)");
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
