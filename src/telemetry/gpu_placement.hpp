// Where a GPU sits on the host: the CPUs nearest it (NVML's CPU affinity) and its memory node (the NUMA node the
// kernel gives its PCI device), so that a worker driving that GPU can be pinned next to it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/nvml.hpp"

namespace inferbench::telemetry {

struct GpuPlacement {
    std::vector<int> cpus;            // ascending; empty where NVML does not say (cpus_unknown says why)
    std::string cpus_unknown;
    std::optional<int> memory_node;   // unset where the kernel does not say (memory_node_unknown says why)
    std::string memory_node_unknown;
};

// GPU `index` of `nvml`; its memory node read under `sys_root` (tests hand in a folder of their own).
GpuPlacement gpu_placement(const Nvml& nvml, int index, const std::filesystem::path& sys_root = "/sys");

// The NUMA node of the PCI device NVML names "00000000:19:00.0": sys_root/bus/pci/devices/0000:19:00.0/numa_node;
// nullopt with `why` where the file is missing or says -1 (a host of one node, or firmware that does not tell).
std::optional<int> pci_numa_node(std::string_view nvml_bus_id, const std::filesystem::path& sys_root, std::string& why);

}  // namespace inferbench::telemetry
