// The vocabulary every module shares: precisions, devices, one benchmark cell, one iteration record.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/generation.hpp"
#include "core/pipeline.hpp"
#include "core/plan/loop_settings.hpp"
#include "core/plan/measure_conditions.hpp"
#include "core/plan/scenario_settings.hpp"

namespace inferbench {

// int4: 4-bit integer weights (llama.cpp's Q4_0 blocks); int8 on a GGUF model is Q8_0.
enum class Precision { fp32, fp16, bf16, int8, fp8, int4 };

inline constexpr Precision kAllPrecisions[] = {Precision::fp32, Precision::fp16, Precision::bf16,
                                               Precision::int8, Precision::fp8, Precision::int4};

std::string_view to_string(Precision p);
std::optional<Precision> parse_precision(std::string_view text);

enum class DeviceKind { cpu, cuda };

// "cpu" or "cuda:N" ("cuda" alone means cuda:0).
struct Device {
    DeviceKind kind = DeviceKind::cpu;
    int index = 0;

    friend auto operator<=>(const Device&, const Device&) = default;
};

std::string to_string(const Device& d);
std::optional<Device> parse_device(std::string_view text);

// Backend-specific options of one cell (from the plan's `backend_options:` map), as text.
using OptionMap = std::map<std::string, std::string, std::less<>>;

// One cell of the benchmark matrix, with every setting the worker needs.
struct BenchmarkSpec {
    std::string model;  // zoo name or path to a model file
    std::string backend;
    Device device;
    Precision precision = Precision::fp32;
    std::int64_t batch_size = 1;
    std::string variant;  // the backend options swept in this cell, "key=value key=value"; else empty

    LoopSettings loop;  // the plan's, as it is
    ScenarioSettings scenario;  // the plan's, as it is
    std::int64_t timeout_ns = 0;
    std::uint64_t seed = 0;
    std::string model_cache_dir;
    OptionMap backend_options;
    // Last, so that a backend module built before it was added still finds every other member in place.
    MeasureConditions conditions;
    // The plan's inputs (an .npz, .npy or folder, backends/input_files) as an absolute path; empty: seeded random.
    // After `conditions` for the same reason.
    std::string inputs;
    // A generative cell's prompt and output lengths (core/generation); inactive for every other cell.
    GenerationSettings generation;
    // A pipeline cell's images, stages and mode (core/pipeline); inactive for every other cell. Last, for the
    // same reason as `conditions`.
    PipelineSettings pipeline;

    // "resnet50 onnxruntime cpu fp32 b8"; a generative cell adds its lengths: "llama-tiny llamacpp cpu fp32 b1 in128 out128"
    std::string label() const;
};

// Marks a per-iteration device time the backend could not measure.
inline constexpr std::int64_t kNotMeasured = -1;

// One measured iteration (one query of the cell's scenario). Times are int64 nanoseconds; start_ns is
// CLOCK_MONOTONIC, the clock every telemetry sample also uses, so latency can be laid over power and
// clocks. Where queries arrive on a schedule (server, offline, concurrency, multi_stream), start_ns is the
// query's scheduled arrival and e2e_ns runs from it to completion, so waiting for a busy backend counts;
// queue_ns is the part of e2e_ns spent waiting before the backend began (service = e2e - queue).
struct IterationRecord {
    std::int64_t start_ns = 0;
    std::int64_t e2e_ns = 0;
    std::int64_t enqueue_ns = kNotMeasured;
    std::int64_t h2d_ns = kNotMeasured;
    std::int64_t compute_ns = kNotMeasured;
    std::int64_t d2h_ns = kNotMeasured;
    std::int64_t queue_ns = kNotMeasured;  // single_stream's closed loop issues on completion: not measured
};
static_assert(sizeof(IterationRecord) == 56);

// The part of a record a backend fills in for one inference (host timing is the harness's job).
struct DeviceTimes {
    std::int64_t enqueue_ns = kNotMeasured;
    std::int64_t h2d_ns = kNotMeasured;
    std::int64_t compute_ns = kNotMeasured;
    std::int64_t d2h_ns = kNotMeasured;
};

// One node (layer) of a model as a backend's profiler timed it, in a separate profiled run after the
// measured loop (profiling never runs during the measured iterations). Kept in the order the nodes
// first ran.
struct LayerTime {
    std::string node;      // the node's name as the runtime ran it (fused or added nodes carry the runtime's name)
    std::string op_type;   // as the runtime ran it: "Conv", "FusedConv", "ReorderOutput"
    std::string provider;  // what ran it: "CPUExecutionProvider", "CUDAExecutionProvider"
    std::int64_t calls = 0;     // times it ran over the profiled iterations
    std::int64_t total_ns = 0;  // summed over those calls
    // The time is the host's dispatch of asynchronous device work (ONNX Runtime's profiler on a GPU provider
    // times the call that queues the node's kernels), not the work itself: neither a GPU time nor a share of one.
    bool host_dispatch = false;

    friend bool operator==(const LayerTime&, const LayerTime&) = default;
};

}  // namespace inferbench
