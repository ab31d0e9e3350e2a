// The KiTS19 3D U-Net's graph, checked in memory (31M parameters, ~125 MB: built once per test
// suite and never serialized here).
//
// Work per 128^3 sub-volume, counted by hand from the layer shapes (not tested): 477.3 G
// multiply-accumulates, ~955 GFLOPs at 2 FLOPs per MAC.
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

class Unet3d : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_unet3d(0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

// sum(p.numel() for p in Unet3D(1, 3, "instancenorm", "leaky_relu").parameters()) of the MLPerf
// reference: encoder 14,022,880 (input block, 4 downsamples, bottleneck), decoder 17,167,264,
// output 1x1 99; ~31M as quoted for MLPerf's 3d-unet.
TEST_F(Unet3d, ParameterCountMatchesTheMlperfReference) {
    EXPECT_EQ(graph().parameter_count(), 31'190'243);
    ASSERT_NE(find_zoo_model("3d-unet"), nullptr);
    EXPECT_EQ(find_zoo_model("3d-unet")->parameters, graph().parameter_count());
    std::int64_t decoder = 0;
    for (const auto& i : graph().initializers()) {
        if (i.name.starts_with("upsample.")) decoder += static_cast<std::int64_t>(i.data.size());
    }
    EXPECT_EQ(decoder, 17'167'264);
}

// 2 + 4 * 2 + 2 encoder blocks and 5 * 2 decoder blocks (conv -> instance norm -> leaky ReLU), 5
// transposed convolutions each concatenated with a skip, and the 1x1 output convolution.
TEST_F(Unet3d, GraphHasTheEncoderDecoderAndOutput) {
    const std::map<std::string, int> expected = {
        {"Conv", 23}, {"InstanceNormalization", 22}, {"LeakyRelu", 22}, {"ConvTranspose", 5}, {"Concat", 5}};
    EXPECT_EQ(op_counts(graph()), expected);

    ASSERT_EQ(graph().inputs().size(), 1U);
    const auto& in = graph().inputs()[0].dims;
    ASSERT_EQ(in.size(), 5U);
    EXPECT_EQ(in[0].param, kBatchDimName);
    EXPECT_EQ(in[1].value, 1);
    EXPECT_EQ(in[4].value, 128);
    ASSERT_EQ(graph().outputs().size(), 1U);
    const auto& out = graph().outputs()[0];
    EXPECT_EQ(out.name, "logits");
    ASSERT_EQ(out.dims.size(), 5U);
    EXPECT_EQ(out.dims[0].param, kBatchDimName);
    EXPECT_EQ(out.dims[1].value, 3);
    EXPECT_EQ(out.dims[2].value, 128);
    EXPECT_EQ(graph().nodes().back().outputs[0], "logits");
}

// Filters 32, 64, 128, 256, 320 and the 320 bottleneck: the transposed convolutions' weights are
// [in, out, 2, 2, 2] from 320 back to 32.
TEST_F(Unet3d, TransposedConvolutionsWalkTheFiltersBack) {
    std::vector<std::vector<std::int64_t>> shapes;
    for (const auto& i : graph().initializers()) {
        if (i.name.ends_with("upsample_conv.0.weight")) shapes.push_back(i.dims);
    }
    const std::vector<std::vector<std::int64_t>> expected = {
        {320, 320, 2, 2, 2}, {320, 256, 2, 2, 2}, {256, 128, 2, 2, 2}, {128, 64, 2, 2, 2}, {64, 32, 2, 2, 2}};
    EXPECT_EQ(shapes, expected);
}

}  // namespace
}  // namespace inferbench::models
