#include "analysis/placement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace inferbench::analysis {

std::vector<const LayerTime*> cpu_fallback_nodes(std::span<const LayerTime> layers) {
    std::vector<const LayerTime*> nodes;
    for (const auto& layer : layers)
        if (layer.provider == kCpuProvider) nodes.push_back(&layer);
    return nodes;
}

std::optional<std::string> placement_warning(std::string_view device, std::span<const LayerTime> layers,
                                             std::size_t max_named) {
    const auto parsed = parse_device(device);
    if (!parsed || parsed->kind != DeviceKind::cuda) return std::nullopt;
    const auto nodes = cpu_fallback_nodes(layers);
    if (nodes.empty()) return std::nullopt;
    std::vector<std::string> named;
    for (std::size_t i = 0; i < nodes.size() && i < max_named; ++i)
        named.push_back(nodes[i]->op_type.empty() ? nodes[i]->node
                                                  : fmt::format("{} ({})", nodes[i]->node, nodes[i]->op_type));
    const std::string more = nodes.size() > named.size() ? fmt::format(" and {} more", nodes.size() - named.size()) : "";
    return fmt::format("{} of {} nodes ran on {}, not the GPU (their copies and CPU time are in the GPU figures): {}{}",
                       nodes.size(), layers.size(), kCpuProvider, fmt::join(named, ", "), more);
}

}  // namespace inferbench::analysis
