// Which catalog entry a present GPU is: by PCI device id first, then by the name NVML / nvidia-smi
// print, compared without case, brand prefixes ("NVIDIA ", "Tesla ", "GeForce ") and repeated spaces; a
// trailing memory size ("-32GB", " 80GB HBM3") may be left out or differ in form only when it equals
// the entry's memory size, so a 40 GB board never takes the roofs of its 80 GB sibling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "devices/catalog.hpp"

namespace inferbench::devices {

struct GpuMatch {
    const DeviceSpec* device = nullptr;  // nothing matched
    std::string how;                     // "PCI device id 0x2335", "name 'NVIDIA H200'"
};

// pci_device_id as NVML gives it: device id << 16 | vendor id (0x233510DE); a bare 16-bit device id is
// taken as NVIDIA's.
GpuMatch match_gpu(const Catalog& catalog, std::string_view name, std::optional<std::uint32_t> pci_device_id);

// The name as compared: "NVIDIA  GeForce RTX 2080" -> "rtx 2080", "Tesla V100-PCIE-32GB" -> "v100-pcie-32gb".
std::string normalize_gpu_name(std::string_view name);

// The normalised name without a trailing memory size, and that size in GB: "v100-pcie-32gb" -> ("v100-pcie", 32),
// "h100 80gb hbm3" -> ("h100", 80). Without a size: (name, nullopt).
std::pair<std::string, std::optional<double>> split_memory_suffix(const std::string& normalized);

// The 16-bit PCI device id of NVML's combined id, if its vendor is NVIDIA (0x10DE) or it is bare.
std::optional<std::uint16_t> nvidia_device_id(std::uint32_t pci_device_id);

// "no catalog entry for NAME (PCI device id 0x2335); add one to data/devices.yaml"
std::string no_match_message(std::string_view name, std::optional<std::uint32_t> pci_device_id);

}  // namespace inferbench::devices
