// SSD-MobileNet v1's graph, checked in memory (6.8M parameters: fast to build).
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

std::int64_t elements_named(const GraphBuilder& g, std::string_view suffix) {
    std::int64_t total = 0;
    for (const auto& i : g.initializers()) {
        if (i.is_parameter && i.name.ends_with(suffix)) total += static_cast<std::int64_t>(i.data.size());
    }
    return total;
}

// TF ssd_mobilenet_v1_coco's trainable variables: backbone 3,206,976 (MobileNet v1 less its
// 1024 -> 1000 classifier), extra layers 2,223,488, box predictors 1,389,375; MLPerf Inference's
// paper rounds to 6.8M. BN folded into a bias per channel (MLPerf's frozen graph): 12,672 fewer.
TEST(SsdMobileNet, ParameterCountMatchesTheTfModel) {
    const GraphBuilder g = build_ssd_mobilenet(0);
    EXPECT_EQ(g.parameter_count(), 6'819'839);
    EXPECT_EQ(build_mobilenet(0).parameter_count() - (1024 * 1000 + 1000), 3'206'976);
    EXPECT_EQ(elements_named(g, "Predictor.weight") + elements_named(g, "Predictor.bias"), 1'389'375);
    EXPECT_EQ(g.parameter_count() - elements_named(g, "/BatchNorm.weight"), 6'807'167);
    ASSERT_NE(find_zoo_model("ssd-mobilenet"), nullptr);
    EXPECT_EQ(find_zoo_model("ssd-mobilenet")->parameters, g.parameter_count());
}

// 27 backbone convolutions, 8 extra-layer ones, and a box and a class predictor on each of the 6
// maps, each reshaped to [batch, anchors, width] and concatenated.
TEST(SsdMobileNet, GraphHasTheBackboneExtrasAndHeads) {
    const GraphBuilder g = build_ssd_mobilenet(0);
    const std::map<std::string, int> expected = {
        {"Conv", 47},   {"BatchNormalization", 35}, {"Clip", 35}, {"Transpose", 12}, {"Reshape", 12}, {"Concat", 2},
        {"Constant", 2}};
    EXPECT_EQ(op_counts(g), expected);

    ASSERT_EQ(g.inputs().size(), 1U);
    EXPECT_EQ(g.inputs()[0].dims[0].param, kBatchDimName);
    EXPECT_EQ(g.inputs()[0].dims[2].value, 300);
    ASSERT_EQ(g.outputs().size(), 2U);
    EXPECT_EQ(g.outputs()[0].name, "boxes");
    EXPECT_EQ(g.outputs()[1].name, "class_logits");
    for (const auto& out : g.outputs()) {
        EXPECT_EQ(out.dims[0].param, kBatchDimName);
        EXPECT_EQ(out.dims[1].value, 1917);  // 19*19*3 + (10*10 + 5*5 + 3*3 + 2*2 + 1) * 6
    }
    EXPECT_EQ(g.outputs()[0].dims[2].value, 4);
    EXPECT_EQ(g.outputs()[1].dims[2].value, 91);
}

TEST(SsdMobileNet, HeadsReadConv11AndConv13AndTheExtras) {
    const GraphBuilder g = build_ssd_mobilenet(0);
    const auto input_of = [&](std::string_view node) {
        const auto it = std::ranges::find(g.nodes(), node, &OnnxNode::name);
        return it == g.nodes().end() ? std::string() : it->inputs[0];
    };
    EXPECT_EQ(input_of("BoxPredictor_0/ClassPredictor"), "FeatureExtractor/MobilenetV1/Conv2d_11_pointwise/Relu6");
    EXPECT_EQ(input_of("BoxPredictor_1/ClassPredictor"), "FeatureExtractor/MobilenetV1/Conv2d_13_pointwise/Relu6");
    EXPECT_EQ(input_of("BoxPredictor_5/BoxEncodingPredictor"),
              "FeatureExtractor/MobilenetV1/Conv2d_13_pointwise_2_Conv2d_5_3x3_s2_128/Relu6");
}

}  // namespace
}  // namespace inferbench::models
