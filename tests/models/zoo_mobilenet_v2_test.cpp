// MobileNet v2's graph, checked in memory (3.5M parameters: fast to build).
#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {
namespace {

std::map<std::string, int> op_counts(const GraphBuilder& g) {
    std::map<std::string, int> counts;
    for (const auto& n : g.nodes()) ++counts[n.op_type];
    return counts;
}

// torchvision: sum(p.numel() for p in mobilenet_v2().parameters()) = 3,504,872 (the paper's
// Table 4 says 3.4M). Convention as resnet50: BN gamma and beta counted, running statistics not.
TEST(MobileNetV2, ParameterCountMatchesTorchvision) {
    const GraphBuilder g = build_mobilenet_v2(0);
    EXPECT_EQ(g.parameter_count(), 3'504'872);
    ASSERT_NE(find_zoo_model("mobilenet-v2"), nullptr);
    EXPECT_EQ(find_zoo_model("mobilenet-v2")->parameters, g.parameter_count());
}

// 17 inverted residual blocks (the first without expansion: 2 convolutions, the others 3), plus
// the stem and the last 1x1; residual adds where stride is 1 and the width unchanged (10 blocks).
TEST(MobileNetV2, GraphHasThePaperLayers) {
    const GraphBuilder g = build_mobilenet_v2(0);
    const std::map<std::string, int> expected = {{"Conv", 52}, {"BatchNormalization", 52}, {"Clip", 35},
                                                 {"Add", 10},  {"GlobalAveragePool", 1},   {"Flatten", 1},
                                                 {"Gemm", 1}};
    EXPECT_EQ(op_counts(g), expected);
    const auto depthwise = std::ranges::count_if(g.nodes(), [](const OnnxNode& n) {
        return n.op_type == "Conv" &&
               std::ranges::any_of(n.attributes, [](const OnnxAttribute& a) { return a.name == "group" && a.i > 1; });
    });
    EXPECT_EQ(depthwise, 17);

    ASSERT_EQ(g.inputs().size(), 1U);
    EXPECT_EQ(g.inputs()[0].dims[0].param, kBatchDimName);
    ASSERT_EQ(g.outputs().size(), 1U);
    EXPECT_EQ(g.outputs()[0].name, "logits");
    EXPECT_EQ(g.outputs()[0].dims[0].param, kBatchDimName);
    EXPECT_EQ(g.outputs()[0].dims[1].value, 1000);
    EXPECT_EQ(g.nodes().back().outputs[0], "logits");
}

TEST(MobileNetV2, NamesFollowTorchvision) {
    const GraphBuilder g = build_mobilenet_v2(0);
    const auto has = [&](std::string_view name) {
        return std::ranges::any_of(g.initializers(), [&](const OnnxInitializer& i) { return i.name == name; });
    };
    EXPECT_TRUE(has("features.0.0.weight"));
    EXPECT_TRUE(has("features.1.conv.1.weight"));  // t = 1: project conv at index 1
    EXPECT_TRUE(has("features.2.conv.3.weight"));  // t = 6: project BN at index 3
    EXPECT_TRUE(has("features.18.0.weight"));      // the last 1x1, 320 -> 1280
    EXPECT_TRUE(has("classifier.1.weight"));
}

}  // namespace
}  // namespace inferbench::models
