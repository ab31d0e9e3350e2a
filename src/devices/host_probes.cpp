#include "devices/host_probes.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/cublaslt_search.hpp"
#include "devices/match.hpp"
#include "telemetry/gpu_inventory.hpp"

namespace inferbench::devices {
namespace {

std::vector<std::string> selected_gpu_probes(const std::vector<std::string>& probes) {
    std::vector<std::string> names;
    for (const auto& name : gpu_probe_names()) {
        if (selects(probes, name)) names.push_back(name);
    }
    return names;
}

struct OpenedModule {
    std::unique_ptr<CudaProbeModule> module;
    int count = 0;
};

// The CUDA probe module and its device count; none (with a note) when GPUs were not asked for by index.
std::optional<OpenedModule> open_probe_module(const ProbeTargets& targets, std::vector<std::string>& notes) {
    try {
        OpenedModule opened;
        opened.module = CudaProbeModule::open(CudaProbeModule::default_candidates());
        opened.count = opened.module->device_count();
        return opened;
    } catch (const EnvironmentError& e) {
        if (!targets.gpus.empty()) throw;
        notes.push_back(fmt::format("GPUs not probed: {}", e.what()));
        return std::nullopt;
    }
}

GpuProbeRequest gpu_request(const ProbeSettings& settings, const std::vector<std::string>& gpu_probes,
                            std::vector<std::string>& notes) {
    GpuProbeRequest request;
    request.probes = join(gpu_probes, ",");
    if (std::any_of(gpu_probes.begin(), gpu_probes.end(), [](const auto& n) { return n.starts_with("gemm_"); })) {
        const auto choice = find_cublaslt(host_cublaslt_search());
        request.cublaslt_library = choice.library;
        notes.push_back(fmt::format("cuBLASLt: {} (found through {})",
                                    choice.library.empty() ? "libcublasLt.so.13 / .so.12" : choice.library,
                                    choice.how));
    }
    request.dram_bytes = settings.memory_bytes;
    request.l2_bytes = settings.l2_bytes;
    request.gemm_size = settings.gemm_size;
    request.repetitions = settings.repetitions;
    return request;
}

// Device `index` of the module with the catalog entry it matches (by name, and by the PCI id the
// inventory gives for its UUID).
DeviceProbes identify_gpu(const CudaProbeModule& module, int index, const Catalog& catalog,
                          const telemetry::GpuInventory& inventory) {
    const auto identity = module.device(index);
    std::optional<std::uint32_t> pci;
    for (const auto& gpu : inventory.gpus) {
        if (gpu.uuid == identity.uuid) pci = gpu.pci_device_id;
    }
    const auto match = match_gpu(catalog, identity.name, pci);
    DeviceProbes d;
    d.spec = match.device;
    d.key = match.device ? match.device->key : "gpu:" + normalize_gpu_name(identity.name);
    d.name = identity.name;
    d.uuid = identity.uuid;
    d.identified = match.device ? match.how : no_match_message(identity.name, pci);
    return d;
}

}  // namespace

bool selects(const std::vector<std::string>& probes, std::string_view name) {
    return std::find(probes.begin(), probes.end(), "all") != probes.end() ||
           std::find(probes.begin(), probes.end(), name) != probes.end();
}

DeviceProbes probe_host_cpu(const ProbeSettings& settings) {
    DeviceProbes d;
    const auto info = host_cpuinfo();
    d.key = cpu_device_key(info.model_name);
    d.name = info.model_name;
    d.identified = "/proc/cpuinfo; FMA kernel " + cpu_probe_isa();
    d.computed = cpu_device_spec(info, estimate_cpu_peaks(info, host_max_freq_khz()));
    CpuProbeOptions options;
    options.array_bytes = settings.memory_bytes > 0 ? settings.memory_bytes : default_cpu_array_bytes();
    if (settings.repetitions > 0) options.repetitions = settings.repetitions;
    const auto& probes = settings.probes;
    options.fma = selects(probes, "fma_fp32") || selects(probes, "fma_fp64");
    options.memory = selects(probes, "dram_copy") || selects(probes, "dram_triad");
    for (auto& m : probe_cpu(options)) {
        if (selects(probes, m.name)) d.results.push_back(std::move(m));
    }
    return d;
}

std::vector<DeviceProbes> probe_gpus(const ProbeTargets& targets, const ProbeSettings& settings, const Catalog& catalog,
                                     std::vector<std::string>& notes) {
    const std::vector<std::string> gpu_probes = selected_gpu_probes(settings.probes);
    if (gpu_probes.empty() || (!targets.all_gpus && targets.gpus.empty())) return {};
    const auto opened = open_probe_module(targets, notes);
    if (!opened) return {};
    std::set<int> indices = targets.gpus;
    if (targets.all_gpus) {
        for (int i = 0; i < opened->count; ++i) indices.insert(i);
    }
    GpuProbeRequest request = gpu_request(settings, gpu_probes, notes);
    const auto inventory = telemetry::list_gpus();
    std::vector<DeviceProbes> all;
    for (const int index : indices) {
        if (index >= opened->count)
            throw UserError(fmt::format("--device {}: this machine has {} CUDA device(s)", index, opened->count));
        DeviceProbes d = identify_gpu(*opened->module, index, catalog, inventory);
        request.device = index;
        d.results = opened->module->run(request);
        all.push_back(std::move(d));
    }
    return all;
}

}  // namespace inferbench::devices
