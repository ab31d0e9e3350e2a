// The roofline model: where a benchmark sits under its device's roofs. A benchmark's arithmetic intensity
// is the model's FLOPs per inference over its bytes moved per inference (the stored model-cost metrics);
// its achieved rate is FLOPs per inference x inferences per second. Attainable = min(peak, intensity x
// bandwidth); below the ridge point (peak / bandwidth) a benchmark is memory-bound, above it compute-bound.
// Roofs come from the datasheet (dense rates; a CPU's are estimated) and, where `inferbench probe` stored
// them, from measurements; each benchmark is placed under both.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/catalog.hpp"
#include "models/cost_model.hpp"
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

struct RooflinePoint {
    store::BenchmarkRecord benchmark;
    std::string label;               // "mobilenet b1 fp32"
    std::size_t device = 0;          // index into RooflineSet::devices
    double flops_per_inference = 0;  // operations per sample (OP for integer precisions)
    double bytes_per_inference = 0;
    double intensity = 0;         // operations per byte
    double throughput_per_s = 0;  // inferences per second
    double achieved_per_s = 0;    // operations per second
    bool integer = false;         // int8: TOPS and OP/B
    std::optional<Precision> precision;
    std::optional<Placement> datasheet;  // or estimated, for a CPU
    std::optional<Placement> measured;
    std::vector<std::string> notes;
};

struct RooflineSet {
    std::vector<DeviceRoofs> devices;
    std::vector<RooflinePoint> points;
    std::vector<std::string> skipped;  // benchmarks that could not be placed, and why
};

struct RooflineOptions {
    // A catalog key for the GPU benchmarks of runs that did not record which GPU they ran on.
    std::string roofs_key;
};

// Places every given benchmark that is ok and has the model-cost metrics and a throughput. Devices are
// identified from each run's environment (the CPU model; the GPUs NVML listed, matched to the catalog).
// Throws UserError for an unknown roofs_key.
RooflineSet roofline_points(const store::ResultsStore& results, std::span<const store::BenchmarkRecord> benchmarks,
                            const Catalog& catalog, const RooflineOptions& options = {});

// Per layer: each stored layer time of a benchmark (a backend's separate profiled run, e.g. onnxruntime's
// layer_profile) under the benchmark's roofs. A layer's FLOPs and bytes are its node's in the static cost
// model (models/cost_model.hpp) for the whole batch, bytes at the benchmark's precision, found by the ONNX
// node name and the op type. A node the runtime fused with others (same name, another op type), renamed or
// added (a name the model lacks) gets no cost: it is counted and said, never estimated.
struct LayerPoint {
    LayerTime layer;
    double mean_ns = 0;    // per call: total / calls
    double share_pct = 0;  // of the summed time of all the benchmark's layers
    bool costed = false;
    std::vector<std::string> flags;  // the node's cost-model flags ("depthwise", "1x1", "unaligned"), costed only
    std::string note;      // why it has no cost or no placement; else empty
    double flops = 0;      // per call, the whole batch (costed only)
    double bytes = 0;
    double intensity = 0;       // flops / bytes
    double achieved_per_s = 0;  // flops / mean time
    std::optional<Placement> datasheet;  // or estimated, for a CPU
    std::optional<Placement> measured;
};

struct LayerSet {
    std::size_t point = 0;           // index into RooflineSet::points
    std::vector<LayerPoint> layers;  // in the order the nodes first ran
    std::int64_t total_ns = 0;       // summed over every layer and call
    std::size_t uncosted = 0;        // layers without a cost
    double uncosted_share_pct = 0;   // their share of total_ns
    std::vector<std::string> notes;
};

// The computation for one benchmark: its layer times, its model's nodes (at its batch size) and the roofs and
// precision it is placed under; bytes of the cost model (fp32 files) multiplied by `bytes_scale`.
LayerSet place_layers(std::span<const LayerTime> layers, std::span<const models::NodeCost> nodes, double bytes_scale,
                      const DeviceRoofs& roofs, std::optional<Precision> precision);

// For every point of `set` whose benchmark has stored layer times: its model file's cost model at its batch
// size, then place_layers(). A model file that is gone or unreadable leaves every layer without a cost, said
// in the set's notes.
std::vector<LayerSet> roofline_layers(const store::ResultsStore& results, const RooflineSet& set);

}  // namespace inferbench::devices
