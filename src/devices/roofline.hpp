// The roofline model: where a benchmark sits under its device's roofs. A benchmark's arithmetic intensity
// is the model's FLOPs per inference over its bytes moved per inference (the stored model-cost metrics);
// its achieved rate is FLOPs per inference x inferences per second. Attainable = min(peak, intensity x
// bandwidth); below the ridge point (peak / bandwidth) a benchmark is memory-bound, above it compute-bound.
// Roofs come from the datasheet (dense rates; a CPU's are estimated) and, where `inferbench probe` stored
// them, from measurements; each benchmark is placed under both. Here: the roofs of a device and the placement
// arithmetic; placing stored benchmarks and their layers is analysis/roofline_placement.hpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/catalog.hpp"
#include "store/results_store.hpp"

namespace inferbench::devices {

enum class Bound { memory, compute };
std::string_view bound_name(Bound bound);  // "memory-bound", "compute-bound"

// Base units throughout: operations per second, bytes per second, operations per byte.
double attainable_rate(double peak_per_s, double bandwidth_bytes_per_s, double intensity);
double ridge_point(double peak_per_s, double bandwidth_bytes_per_s);
Bound bound_at(double peak_per_s, double bandwidth_bytes_per_s, double intensity);
double percent_of_attainable(double achieved_per_s, double attainable_per_s);

enum class RoofOrigin { datasheet, estimated, measured };
std::string_view origin_name(RoofOrigin origin);  // "datasheet", "estimated", "measured"

struct ComputeRoof {
    Precision precision = Precision::fp32;
    double per_s = 0;  // operations per second, dense
    RoofOrigin origin = RoofOrigin::datasheet;
    std::string what;  // "tensor cores, dense", "CUDA cores", "probe gemm_bf16"
};

struct MemoryRoof {
    std::string level;  // "DRAM" or "L2"
    double bytes_per_s = 0;
    RoofOrigin origin = RoofOrigin::datasheet;
    std::string what;  // "datasheet", "probe dram_copy"
};

struct DeviceRoofs {
    std::string key;            // catalog key, "cpu:<model>", "gpu:<name>"; empty when the device is unknown
    std::string name;           // for people
    std::string identified_by;  // "PCI device id 0x2335", "the run's CPU model", ...
    std::vector<ComputeRoof> compute;
    std::vector<MemoryRoof> memory;
    std::vector<std::string> notes;  // why roofs are missing, what to do
    // A CPU's last-level cache as the run's environment says (cpu_last_level_cache_bytes); none for GPUs or where
    // not stored: bytes that fit it are not bounded by DRAM's bandwidth.
    std::optional<double> last_level_cache_bytes = {};

    // The datasheet (or estimated) roof when `measured` is false, else the measured one.
    const ComputeRoof* compute_roof(Precision precision, bool measured) const;
    const MemoryRoof* dram(bool measured) const;
    // The DRAM roof a compute roof is drawn and placed with: of the same origin; for a CPU's estimated
    // compute roof the measured one (a CPU has no datasheet bandwidth).
    const MemoryRoof* dram_for(const ComputeRoof& roof) const;
    bool has_roofs() const { return !compute.empty() || !memory.empty(); }
};

// Roofs of a device: the entry's dense datasheet peaks and DRAM bandwidth (none without an entry), plus
// the latest stored value of each of its probes (fma_*, gemm_* per precision; dram_* as DRAM, the best
// of copy, triad and memcpy; l2_read as L2).
DeviceRoofs device_roofs(const DeviceSpec* spec, std::span<const store::ProbeRecord> probes);

// The datasheet (or estimated) figure a probe is compared with, in the probe's unit (TFLOP/s, TOPS, GB/s):
// fma_fp32 / fma_fp64 -> the fp32 / fp64 peak, gemm_<p> -> the dense <p> peak, dram_* -> the memory
// bandwidth; nothing for the others (fma_fp16x2, imad_int32, l2_read) or where the entry has no figure.
std::optional<double> datasheet_value(const DeviceSpec& spec, std::string_view probe);

// The roof a benchmark of this precision runs under: fp32 -> fp32 (CUDA cores), fp16, bf16, fp8, int8
// (tensor cores); nothing for other precisions.
std::optional<Precision> roof_precision(std::string_view benchmark_precision);

struct Placement {
    RoofOrigin origin = RoofOrigin::datasheet;            // of the compute roof
    RoofOrigin bandwidth_origin = RoofOrigin::datasheet;  // measured under a CPU's estimated compute roof
    double peak_per_s = 0;
    double bandwidth_bytes_per_s = 0;
    double attainable_per_s = 0;
    double percent = 0;  // achieved / attainable x 100
    Bound bound = Bound::memory;
};
// Under the datasheet (measured = false) or measured roofs; nothing when either roof is missing. A CPU's
// estimated compute roof is paired with its measured memory bandwidth (it has no datasheet one).
std::optional<Placement> place(const DeviceRoofs& roofs, Precision precision, double intensity, double achieved_per_s,
                               bool measured);

}  // namespace inferbench::devices
