#include "core/plan/cpu_affinity.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "core/cpu_list.hpp"
#include "core/error.hpp"
#include "core/plan/plan.hpp"

namespace inferbench {

std::pair<Device, std::vector<int>> read_cpu_affinity(std::string_view device_text, std::string_view cpus_text,
                                                      std::string_view origin) {
    const auto device = parse_device(device_text);
    if (!device)
        throw UserError(fmt::format("{}: cpu_affinity.{}: unknown device '{}'; valid choices: cpu, cuda, cuda:N", origin,
                                    device_text, device_text));
    std::string why;
    const auto cpus = parse_cpu_list(cpus_text, why);
    if (!cpus) throw UserError(fmt::format("{}: cpu_affinity.{}: {}", origin, device_text, why));
    return {*device, *cpus};
}

CpuAffinityMap read_cpu_affinity_map(const std::vector<CpuAffinityEntry>& entries) {
    CpuAffinityMap map;
    for (const CpuAffinityEntry& entry : entries) {
        auto [device, cpus] = read_cpu_affinity(entry.device, entry.cpus, entry.origin);
        if (!map.emplace(device, std::move(cpus)).second)
            throw UserError(fmt::format("{}: cpu_affinity.{}: {} is given twice; keep one entry per device", entry.origin,
                                        entry.device, to_string(device)));
    }
    return map;
}

void check_cpu_affinity(const Plan& plan) {
    const std::vector<int> allowed = allowed_cpus();
    for (const auto& [device, cpus] : plan.cpu_affinity) {
        std::vector<int> outside;
        std::set_difference(cpus.begin(), cpus.end(), allowed.begin(), allowed.end(), std::back_inserter(outside));
        if (!outside.empty() && !allowed.empty())
            throw UserError(fmt::format("{}: cpu_affinity.{}: CPU {} is not one inferbench may run on here (allowed: {}); "
                                        "name CPUs of this host",
                                        origin_of(plan, {"cpu_affinity"}), to_string(device), format_cpu_list(outside),
                                        format_cpu_list(allowed)));
        if (std::find(plan.devices.begin(), plan.devices.end(), device) != plan.devices.end()) continue;
        std::vector<std::string> devices;
        for (const Device& d : plan.devices) devices.push_back(to_string(d));
        throw UserError(fmt::format("{}: cpu_affinity.{}: {} is not one of the plan's devices ({}); remove the entry or "
                                    "add the device",
                                    origin_of(plan, {"cpu_affinity"}), to_string(device), to_string(device),
                                    fmt::join(devices, ", ")));
    }
}

std::map<std::string, std::string> cpu_affinity_texts(const CpuAffinityMap& affinity) {
    std::map<std::string, std::string> texts;
    for (const auto& [device, cpus] : affinity) texts[to_string(device)] = format_cpu_list(cpus);
    return texts;
}

}  // namespace inferbench
