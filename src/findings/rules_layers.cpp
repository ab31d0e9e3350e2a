// The per-layer profile: memory-bound layers under the device's roofs, the layer kinds that are known
// pitfalls (depthwise and 1x1 convolutions, dimensions off the tensor cores' multiple of 8), time in
// data movement, and nodes a GPU benchmark ran on the CPU.
#include <algorithm>

#include <fmt/format.h>

#include "findings/layer_facts.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

bool has_flag(const analysis::LayerPoint& layer, std::string_view flag) {
    return std::find(layer.flags.begin(), layer.flags.end(), flag) != layer.flags.end();
}

Finding layer_finding(const BenchmarkEvidence& e, std::string id, Severity severity, const LayerShare& share,
                      std::string statement, std::string try_next) {
    return {std::move(id), severity, {e.id()}, std::move(statement), {{"layer_times"}, std::nullopt, share.labels()},
            std::move(try_next)};
}

// A profile whose GPU layers were timed as the host's dispatch of their work: only counts of layers show.
std::vector<Finding> dispatch_timed_layers(const BenchmarkEvidence& e) {
    const auto fallback = share_where(*e.layers, [](const auto& l) { return is_cpu_node(l.layer); });
    if (!e.on_gpu() || fallback.layers.empty()) return {};
    return {
        layer_finding(e, "layers.cpu_fallback", Severity::problem, fallback,
                      fmt::format("{} layers of this GPU benchmark ran on the CPU, each with copies to and from the "
                                  "GPU (their share of the GPU time is not measured)",
                                  fallback.layers.size()),
                      "find why the GPU provider rejected them (the runtime's verbose log names the op and type) "
                      "and replace or re-export those ops")};
}

}  // namespace

std::vector<Finding> layer_pitfalls(const BenchmarkEvidence& e) {
    if (!e.layers || e.layers->layers.empty()) return {};
    const auto& set = *e.layers;
    if (set.host_dispatch > 0) return dispatch_timed_layers(e);
    std::vector<Finding> out;
    const bool placed = std::any_of(set.layers.begin(), set.layers.end(),
                                    [](const auto& l) { return l.datasheet || l.measured; });
    if (placed) {
        const auto memory = share_where(set, is_memory_bound);
        if (memory.share_pct >= limits::kMemoryBoundSharePct)
            out.push_back(layer_finding(
                e, "layers.memory_bound", Severity::info, memory,
                fmt::format("{:.0f}% of the profiled time is in {} layers that are memory-bound under the device's "
                            "roofs: lower precision or faster math gains little there",
                            memory.share_pct, memory.layers.size()),
                "fuse these layers with their neighbours, keep activations in a lower precision (fewer bytes), or "
                "raise the batch so weights are read once for more samples"));
    }
    const bool gpu = e.on_gpu();
    struct Pitfall {
        std::string_view flag, id, what, advice;
        bool gpu_only;
    };
    static constexpr Pitfall kPitfalls[] = {
        {"depthwise", "layers.depthwise", "depthwise convolutions (memory-bound, little tensor-core use)",
         "expect these layers to run near memory bandwidth; fuse them with the following pointwise convolution "
         "or consider a model with fewer depthwise stages",
         false},
        {"1x1", "layers.pointwise", "1x1 convolutions (GEMMs whose speed depends on layout and fusion)",
         "use a channels-last layout and let the runtime fuse the 1x1 convolution with its activation", false},
        {"unaligned", "layers.unaligned",
         "convolutions or GEMMs with a channel or feature dimension that is not a multiple of 8 (tensor cores "
         "need multiples of 8 at fp16, 16 at int8)",
         "pad the channels or features to a multiple of 8 (16 for int8) in the model", true},
    };
    for (const auto& p : kPitfalls) {
        if (p.gpu_only && !gpu) continue;
        const auto share = share_where(set, [&](const auto& l) { return has_flag(l, p.flag); });
        if (share.share_pct < limits::kPitfallSharePct) continue;
        out.push_back(layer_finding(e, std::string(p.id), Severity::info, share,
                                    fmt::format("{:.0f}% of the profiled time is in {} {}", share.share_pct,
                                                share.layers.size(), p.what),
                                    std::string(p.advice)));
    }
    const auto movement = share_where(set, [](const auto& l) { return is_data_movement(l.layer.op_type); });
    if (movement.share_pct >= limits::kDataMovementSharePct)
        out.push_back(layer_finding(e, "layers.data_movement", Severity::warning, movement,
                                    fmt::format("{:.0f}% of the profiled time is in {} data-movement layers "
                                                "(copies, reshapes, transposes, reformats) that compute nothing",
                                                movement.share_pct, movement.layers.size()),
                                    "export the model with a fixed layout (no transposes around convolutions), keep "
                                    "one precision end to end, let the runtime fold reshapes"));
    if (gpu) {
        const auto fallback = share_where(set, [](const auto& l) { return is_cpu_node(l.layer); });
        if (fallback.share_pct >= limits::kFallbackSharePct)
            out.push_back(layer_finding(e, "layers.cpu_fallback", Severity::problem, fallback,
                                        fmt::format("{} layers of this GPU benchmark ran on the CPU ({:.1f}% of the "
                                                    "profiled time), each with copies to and from the GPU",
                                                    fallback.layers.size(), fallback.share_pct),
                                        "find why the GPU provider rejected them (the runtime's verbose log names "
                                        "the op and type) and replace or re-export those ops"));
    }
    return out;
}

std::vector<Finding> unmeasured_layer_times(std::span<const BenchmarkEvidence> all) {
    Finding f{"layers.gpu_times_not_measured", Severity::info, {}, {}, {{"layer_times"}, std::nullopt, {}}, {}};
    std::size_t layers = 0;
    for (const auto& e : all) {
        if (!e.layers || e.layers->host_dispatch == 0) continue;
        f.benchmarks.push_back(e.id());
        layers += e.layers->host_dispatch;
    }
    if (f.benchmarks.empty()) return {};
    f.statement = fmt::format(
        "per-layer GPU times not measured for {} benchmarks: the runtime's profiler timed the "
        "host's dispatch of their {} GPU layers, not their execution, so their memory-bound, "
        "pitfall and data-movement shares are not shown",
        f.benchmarks.size(), layers);
    f.try_next =
        "profile the same model file on the torch backend (backend_options.torch.layer_profile), whose "
        "per-layer times are CUDA events, or under Nsight Systems";
    return {std::move(f)};
}

}  // namespace inferbench::findings
