// Small graph-building helpers shared by the detection and transformer zoo builders (YOLO, Swin):
// ops GraphBuilder has no layer helper for. Internal to the models module.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/onnx_builder.hpp"

namespace inferbench::models::graph_ops {

inline constexpr float kYoloBatchNormEpsilon = 1e-3F;  // ultralytics' initialize_weights()

// One single-output node called `name` whose output value is also `name`.
inline std::string op(GraphBuilder& g, std::string_view type, std::string name, std::vector<std::string> inputs,
                      std::vector<OnnxAttribute> attributes = {}) {
    g.add_node({std::string(type), name, std::move(inputs), {name}, std::move(attributes)});
    return name;
}

// int64 tensors (shapes, axes) are Constant nodes, as the builder's initializers are float.
inline std::string int64_constant(GraphBuilder& g, std::string name, std::vector<std::int64_t> values) {
    return op(g, "Constant", std::move(name), {}, {OnnxAttribute::of_ints("value_ints", std::move(values))});
}

// A float constant (not a parameter), created once per name.
inline std::string float_constant(GraphBuilder& g, const std::string& name, std::vector<std::int64_t> dims,
                                  std::vector<float> values) {
    const bool exists = std::ranges::any_of(g.initializers(), [&](const OnnxInitializer& i) { return i.name == name; });
    if (!exists) g.add_initializer({name, std::move(dims), std::move(values), false});
    return name;
}

inline std::string concat(GraphBuilder& g, std::string name, std::vector<std::string> inputs, std::int64_t axis) {
    return op(g, "Concat", std::move(name), std::move(inputs), {OnnxAttribute::of_int("axis", axis)});
}

// x * Sigmoid(x): SiLU has no ONNX op before opset 24; torch.onnx exports it this way too.
inline std::string silu(GraphBuilder& g, const std::string& name, const std::string& x) {
    return op(g, "Mul", name, {x, op(g, "Sigmoid", name + ".Sigmoid", {x})});
}

// Nearest-neighbour x2 upsampling of an NCHW tensor, as torch.onnx exports nn.Upsample(scale_factor=2).
inline std::string upsample2x(GraphBuilder& g, const std::string& name, const std::string& x) {
    const std::string scales = float_constant(g, "const.upsample_scales", {4}, {1.0F, 1.0F, 2.0F, 2.0F});
    return op(g, "Resize", name, {x, "", scales},  // "": no roi, an omitted optional input
              {OnnxAttribute::of_string("coordinate_transformation_mode", "asymmetric"),
               OnnxAttribute::of_string("mode", "nearest"), OnnxAttribute::of_string("nearest_mode", "floor")});
}

}  // namespace inferbench::models::graph_ops
