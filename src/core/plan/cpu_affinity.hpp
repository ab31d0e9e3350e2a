// The plan's `cpu_affinity`: the CPUs each device's worker is pinned to, overriding the CPUs nearest the GPU that
// NVML names (`cpu_affinity: {cuda:0: "0-7", cuda:1: "8-15"}`, or --set cpu_affinity.cuda:0=0-7).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/spec.hpp"

namespace inferbench {

struct Plan;

using CpuAffinityMap = std::map<Device, std::vector<int>>;

// One entry read; throws UserError "ORIGIN: cpu_affinity.DEVICE: what is wrong" (an unknown device, a malformed
// CPU list).
std::pair<Device, std::vector<int>> read_cpu_affinity(std::string_view device_text, std::string_view cpus_text,
                                                      std::string_view origin);

// A plan file's `cpu_affinity` map: each entry read, a device given twice (cuda and cuda:0) refused.
struct CpuAffinityEntry {
    std::string device;
    std::string cpus;
    std::string origin;  // "plan.yaml:7:12"
};
CpuAffinityMap read_cpu_affinity_map(const std::vector<CpuAffinityEntry>& entries);

// Throws UserError where cpu_affinity names a device the plan's devices do not list.
void check_cpu_affinity(const Plan& plan);

// device text -> CPU list text, as the stored plan and a plan file write it.
std::map<std::string, std::string> cpu_affinity_texts(const CpuAffinityMap& affinity);

}  // namespace inferbench
