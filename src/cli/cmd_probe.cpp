// `inferbench probe [--device LIST] [--db PATH]`: measures the ceilings of the CPU and the GPUs (through
// the CUDA probe module) and stores them per device, for the roofline to draw beside the datasheet's.
#include <chrono>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/spec.hpp"
#include "core/units.hpp"
#include "devices/catalog.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/cublaslt_search.hpp"
#include "devices/match.hpp"
#include "devices/probe.hpp"
#include "devices/quantities.hpp"
#include "devices/roofline.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"
#include "telemetry/gpu_inventory.hpp"

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

struct Targets {
    bool cpu = false;
    bool all_gpus = false;  // every GPU there is, if any (no error when there is none)
    std::set<int> gpus;     // asked for by index: an error when they cannot be probed
};

Targets parse_targets(const ProbeArgs& args) {
    Targets t;
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

bool wants(const std::vector<std::string>& probes, std::string_view name) {
    return std::find(probes.begin(), probes.end(), "all") != probes.end() ||
           std::find(probes.begin(), probes.end(), name) != probes.end();
}

std::int64_t size_option(const std::string& text, const char* flag) {
    std::string why;
    const auto bytes = devices::parse_byte_size(text, &why);
    if (!bytes) throw UserError(fmt::format("{} {}", flag, why));
    return *bytes;
}

struct DeviceProbes {
    std::string key, name, uuid, identified;
    const devices::DeviceSpec* spec = nullptr;
    std::optional<devices::DeviceSpec> computed;  // the CPU's entry
    std::vector<devices::ProbeMeasurement> results;
};

DeviceProbes probe_cpu(const ProbeArgs& args, const std::vector<std::string>& probes) {
    DeviceProbes d;
    const auto info = devices::host_cpuinfo();
    d.key = devices::cpu_device_key(info.model_name);
    d.name = info.model_name;
    d.identified = "/proc/cpuinfo; FMA kernel " + devices::cpu_probe_isa();
    d.computed = devices::cpu_device_spec(info, devices::estimate_cpu_peaks(info, devices::host_max_freq_khz()));
    devices::CpuProbeOptions options;
    options.array_bytes =
        args.memory_size.empty() ? devices::default_cpu_array_bytes() : size_option(args.memory_size, "--memory-size");
    if (args.repetitions > 0) options.repetitions = args.repetitions;
    options.fma = wants(probes, "fma_fp32") || wants(probes, "fma_fp64");
    options.memory = wants(probes, "dram_copy") || wants(probes, "dram_triad");
    for (auto& m : devices::probe_cpu(options)) {
        if (wants(probes, m.name)) d.results.push_back(std::move(m));
    }
    return d;
}

std::vector<DeviceProbes> probe_gpus(const ProbeArgs& args, const Targets& targets,
                                     const std::vector<std::string>& probes, const devices::Catalog& catalog,
                                     std::vector<std::string>& notes) {
    std::vector<std::string> gpu_probes;
    for (const auto& name : devices::gpu_probe_names()) {
        if (wants(probes, name)) gpu_probes.push_back(name);
    }
    if (gpu_probes.empty() || (!targets.all_gpus && targets.gpus.empty())) return {};
    std::unique_ptr<devices::CudaProbeModule> module;
    int count = 0;
    try {
        module = devices::CudaProbeModule::open(devices::CudaProbeModule::default_candidates());
        count = module->device_count();
    } catch (const EnvironmentError& e) {
        if (!targets.gpus.empty()) throw;
        notes.push_back(fmt::format("GPUs not probed: {}", e.what()));
        return {};
    }
    std::set<int> indices = targets.gpus;
    if (targets.all_gpus) {
        for (int i = 0; i < count; ++i) indices.insert(i);
    }
    devices::GpuProbeRequest request;
    request.probes = join(gpu_probes, ",");
    if (std::any_of(gpu_probes.begin(), gpu_probes.end(), [](const auto& n) { return n.starts_with("gemm_"); })) {
        const auto choice = devices::find_cublaslt(devices::host_cublaslt_search());
        request.cublaslt_library = choice.library;
        notes.push_back(fmt::format("cuBLASLt: {} (found through {})",
                                    choice.library.empty() ? "libcublasLt.so.13 / .so.12" : choice.library,
                                    choice.how));
    }
    if (!args.memory_size.empty()) request.dram_bytes = size_option(args.memory_size, "--memory-size");
    if (!args.l2_size.empty()) request.l2_bytes = size_option(args.l2_size, "--l2-size");
    request.gemm_size = args.gemm_size;
    request.repetitions = args.repetitions;
    const auto inventory = telemetry::list_gpus();
    std::vector<DeviceProbes> all;
    for (const int index : indices) {
        if (index >= count)
            throw UserError(fmt::format("--device {}: this machine has {} CUDA device(s)", index, count));
        const auto identity = module->device(index);
        std::optional<std::uint32_t> pci;
        for (const auto& gpu : inventory.gpus) {
            if (gpu.uuid == identity.uuid) pci = gpu.pci_device_id;
        }
        const auto match = devices::match_gpu(catalog, identity.name, pci);
        DeviceProbes d;
        d.spec = match.device;
        d.key = match.device ? match.device->key : "gpu:" + devices::normalize_gpu_name(identity.name);
        d.name = identity.name;
        d.uuid = identity.uuid;
        d.identified = match.device ? match.how : devices::no_match_message(identity.name, pci);
        request.device = index;
        d.results = module->run(request);
        all.push_back(std::move(d));
    }
    return all;
}

report::Table results_table(const std::vector<DeviceProbes>& probed) {
    report::Table table{"probes",
                        {{"device", "device"},
                         {"probe", "probe"},
                         {"value", "measured", 3},
                         {"unit", "unit"},
                         {"datasheet", "datasheet", 3},
                         {"of_datasheet_pct", "% of datasheet", 1},
                         {"detail", "detail"}},
                        {}};
    for (const auto& d : probed) {
        const devices::DeviceSpec* spec = d.spec ? d.spec : d.computed ? &*d.computed : nullptr;
        for (const auto& m : d.results) {
            const bool measured = m.skipped.empty();
            report::Cell sheet = report::Null{}, percent = report::Null{};
            if (const auto value = spec ? devices::datasheet_value(*spec, m.name) : std::nullopt; value.has_value()) {
                sheet = value.value();
                if (measured && value.value() > 0) percent = m.value / value.value() * 100;
            }
            table.rows.push_back({d.key, m.name, measured ? report::Cell(m.value) : report::Cell(report::Null{}),
                                  m.unit, sheet, percent, measured ? m.detail : "skipped: " + m.skipped});
        }
    }
    return table;
}

std::size_t store_results(const std::string& path, const std::vector<DeviceProbes>& probed) {
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
    const Targets targets = parse_targets(args);
    const auto probes = selected_probes(args);
    if (args.gemm_size < 256 || args.gemm_size > 65536)
        throw UserError(fmt::format("--gemm-size {}: must be between 256 and 65536", args.gemm_size));
    const auto catalog = devices::load_catalog();
    std::vector<std::string> notes;
    std::vector<DeviceProbes> probed = probe_gpus(args, targets, probes, catalog, notes);
    if (targets.cpu) probed.push_back(probe_cpu(args, probes));
    const auto format = report::parse_format(args.output.resolved());
    std::cout << report::render(results_table(probed), format);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    const std::size_t stored = args.no_store ? 0 : store_results(path, probed);
    if (format == report::Format::json) {
        for (const auto& note : notes) fmt::print(stderr, "{}\n", note);
    } else {
        for (const auto& d : probed) fmt::print("{}: {} ({})\n", d.key, d.name, d.identified);
        for (const auto& note : notes) fmt::print("{}\n", note);
        if (stored)
            fmt::print("stored {} figures in {} (the roofline draws them beside the datasheet's)\n", stored, path);
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
    cmd->add_option("--db", args->db,
                    "results database to store the figures in (default inferbench-results/results.db)");
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
