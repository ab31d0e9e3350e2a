#include "findings/layer_facts.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace inferbench::findings {

bool is_data_movement(std::string_view op_type) {
    static constexpr std::array<std::string_view, 20> kOps = {
        "Transpose", "Reshape",  "Concat",  "Slice",    "Gather",        "Pad",       "Split",
        "Squeeze",   "Unsqueeze", "Flatten", "Expand",  "Tile",          "Identity",  "Copy",
        "Shuffle",   "Memcpy",    "MemcpyToHost", "MemcpyFromHost", "ReorderInput", "ReorderOutput"};
    if (is_conversion(op_type)) return true;
    return std::any_of(kOps.begin(), kOps.end(), [&](std::string_view op) { return op_type == op; });
}

bool is_conversion(std::string_view op_type) {
    for (const std::string_view op : {"Reformat", "QuantizeLinear", "DequantizeLinear", "Cast", "Quantize", "Dequantize"})
        if (op_type.find(op) != std::string_view::npos) return true;
    return false;
}

bool is_cpu_node(const LayerTime& layer) {
    return layer.provider.find("CPU") != std::string::npos || layer.provider.find("cpu") != std::string::npos;
}

bool is_memory_bound(const analysis::LayerPoint& layer) {
    const auto& placement = layer.measured ? layer.measured : layer.datasheet;
    return placement && placement->bound == devices::Bound::memory;
}

std::vector<std::string> LayerShare::labels(std::size_t at_most) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < layers.size() && i < at_most; ++i)
        out.push_back(fmt::format("{} ({}, {:.1f}%)", layers[i]->layer.node, layers[i]->layer.op_type,
                                  layers[i]->share_pct));
    return out;
}

LayerShare share_where(const analysis::LayerSet& set, const std::function<bool(const analysis::LayerPoint&)>& keep) {
    LayerShare share;
    for (const auto& layer : set.layers) {
        if (!keep(layer)) continue;
        share.share_pct += layer.share_pct;
        share.layers.push_back(&layer);
    }
    std::stable_sort(share.layers.begin(), share.layers.end(),
                     [](auto a, auto b) { return a->share_pct > b->share_pct; });
    return share;
}

}  // namespace inferbench::findings
