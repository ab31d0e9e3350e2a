// Small models for the model-transform tests (float16, QDQ), written by GraphBuilder with seeded weights.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/onnx_builder.hpp"

namespace inferbench::models::testing {

inline const OnnxDim kBatch = OnnxDim::symbolic("batch");

// images [batch, 3, 8, 8] -> Conv (3 -> 8, 3x3, bias) -> Relu -> Max(., floor) -> GlobalAveragePool ->
// Flatten -> Gemm (8 -> 5) -> logits [batch, 5]. Max is on ONNX Runtime's float16 block list.
inline GraphBuilder small_cnn() {
    GraphBuilder g("small_cnn", 7);
    g.add_input("images", OnnxElemType::float32, {kBatch, OnnxDim::fixed(3), OnnxDim::fixed(8), OnnxDim::fixed(8)});
    std::string x = g.conv("conv", "images", 3, 8, {.kernel = 3, .pad = 1, .bias = true});
    x = g.relu("relu", x);
    g.add_initializer({"floor", {1}, {0.05F}, false});
    g.add_node({"Max", "max", {x, "floor"}, {"max"}, {}});
    x = g.global_avg_pool("pool", "max");
    x = g.flatten("flat", x);
    x = g.gemm("fc", x, 8, 5);
    g.rename_value(x, "logits");
    g.add_output("logits", OnnxElemType::float32, {kBatch, OnnxDim::fixed(5)});
    return g;
}

inline std::filesystem::path write_model(const GraphBuilder& g, const std::filesystem::path& path) {
    std::ofstream(path, std::ios::binary) << g.serialize();
    return path;
}

}  // namespace inferbench::models::testing
