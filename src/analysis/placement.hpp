// Which execution provider ran each node of a GPU benchmark (the provider column of its per-layer
// profile, which the onnxruntime backend records for every cuda cell), and the warning a benchmark gets
// when some of its nodes ran on the CPU: their copies and CPU time are inside its GPU figures.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/spec.hpp"

namespace inferbench::analysis {

inline constexpr std::string_view kCpuProvider = "CPUExecutionProvider";

// The nodes of `layers` that ran on the CPU provider, in the order they first ran.
std::vector<const LayerTime*> cpu_fallback_nodes(std::span<const LayerTime> layers);

// For a benchmark on `device` ("cuda:0"): "3 of 120 nodes ran on CPUExecutionProvider, not the GPU: a (Shape),
// b (NonMaxSuppression), ..." naming at most `max_named` of them; nothing for a CPU device or no fallback.
std::optional<std::string> placement_warning(std::string_view device, std::span<const LayerTime> layers,
                                             std::size_t max_named = 8);

}  // namespace inferbench::analysis
