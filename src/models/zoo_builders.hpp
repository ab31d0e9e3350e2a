// The zoo's graph builders, one per architecture (one .cpp each). Internal to the models module;
// public only so that tests can inspect a graph without writing it.
#pragma once

#include <cstdint>
#include <string_view>

#include "models/onnx_builder.hpp"

namespace inferbench::models {

// The symbolic batch dimension every zoo model's inputs and outputs carry.
inline constexpr std::string_view kBatchDimName = "batch";

GraphBuilder build_resnet50(std::uint64_t seed);
GraphBuilder build_mobilenet(std::uint64_t seed);

// The graph export_onnx() writes for a zoo model: the architecture's graph plus provenance
// (producer version, doc string, metadata). Throws UserError for unknown names and for "null".
GraphBuilder build_zoo_model(std::string_view name, std::uint64_t seed);

}  // namespace inferbench::models
