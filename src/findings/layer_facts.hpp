// What a per-layer profile says about where time goes: shares by kind of layer. Shared by the layer
// rule and the precision rule (which names the probable cause of a precision that gains nothing).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/roofline_placement.hpp"

namespace inferbench::findings {

// Copies, layout changes and precision conversions: ops that move data without computing on it.
bool is_data_movement(std::string_view op_type);
// Conversions a runtime adds between precisions or layouts (TensorRT's Reformat, Q/DQ, Cast).
bool is_conversion(std::string_view op_type);
// A node a GPU benchmark's runtime ran on the CPU.
bool is_cpu_node(const LayerTime& layer);
bool is_memory_bound(const analysis::LayerPoint& layer);

struct LayerShare {
    double share_pct = 0;                        // of the profiled time
    std::vector<const analysis::LayerPoint*> layers;  // the matching layers, slowest first
    std::vector<std::string> labels(std::size_t at_most = 3) const;  // "conv1 (Conv, 12.3%)"
};
LayerShare share_where(const analysis::LayerSet& set, const std::function<bool(const analysis::LayerPoint&)>& keep);

}  // namespace inferbench::findings
