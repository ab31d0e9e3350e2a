// SSD-ResNet34's graph, checked in memory (20M parameters, ~80 MB: built once per test suite and
// never serialized here).
//
// Work per 1200x1200 image, counted by hand from the layer shapes (not tested): 216.4 G
// multiply-accumulates (backbone 201.7 G), i.e. the 433 GFLOPs MLPerf quotes count 2 FLOPs per MAC.
#include <algorithm>
#include <map>
#include <optional>
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

std::int64_t elements_starting(const GraphBuilder& g, std::string_view prefix) {
    std::int64_t total = 0;
    for (const auto& i : g.initializers()) {
        if (i.is_parameter && i.name.starts_with(prefix)) total += static_cast<std::int64_t>(i.data.size());
    }
    return total;
}

class SsdResNet34 : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_ssd_resnet34(0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

// sum(p.numel() for p in SSD_R34().parameters()) of mlcommons/inference's ssd_r34.py: ResNet-34 to
// layer3 (torchvision's 21,797,672 less layer4's 13,114,368 and the FC's 513,000 = 8,170,304),
// additional blocks 3,574,400, loc/conf heads 8,227,830; ~20M as usually quoted.
TEST_F(SsdResNet34, ParameterCountMatchesTheMlperfReference) {
    EXPECT_EQ(graph().parameter_count(), 19'972'534);
    EXPECT_EQ(elements_starting(graph(), "model."), 21'797'672 - 13'114'368 - 513'000);
    EXPECT_EQ(elements_starting(graph(), "additional_blocks."), 3'574'400);
    EXPECT_EQ(elements_starting(graph(), "loc.") + elements_starting(graph(), "conf."), 8'227'830);
    ASSERT_NE(find_zoo_model("ssd-resnet34"), nullptr);
    EXPECT_EQ(find_zoo_model("ssd-resnet34")->parameters, graph().parameter_count());
}

// Backbone: stem, 13 BasicBlocks (2 convolutions each), 2 projections (layer2.0, layer3.0);
// 5 additional blocks of 2 convolutions; a loc and a conf head on each of the 6 maps.
TEST_F(SsdResNet34, GraphHasTheBackboneExtrasAndHeads) {
    const std::map<std::string, int> expected = {{"Conv", 51},   {"BatchNormalization", 29},
                                                 {"Relu", 37},   {"Add", 13},
                                                 {"MaxPool", 1}, {"Reshape", 12},
                                                 {"Concat", 2},  {"Constant", 2}};
    EXPECT_EQ(op_counts(graph()), expected);

    ASSERT_EQ(graph().inputs().size(), 1U);
    EXPECT_EQ(graph().inputs()[0].dims[0].param, kBatchDimName);
    EXPECT_EQ(graph().inputs()[0].dims[3].value, 1200);
    ASSERT_EQ(graph().outputs().size(), 2U);
    EXPECT_EQ(graph().outputs()[0].name, "locs");
    EXPECT_EQ(graph().outputs()[1].name, "confs");
    for (const auto& out : graph().outputs()) {
        EXPECT_EQ(out.dims[0].param, kBatchDimName);
        EXPECT_EQ(out.dims[2].value, 15130);  // 50*50*4 + 25*25*6 + 13*13*6 + 7*7*6 + 3*3*4 + 3*3*4
    }
    EXPECT_EQ(graph().outputs()[0].dims[1].value, 4);
    EXPECT_EQ(graph().outputs()[1].dims[1].value, 81);
}

std::vector<std::int64_t> ints(const OnnxNode& node, std::string_view attribute) {
    const auto it = std::ranges::find(node.attributes, attribute, &OnnxAttribute::name);
    return it == node.attributes.end() ? std::vector<std::int64_t>{} : it->ints;
}

// The reference's layer3 runs at stride 1 (150x150 for 1200x1200), and its heads at stride 3.
TEST_F(SsdResNet34, Layer3AtStrideOneHeadsAtStrideThree) {
    for (const auto& node : graph().nodes()) {
        if (node.name.starts_with("model.layer2.0.") && node.op_type == "Conv") {
            EXPECT_EQ(ints(node, "strides"), (std::vector<std::int64_t>{1, 1})) << node.name;
        }
        if ((node.name.starts_with("loc.") || node.name.starts_with("conf.")) && node.op_type == "Conv") {
            EXPECT_EQ(ints(node, "strides"), (std::vector<std::int64_t>{3, 3})) << node.name;
        }
    }
}

}  // namespace
}  // namespace inferbench::models
