#include "runner/orchestrator/lanes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/cpu_list.hpp"
#include "telemetry/gpu_placement.hpp"

namespace inferbench::runner {
namespace {

std::vector<int> intersection(std::span<const int> a, std::span<const int> b) {
    std::vector<int> both;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    return both;
}

// The plan's CPUs, those this process may use (check_plan refused the others where it could tell).
WorkerPlacement planned_placement(const Plan& plan, const Device& device, std::span<const int> allowed) {
    return {intersection(plan.cpu_affinity.at(device), allowed), std::nullopt, "", "", "the plan's cpu_affinity"};
}

WorkerPlacement nearest_placement(const telemetry::Nvml* nvml, const Device& device, std::span<const int> allowed) {
    WorkerPlacement placement;
    if (!nvml) {
        placement.not_pinned = "no NVML to say which CPUs are nearest the GPU";
        return placement;
    }
    if (device.index >= nvml->device_count()) {
        placement.not_pinned = fmt::format("NVML lists no GPU {}", device.index);
        return placement;
    }
    telemetry::GpuPlacement nearest = telemetry::gpu_placement(*nvml, device.index);
    placement.cpus = intersection(nearest.cpus, allowed);
    if (placement.cpus.empty()) {
        placement.not_pinned = nearest.cpus.empty() ? nearest.cpus_unknown
                                                    : fmt::format("none of the GPU's nearest CPUs ({}) may be used here",
                                                                  format_cpu_list(nearest.cpus));
        return placement;
    }
    placement.memory_node = nearest.memory_node;
    placement.no_memory_node = nearest.memory_node_unknown;
    placement.chosen_by = fmt::format("nearest GPU {} (NVML)", device.index);
    return placement;
}

}  // namespace

std::vector<Lane> split_into_lanes(std::span<const BenchmarkSpec> cells, std::span<const CellRepeat> order) {
    std::vector<Lane> lanes;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const Device& device = cells[order[k].ordinal].device;
        auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return l.device == device; });
        if (lane == lanes.end()) lane = lanes.insert(lanes.end(), Lane{device, {}});
        lane->positions.push_back(k);
    }
    return lanes;
}

std::map<Device, WorkerPlacement> worker_placements(const Plan& plan, std::span<const Device> devices, bool per_device,
                                                    const telemetry::Nvml* nvml, std::span<const int> allowed) {
    std::map<Device, WorkerPlacement> placements;
    std::vector<int> taken;  // by the GPU lanes
    for (const Device& device : devices) {
        WorkerPlacement placement;
        if (plan.cpu_affinity.contains(device)) placement = planned_placement(plan, device, allowed);
        else if (per_device && device.kind == DeviceKind::cuda) placement = nearest_placement(nvml, device, allowed);
        else continue;
        if (device.kind == DeviceKind::cuda) taken.insert(taken.end(), placement.cpus.begin(), placement.cpus.end());
        placements[device] = std::move(placement);
    }
    const Device cpu{DeviceKind::cpu, 0};
    if (per_device && std::find(devices.begin(), devices.end(), cpu) != devices.end() && !placements.contains(cpu)) {
        std::sort(taken.begin(), taken.end());
        WorkerPlacement& placement = placements[cpu];
        std::set_difference(allowed.begin(), allowed.end(), taken.begin(), taken.end(), std::back_inserter(placement.cpus));
        placement.chosen_by = "the CPUs no GPU lane takes";
        if (placement.cpus.empty())
            placement.not_pinned = "the GPU workers' CPUs cover every CPU here; give cpu_affinity.cpu to reserve some";
    }
    return placements;
}

TelemetrySource pinning_source(const WorkerPlacement& placement) {
    if (placement.cpus.empty()) return {"pinning", "unavailable", "not pinned: " + placement.not_pinned};
    std::string detail = fmt::format("CPUs {} ({})", format_cpu_list(placement.cpus), placement.chosen_by);
    if (placement.memory_node) detail += fmt::format("; memory node {} preferred", *placement.memory_node);
    else if (!placement.no_memory_node.empty()) detail += "; no memory node preferred: " + placement.no_memory_node;
    return {"pinning", "ok", detail};
}

std::size_t ConcurrencyLog::begin(std::int64_t ordinal, std::int64_t repeat, std::string device, std::int64_t now_ns) {
    const std::lock_guard lock(mutex_);
    entries_.push_back({{ordinal, repeat, std::move(device)}, now_ns, std::nullopt, false});
    return entries_.size() - 1;
}

std::vector<store::ConcurrentBenchmark> ConcurrencyLog::end(std::size_t handle, std::int64_t now_ns, bool skipped) {
    const std::lock_guard lock(mutex_);
    Entry& self = entries_.at(handle);
    self.end_ns = now_ns;
    self.skipped = skipped;
    std::vector<store::ConcurrentBenchmark> overlapped;
    if (skipped) return overlapped;
    for (const Entry& other : entries_) {
        if (&other == &self || other.skipped || other.benchmark.device == self.benchmark.device) continue;
        const bool overlaps = other.begin_ns < now_ns && (!other.end_ns || *other.end_ns > self.begin_ns);
        if (overlaps) overlapped.push_back(other.benchmark);
    }
    return overlapped;
}

}  // namespace inferbench::runner
