// The roofline placement of stored benchmarks: each summarized benchmark at its arithmetic intensity and
// achieved rate under its device's roofs (devices/roofline.hpp: the roofs and the placement arithmetic), and
// per layer, each stored layer time under the same roofs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/generation_bounds.hpp"
#include "analysis/summary.hpp"
#include "devices/catalog.hpp"
#include "devices/roofline.hpp"
#include "models/cost_model.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

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
    std::optional<devices::Precision> precision;
    std::optional<devices::Placement> datasheet;  // or estimated, for a CPU
    std::optional<devices::Placement> measured;
    std::vector<std::string> notes;
    // A generative benchmark is two points: "prefill" (an inference is the batch's prefill: its FLOPs, the weights
    // read once and the KV cache written, at 1 / mean TTFT) and "decode" (an inference is one decode step of the
    // batch: analysis/generation_bounds' FLOPs and bytes per step, at the achieved decode steps/s). Empty otherwise.
    std::string phase;
};

struct RooflineSet {
    std::vector<devices::DeviceRoofs> devices;
    std::vector<RooflinePoint> points;
    std::vector<std::string> skipped;  // benchmarks that could not be placed, and why
};

struct RooflineOptions {
    // A catalog key for the GPU benchmarks of runs that did not record which GPU they ran on.
    std::string roofs_key;
};

// Places every summarized benchmark that is ok and has the model-cost metrics and a throughput, in the
// order given: the summaries are the caller's (computed once, report/report_data.hpp), never recomputed
// here. Devices are identified from each run's environment (the CPU model; the GPUs NVML listed, matched
// to the catalog) and the store's probes. Throws UserError for an unknown roofs_key.
RooflineSet roofline_points(const store::ResultsStore& results, std::span<const BenchmarkSummary> summaries,
                            const devices::Catalog& catalog, const RooflineOptions& options = {});

// Each summary's generation bounds (analysis/generation_bounds) under its device's roofs, the devices identified as
// roofline_points identifies them; nothing for a summary that is not generative, has no generation metrics or no
// decoder facts. In the order given.
std::vector<std::optional<GenerationBounds>> generation_bounds(const store::ResultsStore& results,
                                                               std::span<const BenchmarkSummary> summaries,
                                                               const devices::Catalog& catalog,
                                                               const RooflineOptions& options = {});

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
    std::optional<devices::Placement> datasheet;  // or estimated, for a CPU
    std::optional<devices::Placement> measured;
};

struct LayerSet {
    std::size_t point = 0;           // index into RooflineSet::points
    std::vector<LayerPoint> layers;  // in the order the nodes first ran
    std::int64_t total_ns = 0;       // summed over every layer and call
    std::size_t uncosted = 0;        // layers without a cost
    double uncosted_share_pct = 0;   // their share of total_ns
    // Layers whose times are the host's dispatch of GPU work (LayerTime::host_dispatch): not placed, and the
    // set's shares are not shares of GPU time.
    std::size_t host_dispatch = 0;
    std::vector<std::string> notes;
};

// The computation for one benchmark: its layer times, its model's nodes (at its batch size) and the roofs and
// precision it is placed under; bytes of the cost model (fp32 files) multiplied by `bytes_scale`.
LayerSet place_layers(std::span<const LayerTime> layers, std::span<const models::NodeCost> nodes, double bytes_scale,
                      const devices::DeviceRoofs& roofs, std::optional<devices::Precision> precision);

// For every point of `set` whose benchmark has stored layer times: its model file's cost model at its batch
// size, then place_layers(). A model file that is gone or unreadable leaves every layer without a cost, said
// in the set's notes.
std::vector<LayerSet> roofline_layers(const store::ResultsStore& results, const RooflineSet& set);

}  // namespace inferbench::analysis
