#include "devices/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"
#include "devices/quantities.hpp"

namespace inferbench::devices {
namespace {

struct ProbeRoof {
    std::string_view probe;
    Precision precision;
};
constexpr ProbeRoof kComputeProbes[] = {{"fma_fp64", Precision::fp64},  {"fma_fp32", Precision::fp32},
                                        {"gemm_tf32", Precision::tf32}, {"gemm_fp16", Precision::fp16},
                                        {"gemm_bf16", Precision::bf16}, {"gemm_fp8", Precision::fp8},
                                        {"gemm_int8", Precision::int8}};

void add_datasheet_roofs(const DeviceSpec& spec, DeviceRoofs& roofs) {
    const RoofOrigin origin = spec.estimated ? RoofOrigin::estimated : RoofOrigin::datasheet;
    for (const auto& [precision, peak] : spec.peaks) {
        if (!peak.has_rate()) continue;
        roofs.compute.push_back({precision, peak.dense * 1e12, origin,
                                 peak.cuda_cores ? std::string(spec.kind == "cpu" ? "vector FMA units" : "CUDA cores")
                                                 : std::string("tensor cores, dense")});
    }
    if (spec.memory_bandwidth_gbs)
        roofs.memory.push_back({"DRAM", spec.memory_bandwidth_gbs->value * 1e9, RoofOrigin::datasheet, "datasheet"});
}

void add_measured_roofs(std::span<const store::ProbeRecord> probes, DeviceRoofs& roofs) {
    std::map<std::string, const store::ProbeRecord*> latest;  // probes come oldest first
    for (const auto& probe : probes) latest[probe.name] = &probe;
    for (const auto& [probe, precision] : kComputeProbes) {
        const auto it = latest.find(std::string(probe));
        if (it == latest.end() || it->second->value <= 0) continue;
        roofs.compute.push_back(
            {precision, it->second->value * 1e12, RoofOrigin::measured, "probe " + it->second->name});
    }
    const store::ProbeRecord* dram = nullptr;
    for (const char* name : {"dram_copy", "dram_triad", "dram_memcpy"}) {
        const auto it = latest.find(name);
        if (it != latest.end() && (!dram || it->second->value > dram->value)) dram = it->second;
    }
    if (dram) roofs.memory.push_back({"DRAM", dram->value * 1e9, RoofOrigin::measured, "probe " + dram->name});
    if (const auto it = latest.find("l2_read"); it != latest.end())
        roofs.memory.push_back({"L2", it->second->value * 1e9, RoofOrigin::measured, "probe l2_read"});
}

}  // namespace

std::string_view bound_name(Bound bound) { return bound == Bound::memory ? "memory-bound" : "compute-bound"; }

double attainable_rate(double peak_per_s, double bandwidth_bytes_per_s, double intensity) {
    return std::min(peak_per_s, intensity * bandwidth_bytes_per_s);
}

double ridge_point(double peak_per_s, double bandwidth_bytes_per_s) { return peak_per_s / bandwidth_bytes_per_s; }

Bound bound_at(double peak_per_s, double bandwidth_bytes_per_s, double intensity) {
    return intensity < ridge_point(peak_per_s, bandwidth_bytes_per_s) ? Bound::memory : Bound::compute;
}

double percent_of_attainable(double achieved_per_s, double attainable_per_s) {
    return attainable_per_s > 0 ? achieved_per_s / attainable_per_s * 100.0 : 0.0;
}

std::string_view origin_name(RoofOrigin origin) {
    switch (origin) {
        case RoofOrigin::datasheet:
            return "datasheet";
        case RoofOrigin::estimated:
            return "estimated";
        case RoofOrigin::measured:
            return "measured";
    }
    return "?";
}

const ComputeRoof* DeviceRoofs::compute_roof(Precision precision, bool measured) const {
    for (const auto& roof : compute) {
        if (roof.precision == precision && (roof.origin == RoofOrigin::measured) == measured) return &roof;
    }
    return nullptr;
}

const MemoryRoof* DeviceRoofs::dram(bool measured) const {
    for (const auto& roof : memory) {
        if (roof.level == "DRAM" && (roof.origin == RoofOrigin::measured) == measured) return &roof;
    }
    return nullptr;
}

const MemoryRoof* DeviceRoofs::dram_for(const ComputeRoof& roof) const {
    if (const MemoryRoof* same = dram(roof.origin == RoofOrigin::measured)) return same;
    return roof.origin == RoofOrigin::estimated ? dram(true) : nullptr;
}

DeviceRoofs device_roofs(const DeviceSpec* spec, std::span<const store::ProbeRecord> probes) {
    DeviceRoofs roofs;
    if (spec) {
        roofs.key = spec->key;
        roofs.name = spec->name;
        add_datasheet_roofs(*spec, roofs);
    }
    add_measured_roofs(probes, roofs);
    return roofs;
}

std::optional<double> datasheet_value(const DeviceSpec& spec, std::string_view probe) {
    if (probe.starts_with("dram_")) {
        if (!spec.memory_bandwidth_gbs) return std::nullopt;
        return spec.memory_bandwidth_gbs->value;
    }
    for (const auto& [name, precision] : kComputeProbes) {
        if (name != probe) continue;
        const Peak* peak = spec.peak(precision);
        if (!peak || !peak->has_rate()) return std::nullopt;
        return peak->dense;
    }
    return std::nullopt;
}

std::optional<Precision> roof_precision(std::string_view benchmark_precision) {
    for (const Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8, Precision::int8}) {
        if (precision_name(p) == benchmark_precision) return p;
    }
    return std::nullopt;
}

std::optional<Placement> place(const DeviceRoofs& roofs, Precision precision, double intensity, double achieved_per_s,
                               bool measured) {
    const ComputeRoof* compute = roofs.compute_roof(precision, measured);
    const MemoryRoof* memory = compute ? roofs.dram_for(*compute) : nullptr;
    if (!compute || !memory || memory->bytes_per_s <= 0) return std::nullopt;
    Placement p;
    p.origin = compute->origin;
    p.bandwidth_origin = memory->origin;
    p.peak_per_s = compute->per_s;
    p.bandwidth_bytes_per_s = memory->bytes_per_s;
    p.attainable_per_s = attainable_rate(p.peak_per_s, p.bandwidth_bytes_per_s, intensity);
    p.percent = percent_of_attainable(achieved_per_s, p.attainable_per_s);
    p.bound = bound_at(p.peak_per_s, p.bandwidth_bytes_per_s, intensity);
    return p;
}

}  // namespace inferbench::devices
