// The GPUs present on this host, as the driver names them: for matching datasheet entries and for
// the environment of a run. Through NVML where it opens, else nvidia-smi, else none (with the reason).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferbench::telemetry {

struct GpuIdentity {
    int index = 0;
    std::string name;            // "NVIDIA H200"
    std::string uuid;            // "GPU-..."
    std::string pci_bus_id;      // "00000000:19:00.0"
    std::optional<std::uint32_t> pci_device_id;  // NVML's pciDeviceId: device id << 16 | vendor id (0x233510DE)
    std::optional<double> memory_total_mib;
    std::string driver_version;  // "580.65.06"
    // The clock the GPU runs at by default under load (NVML's default applications clock, SM, else graphics;
    // nvidia-smi's "Default Applications Clocks"): what throttle_threshold is a fraction of.
    std::optional<double> default_applications_clock_mhz;
};

struct GpuInventory {
    std::vector<GpuIdentity> gpus;
    std::string source;       // "nvml", "nvidia-smi" or "" when none
    std::string unavailable;  // why no GPU could be listed (empty when source is set)
};

GpuInventory list_gpus();

}  // namespace inferbench::telemetry
