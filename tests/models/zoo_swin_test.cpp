// Swin Transformer's graphs, checked in memory: swin-t (28M parameters, ~113 MB) is built once;
// s, b and l are checked by their parameter formula only and never built here.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"
#include "zoo_graph_checks.hpp"

namespace inferbench::models {
namespace {

using testing::expect_dims;
using testing::initializer;
using testing::node;
using testing::op_counts;

class SwinT : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_zoo_model("swin-t", 0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

// timm's swin_{tiny,small,base,large}_patch4_window7_224 with 1000 classes; Liu et al. 2021
// (Table 1) round them to 28M, 50M, 88M and 197M.
TEST(SwinParameters, FormulaMatchesTimmsCounts) {
    EXPECT_EQ(swin_parameter_count(kSwinT), 28'288'354);
    EXPECT_EQ(swin_parameter_count(kSwinS), 49'606'258);
    EXPECT_EQ(swin_parameter_count(kSwinB), 87'768'224);
    EXPECT_EQ(swin_parameter_count(kSwinL), 196'532'476);
    const std::pair<const char*, SwinConfig> entries[] = {
        {"swin-t", kSwinT}, {"swin-s", kSwinS}, {"swin-b", kSwinB}, {"swin-l", kSwinL}};
    for (const auto& [name, config] : entries) {
        ASSERT_NE(find_zoo_model(name), nullptr) << name;
        EXPECT_EQ(find_zoo_model(name)->parameters, swin_parameter_count(config)) << name;
    }
}

TEST(SwinParameters, BuiltGraphMatchesTheFormulaForAnotherShape) {
    const SwinConfig small{.embed_dim = 16,
                           .depths = {1, 2, 1, 2},
                           .heads = {1, 2, 2, 4},
                           .window = 2,
                           .patch_size = 2,
                           .image_size = 32,
                           .classes = 10};
    EXPECT_EQ(build_swin(small, 0).parameter_count(), swin_parameter_count(small));
}

TEST(SwinConfigCheck, RejectsImpossibleShapes) {
    SwinConfig uneven = kSwinT;
    uneven.heads[2] = 5;
    EXPECT_THROW(build_swin(uneven, 0), std::logic_error);
    SwinConfig untiled = kSwinT;
    untiled.image_size = 192;  // 48 px after the patch embedding: not a multiple of 7
    EXPECT_THROW(build_swin(untiled, 0), std::logic_error);
}

TEST_F(SwinT, CountsTheFormulasParameters) { EXPECT_EQ(graph().parameter_count(), 28'288'354); }

TEST_F(SwinT, HasAnImageInputAndLogitsWithADynamicBatch) {
    EXPECT_EQ(graph().opset_version(), 17);  // LayerNormalization
    ASSERT_EQ(graph().inputs().size(), 1U);
    expect_dims(graph().inputs()[0], kBatchDimName, {3, 224, 224});
    ASSERT_EQ(graph().outputs().size(), 1U);
    EXPECT_EQ(graph().outputs()[0].name, "logits");
    expect_dims(graph().outputs()[0], kBatchDimName, {1000});
}

TEST_F(SwinT, IsATopologicallyOrderedWellFormedGraph) { testing::expect_well_formed(graph()); }

// 12 blocks; the odd ones shift, except in the last stage, whose 7x7 map is a single window:
// 5 shifted blocks, each rolling twice over two axes (2 Slices each); 3 patch mergings of 4
// strided 2-D Slices each.
TEST_F(SwinT, HasSwinsLayerStructure) {
    const auto counts = op_counts(graph());
    EXPECT_EQ(counts.at("LayerNormalization"), 1 + 2 * 12 + 3 + 1);
    EXPECT_EQ(counts.at("Softmax"), 12);
    EXPECT_EQ(counts.at("Erf"), 12);
    EXPECT_EQ(counts.at("Gather"), 12);  // relative position bias per block
    EXPECT_EQ(counts.at("Slice"), 5 * 2 * 2 * 2 + 3 * 4 * 2);
    EXPECT_EQ(counts.at("Concat"), 5 * 2 * 2 + 3);
    EXPECT_EQ(counts.at("Conv"), 1);
    EXPECT_EQ(counts.at("Gemm"), 1);
    EXPECT_EQ(initializer(graph(), "layers.2.blocks.5.attn.relative_position_bias_table").dims,
              (std::vector<std::int64_t>{169, 12}));
    EXPECT_EQ(initializer(graph(), "layers.3.downsample.reduction.weight").dims,
              (std::vector<std::int64_t>{1536, 768}));
    EXPECT_EQ(node(graph(), "layers.0.blocks.1.attn.scores.masked").inputs.at(1), "const.attn_mask_56");
    EXPECT_THROW(node(graph(), "layers.3.blocks.1.attn.scores.masked"), std::out_of_range);
}

// As timm's buffers: index[i][j] = (dh + 6) * 13 + (dw + 6) over the 49 tokens of a window; the
// shifted-window mask separates the three regions per axis of the boundary windows.
TEST_F(SwinT, ComputesTimmsIndexAndMask) {
    const auto& index = node(graph(), "layers.0.blocks.0.attn.relative_position_index").attributes.at(0).ints;
    ASSERT_EQ(index.size(), 49U * 49U);
    EXPECT_EQ(index.front(), 6 * 13 + 6);
    EXPECT_EQ(index[48], 0);         // token 0 (0, 0) to token 48 (6, 6)
    EXPECT_EQ(index[48 * 49], 168);  // token 48 to token 0
    const auto& mask = initializer(graph(), "const.attn_mask_56");
    EXPECT_EQ(mask.dims, (std::vector<std::int64_t>{64, 1, 49, 49}));
    const auto window = [&](std::size_t w) {
        return std::vector<float>(mask.data.begin() + static_cast<std::ptrdiff_t>(w * 49 * 49),
                                  mask.data.begin() + static_cast<std::ptrdiff_t>((w + 1) * 49 * 49));
    };
    EXPECT_TRUE(std::ranges::all_of(window(0), [](float v) { return v == 0.0F; }));
    const auto last = window(63);  // four regions of 4x4, 4x3, 3x4, 3x3 tokens
    const auto masked = std::ranges::count(last, -100.0F);
    EXPECT_EQ(masked, 49 * 49 - (16 * 16 + 12 * 12 + 12 * 12 + 9 * 9));
}

}  // namespace
}  // namespace inferbench::models
