#include "analysis/roofline_placement.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/metrics/model_metrics.hpp"
#include "core/spec.hpp"
#include "core/units.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/match.hpp"
#include "devices/quantities.hpp"
#include "models/inference_cost.hpp"

namespace inferbench::analysis {

using namespace devices;
using devices::Precision;  // not the benchmark precision of core/spec.hpp

namespace {

std::optional<std::uint32_t> parse_pci_id(const nlohmann::json& value) {
    if (value.is_number_unsigned()) return value.get<std::uint32_t>();
    if (!value.is_string()) return std::nullopt;
    try {
        return static_cast<std::uint32_t>(std::stoul(value.get<std::string>(), nullptr, 16));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Identifies the device each benchmark ran on and keeps one DeviceRoofs per device.
class DeviceResolver {
public:
    DeviceResolver(const store::ResultsStore& results, const Catalog& catalog, const RooflineOptions& options)
        : results_(results), catalog_(catalog), options_(options), probes_(results.probes()) {
        if (!options.roofs_key.empty() && !catalog.find(options.roofs_key)) {
            std::vector<std::string> keys;
            for (const auto& d : catalog.devices) keys.push_back(d.key);
            throw UserError(
                fmt::format("--roofs {}: no such catalog entry; valid keys: {} (`inferbench devices` lists them)",
                            options.roofs_key, join(keys, ", ")));
        }
    }

    std::size_t resolve(const store::BenchmarkRecord& b) {
        const auto device = parse_device(b.device);
        if (!device) return unknown(b.device, fmt::format("device '{}' is neither cpu nor cuda:N", b.device));
        const nlohmann::json& env = environment(b.run_id);
        if (device->kind == DeviceKind::cpu) return cpu(env);
        return gpu(env, device->index, b);
    }

    std::vector<DeviceRoofs> take() { return std::move(devices_); }

private:
    const nlohmann::json& environment(std::int64_t run_id) {
        auto [it, added] = environments_.try_emplace(run_id);
        if (added) {
            for (const auto& run : results_.runs()) {
                if (run.run_id == run_id) it->second = nlohmann::json::parse(run.environment_json, nullptr, false);
            }
            if (!it->second.is_object()) it->second = nlohmann::json::object();
        }
        return it->second;
    }

    bool has_probes(const std::string& key) const {
        return std::any_of(probes_.begin(), probes_.end(), [&](const auto& p) { return p.device_key == key; });
    }

    std::size_t add(DeviceRoofs roofs, const DeviceSpec* spec) {
        std::vector<store::ProbeRecord> mine;
        for (const auto& p : probes_) {
            if (p.device_key == roofs.key) mine.push_back(p);
        }
        const DeviceRoofs built = device_roofs(spec, mine);
        roofs.compute = built.compute;
        roofs.memory = built.memory;
        if (mine.empty())
            roofs.notes.push_back(
                fmt::format("no measured roofs for {}: run `inferbench probe --db {}` on that machine", roofs.name,
                            results_.path().string()));
        index_[roofs.key] = devices_.size();
        devices_.push_back(std::move(roofs));
        return devices_.size() - 1;
    }

    std::size_t unknown(const std::string& device, const std::string& why) {
        const std::string key = "unknown:" + device;
        if (const auto it = index_.find(key); it != index_.end()) return it->second;
        DeviceRoofs roofs;
        roofs.name = device;
        roofs.notes.push_back(why);
        index_[key] = devices_.size();
        devices_.push_back(std::move(roofs));
        return devices_.size() - 1;
    }

    std::size_t cpu(const nlohmann::json& env) {
        const std::string model = env.value("cpu_model", std::string("unknown CPU"));
        const std::string key = cpu_device_key(model);
        if (const auto it = index_.find(key); it != index_.end()) return it->second;
        DeviceRoofs roofs;
        roofs.key = key;
        roofs.name = model;
        roofs.identified_by = "the run's CPU model";
        if (const auto llc = env.find("cpu_last_level_cache_bytes"); llc != env.end() && llc->is_number())
            roofs.last_level_cache_bytes = llc->get<double>();
        if (!host_cpu_) host_cpu_ = host_cpuinfo();
        std::optional<DeviceSpec> spec;
        if (host_cpu_->model_name == model) {
            spec = cpu_device_spec(*host_cpu_, estimate_cpu_peaks(*host_cpu_, host_max_freq_khz()));
            roofs.notes.emplace_back(has_probes(key) ? "CPU peaks are estimates (cores x FMA lanes x clock) beside "
                                                       "the measured roofs `inferbench probe` stored"
                                                     : "CPU peaks are estimates (cores x FMA lanes x clock); the CPU "
                                                       "has no datasheet memory bandwidth: `inferbench probe "
                                                       "--device cpu` measures it");
        } else {
            roofs.notes.push_back(
                fmt::format("no estimated peaks for {}: they are computed on the machine itself "
                            "(this one has {})",
                            model, host_cpu_->model_name));
        }
        return add(std::move(roofs), spec ? &*spec : nullptr);
    }

    std::size_t gpu(const nlohmann::json& env, int index, const store::BenchmarkRecord& b) {
        if (!options_.roofs_key.empty()) {
            const DeviceSpec* spec = catalog_.find(options_.roofs_key);
            if (const auto it = index_.find(spec->key); it != index_.end()) return it->second;
            return add({spec->key, spec->name, "--roofs " + spec->key, {}, {}, {}}, spec);
        }
        const auto gpus = env.contains("gpus") && env["gpus"].is_object()
                              ? env["gpus"].value("devices", nlohmann::json::array())
                              : nlohmann::json::array();
        const nlohmann::json* entry = nullptr;
        for (const auto& g : gpus) {
            if (g.is_object() && g.value("index", -1) == index) entry = &g;
        }
        if (!entry)
            return unknown(b.device, fmt::format("run {} did not record which GPU {} is (no NVML or nvidia-smi there, "
                                                 "or an older inferbench); pass --roofs KEY (`inferbench devices` "
                                                 "lists the keys)",
                                                 b.run_id, b.device));
        const std::string name = entry->value("name", std::string("unknown GPU"));
        const auto pci = entry->contains("pci_device_id") ? parse_pci_id((*entry)["pci_device_id"]) : std::nullopt;
        const GpuMatch match = match_gpu(catalog_, name, pci);
        const std::string key = match.device ? match.device->key : "gpu:" + normalize_gpu_name(name);
        if (const auto it = index_.find(key); it != index_.end()) return it->second;
        DeviceRoofs roofs{key, match.device ? match.device->name : name, match.how, {}, {}, {}};
        if (!match.device) roofs.notes.push_back(no_match_message(name, pci));
        return add(std::move(roofs), match.device);
    }

    const store::ResultsStore& results_;
    const Catalog& catalog_;
    const RooflineOptions& options_;
    std::vector<store::ProbeRecord> probes_;
    std::map<std::int64_t, nlohmann::json> environments_;
    std::map<std::string, std::size_t> index_;
    std::vector<DeviceRoofs> devices_;
    std::optional<CpuInfo> host_cpu_;
};

void add_point_notes(const DeviceRoofs& roofs, RooflinePoint& p) {
    if (!p.precision) {
        p.notes.push_back(fmt::format("no roof for precision '{}'", p.benchmark.precision));
        return;
    }
    const auto name = precision_name(*p.precision);
    if (*p.precision == Precision::fp32) {
        if (const auto* tf32 = roofs.compute_roof(Precision::tf32, false))
            p.notes.push_back(
                fmt::format("fp32 placed under the CUDA-core roof; with TF32 allowed the tensor-core roof is {}",
                            format_rate(tf32->per_s, false)));
    }
    if (!p.datasheet && roofs.has_roofs()) {
        const bool compute = roofs.compute_roof(*p.precision, false) != nullptr;
        p.notes.push_back(compute ? std::string("no datasheet memory bandwidth")
                                  : fmt::format("no datasheet {} roof for this device", name));
    }
    for (const auto& placement : {p.datasheet, p.measured}) {
        if (!placement || placement->percent <= 100.5) continue;
        if (p.achieved_per_s > placement->peak_per_s && placement->origin == RoofOrigin::estimated)
            p.notes.emplace_back(roofs.compute_roof(*p.precision, true)
                                     ? "above the estimated peak: the estimate is low (it is computed, not measured)"
                                     : "above the estimated peak: the estimate is low (it is computed, not measured; "
                                       "`inferbench probe` measures the roofs)");
        else if (p.achieved_per_s > placement->peak_per_s)
            p.notes.push_back(
                fmt::format("above the {} peak: the model's operation count exceeds what ran (work skipped "
                            "or fused away), or the timing is off",
                            origin_name(placement->origin)));
        else
            p.notes.push_back(
                fmt::format("above the {} bandwidth roof: caches keep part of the traffic the model's bytes "
                            "count",
                            origin_name(placement->origin)));
    }
}

// The prefill and decode points of a generative benchmark (see RooflinePoint::phase), or why it has none.
void add_generation_points(const BenchmarkSummary& summary, const std::string& label, DeviceResolver& resolver,
                           RooflineSet& set) {
    const store::BenchmarkRecord& b = summary.benchmark;
    const GenerationMetrics& g = *summary.generation;
    const std::string who = fmt::format("benchmark {} ({} on {}, {})", b.benchmark_id, label, b.device, b.backend);
    if (!g.decoder || !g.decoder->shape) {
        set.skipped.push_back(fmt::format("{}: the decoder's shape and bytes were not stored: its FLOPs and bytes "
                                          "are unknown",
                                          who));
        return;
    }
    const DecoderFacts& decoder = *g.decoder;
    const auto add = [&](std::string phase, double flops, double bytes, double per_s) {
        RooflinePoint p;
        p.benchmark = b;
        p.label = label + " " + phase;
        p.phase = std::move(phase);
        p.device = resolver.resolve(b);
        p.flops_per_inference = flops;
        p.bytes_per_inference = bytes;
        p.intensity = flops / bytes;
        p.throughput_per_s = per_s;
        p.achieved_per_s = flops * per_s;
        p.precision = roof_precision(b.precision);
        p.integer = p.precision && is_integer(*p.precision);
        p.notes.emplace_back("bytes: the weights and the KV cache, activations not counted (the intensity is an "
                             "upper bound)");
        set.points.push_back(std::move(p));
    };
    const double batch = static_cast<double>(g.batch_size);
    const double input = static_cast<double>(g.input_tokens);
    if (g.ttft.ns.mean > 0)
        add("prefill", forward_flops(*decoder.shape, g.input_tokens, 0) * batch,
            decoder.weight_bytes_per_step() + batch * input * decoder.kv_bytes_per_token, 1e9 / g.ttft.ns.mean);
    if (!g.decode_steps_per_s) return;
    // Bytes and FLOPs per decode step as the bounds count them (no roofs needed for those).
    const auto bounds = analysis::generation_bounds(g, DeviceRoofs{}, b.precision);
    if (bounds && bounds->decode_flops_per_step)
        add("decode", *bounds->decode_flops_per_step, bounds->bytes_per_step, *g.decode_steps_per_s);
}

}  // namespace

RooflineSet roofline_points(const store::ResultsStore& results, std::span<const BenchmarkSummary> summaries,
                            const Catalog& catalog, const RooflineOptions& options) {
    RooflineSet set;
    DeviceResolver resolver(results, catalog, options);
    for (const auto& summary : summaries) {
        const store::BenchmarkRecord& b = summary.benchmark;
        std::string label = fmt::format("{} b{} {}", b.model, b.batch_size, b.precision);
        if (!b.variant.empty()) label += " " + b.variant;
        const std::string who = fmt::format("benchmark {} ({} on {}, {})", b.benchmark_id, label, b.device, b.backend);
        if (b.status != BenchmarkStatus::ok) {
            set.skipped.push_back(fmt::format("{}: status {}", who, to_string(b.status)));
            continue;
        }
        if (summary.generation) {
            add_generation_points(summary, label, resolver, set);
            continue;
        }
        if (!summary.model.flops_per_inference || !summary.model.bytes_per_inference ||
            *summary.model.bytes_per_inference <= 0) {
            set.skipped.push_back(
                fmt::format("{}: no model-cost metrics (FLOPs and bytes per inference); they are "
                            "stored for ONNX models",
                            who));
            continue;
        }
        if (const auto reason = summary.model.incomplete_cost_reason()) {
            set.skipped.push_back(fmt::format("{}: {}", who, *reason));
            continue;
        }
        if (summary.throughput_per_s <= 0) {
            set.skipped.push_back(fmt::format("{}: no throughput measured", who));
            continue;
        }
        RooflinePoint p;
        p.benchmark = b;
        p.label = label;
        p.device = resolver.resolve(b);
        p.flops_per_inference = *summary.model.flops_per_inference;
        p.bytes_per_inference = *summary.model.bytes_per_inference;
        p.intensity = p.flops_per_inference / p.bytes_per_inference;
        p.throughput_per_s = summary.throughput_per_s;
        p.achieved_per_s = p.flops_per_inference * p.throughput_per_s;
        p.precision = roof_precision(b.precision);
        p.integer = p.precision && is_integer(*p.precision);
        set.points.push_back(std::move(p));
    }
    set.devices = resolver.take();
    for (auto& p : set.points) {
        const DeviceRoofs& roofs = set.devices[p.device];
        if (p.precision) {
            p.datasheet = place(roofs, *p.precision, p.intensity, p.achieved_per_s, false);
            p.measured = place(roofs, *p.precision, p.intensity, p.achieved_per_s, true);
        }
        add_point_notes(roofs, p);
    }
    return set;
}

std::vector<std::optional<GenerationBounds>> generation_bounds(const store::ResultsStore& results,
                                                               std::span<const BenchmarkSummary> summaries,
                                                               const Catalog& catalog, const RooflineOptions& options) {
    DeviceResolver resolver(results, catalog, options);
    std::vector<std::pair<std::size_t, std::size_t>> devices;  // summary, device
    std::vector<std::optional<GenerationBounds>> bounds(summaries.size());
    for (std::size_t i = 0; i < summaries.size(); ++i)
        if (summaries[i].generation && summaries[i].generation->decoder)
            devices.emplace_back(i, resolver.resolve(summaries[i].benchmark));
    const std::vector<DeviceRoofs> roofs = resolver.take();
    for (const auto& [i, device] : devices)
        bounds[i] = analysis::generation_bounds(*summaries[i].generation, roofs[device], summaries[i].benchmark.precision);
    return bounds;
}

namespace {

// The model's nodes by name; a name several nodes share matches none of them.
struct NodeIndex {
    std::map<std::string, const models::NodeCost*, std::less<>> unique;
    std::map<std::string, int, std::less<>> count;

    explicit NodeIndex(std::span<const models::NodeCost> nodes) {
        for (const auto& node : nodes) {
            if (node.name.empty()) continue;
            if (++count[node.name] == 1) unique[node.name] = &node;
            else unique.erase(node.name);
        }
    }
};

// The node of the model a layer is, or why it has none.
const models::NodeCost* match_node(const NodeIndex& index, const LayerTime& layer, std::string& why) {
    const auto it = index.unique.find(layer.node);
    if (it == index.unique.end()) {
        const auto named = index.count.find(layer.node);
        why = named != index.count.end()
                  ? fmt::format("the model has {} nodes named {}", named->second, layer.node)
                  : std::string("not in the model: renamed or added by the runtime");
        return nullptr;
    }
    const models::NodeCost& node = *it->second;
    if (node.op_type != layer.op_type) {
        why = fmt::format("ran as {}, the model's node is a {}: fused with others by the runtime", layer.op_type,
                          node.op_type);
        return nullptr;
    }
    if (node.unknown) {
        why = fmt::format("the cost model has no figures for this {} (unknown op or shapes)", node.op_type);
        return nullptr;
    }
    return &node;
}

void place_layer(LayerPoint& p, const models::NodeCost& node, double bytes_scale, const DeviceRoofs& roofs,
                 std::optional<Precision> precision) {
    p.costed = true;
    p.flags = node.flags;
    p.flops = static_cast<double>(node.flops);
    p.bytes = static_cast<double>(node.bytes_read + node.bytes_written) * bytes_scale;
    if (p.bytes <= 0) {
        p.note = "moves no bytes in the cost model (a view): no intensity";
        return;
    }
    p.intensity = p.flops / p.bytes;
    if (p.layer.host_dispatch) {
        p.note = "its time is the host's dispatch of the GPU work, not the work: no achieved rate";
        return;
    }
    if (p.mean_ns <= 0) {
        p.note = "timed as 0 ns (under the profiler's resolution): no achieved rate";
        return;
    }
    p.achieved_per_s = p.flops / (p.mean_ns * 1e-9);
    if (p.flops <= 0) {
        p.note = "no FLOPs in the cost model (data movement)";
        return;
    }
    if (!precision) return;
    p.datasheet = place(roofs, *precision, p.intensity, p.achieved_per_s, false);
    p.measured = place(roofs, *precision, p.intensity, p.achieved_per_s, true);
    const auto& placement = p.measured ? p.measured : p.datasheet;
    if (placement && placement->percent > 100.5) {
        const auto* tf32 = *precision == Precision::fp32 ? roofs.compute_roof(Precision::tf32, false) : nullptr;
        if (placement->bound == Bound::memory)
            p.note = "above the bandwidth roof: caches hold part of the traffic the cost model counts";
        else if (tf32)
            p.note = fmt::format("above the fp32 CUDA-core peak: cuDNN/cuBLAS ran it on TF32 tensor cores (roof {})",
                                 format_rate(tf32->per_s, false));
        else
            p.note = "above the compute peak: the node ran fewer operations than the cost model counts";
    }
}

// The static cost of each model file at each batch size, read once.
class NodeCosts {
public:
    // Nothing (and `why` set) when the file is gone or the cost model cannot read it.
    const std::vector<models::NodeCost>* find(const std::string& path, std::int64_t batch, std::string& why) {
        const auto key = std::make_pair(path, batch);
        auto it = cache_.find(key);
        if (it == cache_.end()) {
            Entry entry;
            std::error_code ec;
            if (path.empty() || !std::filesystem::is_regular_file(path, ec)) {
                entry.why = path.empty() ? "the benchmark has no model file"
                                         : fmt::format("its model file {} is gone", path);
            } else {
                try {
                    entry.nodes = models::batch_cost(path, batch).cost.nodes;
                } catch (const std::exception& e) {
                    entry.why = fmt::format("the cost model cannot read {}: {}", path, e.what());
                }
            }
            it = cache_.emplace(key, std::move(entry)).first;
        }
        why = it->second.why;
        return it->second.why.empty() ? &it->second.nodes : nullptr;
    }

private:
    struct Entry {
        std::vector<models::NodeCost> nodes;
        std::string why;
    };
    std::map<std::pair<std::string, std::int64_t>, Entry> cache_;
};

}  // namespace

LayerSet place_layers(std::span<const LayerTime> layers, std::span<const models::NodeCost> nodes, double bytes_scale,
                      const DeviceRoofs& roofs, std::optional<Precision> precision) {
    LayerSet set;
    for (const auto& layer : layers) set.total_ns += layer.total_ns;
    const NodeIndex index(nodes);
    std::int64_t uncosted_ns = 0;
    for (const auto& layer : layers) {
        LayerPoint& p = set.layers.emplace_back();
        p.layer = layer;
        p.mean_ns = layer.calls > 0 ? static_cast<double>(layer.total_ns) / static_cast<double>(layer.calls) : 0.0;
        p.share_pct = set.total_ns > 0 ? 100.0 * static_cast<double>(layer.total_ns) / static_cast<double>(set.total_ns)
                                       : 0.0;
        if (const models::NodeCost* node = match_node(index, layer, p.note)) {
            place_layer(p, *node, bytes_scale, roofs, precision);
        } else {
            ++set.uncosted;
            uncosted_ns += layer.total_ns;
        }
    }
    set.uncosted_share_pct =
        set.total_ns > 0 ? 100.0 * static_cast<double>(uncosted_ns) / static_cast<double>(set.total_ns) : 0.0;
    set.host_dispatch = static_cast<std::size_t>(
        std::count_if(layers.begin(), layers.end(), [](const LayerTime& l) { return l.host_dispatch; }));
    if (set.host_dispatch > 0)
        set.notes.push_back(
            fmt::format("{} of {} layers were timed by the runtime's profiler as the host's dispatch of "
                        "their GPU work, not its GPU time: not placed, and their shares are of the "
                        "dispatch time, not of the GPU time",
                        set.host_dispatch, set.layers.size()));
    if (set.uncosted > 0)
        set.notes.push_back(fmt::format("{} of {} layers ({:.1f}% of the profiled time) have no cost: the runtime "
                                        "fused, renamed or added them (each layer's note says which)",
                                        set.uncosted, set.layers.size(), set.uncosted_share_pct));
    return set;
}

std::vector<LayerSet> roofline_layers(const store::ResultsStore& results, const RooflineSet& set) {
    std::vector<LayerSet> sets;
    NodeCosts costs;
    for (std::size_t i = 0; i < set.points.size(); ++i) {
        const RooflinePoint& point = set.points[i];
        const auto layers = results.layer_times(point.benchmark.benchmark_id);
        if (layers.empty()) continue;
        std::string why;
        const auto* nodes = costs.find(point.benchmark.model_path, point.benchmark.batch_size, why);
        const auto precision = inferbench::parse_precision(point.benchmark.precision);
        const double scale = precision ? model_metrics::bytes_scale(*precision) : 1.0;
        LayerSet placed = place_layers(layers, nodes ? std::span<const models::NodeCost>(*nodes)
                                                     : std::span<const models::NodeCost>(),
                                       scale, set.devices[point.device], point.precision);
        placed.point = i;
        if (!nodes) {
            for (auto& layer : placed.layers) layer.note = why;
            placed.notes = {fmt::format("no layer has a cost: {}; per-layer FLOPs and bytes come from the model file",
                                        why)};
        }
        sets.push_back(std::move(placed));
    }
    return sets;
}

}  // namespace inferbench::analysis
