// The GPUs the NVIDIA kernel driver lists in /proc (/proc/driver/nvidia/gpus/<PCI address>/information),
// for naming a GPU without NVML or nvidia-smi: `list devices`, and trtexec's device name when
// nvidia-smi does not answer.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace inferbench {

struct DriverGpu {
    std::string pci_address;  // "0000:19:00.0"
    std::string model;        // the information file's "Model:", e.g. "NVIDIA H200"; empty when it has none
};

// Sorted by PCI address, the order CUDA enumerates them by default; none without the driver.
std::vector<DriverGpu> driver_gpus(const std::filesystem::path& root = "/proc/driver/nvidia/gpus");

}  // namespace inferbench
