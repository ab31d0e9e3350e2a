#include "telemetry/gpu_placement.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>

namespace inferbench::telemetry {

std::optional<int> pci_numa_node(std::string_view nvml_bus_id, const std::filesystem::path& sys_root, std::string& why) {
    // NVML writes an 8-digit PCI domain in upper case; sysfs a 4-digit one in lower case.
    constexpr std::size_t kSysfsIdLength = 12;  // "0000:19:00.0"
    if (nvml_bus_id.size() < kSysfsIdLength) {
        why = fmt::format("PCI bus id '{}' is not known", nvml_bus_id);
        return std::nullopt;
    }
    std::string id(nvml_bus_id.substr(nvml_bus_id.size() - kSysfsIdLength));
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::filesystem::path file = sys_root / "bus/pci/devices" / id / "numa_node";
    std::ifstream in(file);
    int node = -1;
    if (!(in >> node)) {
        why = fmt::format("{} cannot be read", file.string());
        return std::nullopt;
    }
    if (node < 0) {
        why = fmt::format("{} says -1 (no memory node given)", file.string());
        return std::nullopt;
    }
    return node;
}

GpuPlacement gpu_placement(const Nvml& nvml, int index, const std::filesystem::path& sys_root) {
    GpuPlacement placement;
    placement.cpus = nvml.cpu_affinity(index, placement.cpus_unknown);
    placement.memory_node = pci_numa_node(nvml.identity(index).pci_bus_id, sys_root, placement.memory_node_unknown);
    return placement;
}

}  // namespace inferbench::telemetry
