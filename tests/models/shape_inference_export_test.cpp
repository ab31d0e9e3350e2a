// Shape inference through the shape subgraphs real exporters write (torch.onnx.export of BERT-style
// encoders, ViT, detection heads): values of small int tensors are folded so that Reshape, Expand,
// Range and ConstantOfShape get concrete sizes at the benchmark's batch; data-dependent sizes
// (NonZero, NonMaxSuppression) are taken at their largest and marked.
#include <algorithm>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "graph_fixture.hpp"
#include "models/cost_model.hpp"
#include "models/shape_inference.hpp"

namespace inferbench::models {
namespace {

using testing::GraphFixture;
using testing::Ints;

Ints dims_of(const ShapeInference& r, const std::string& name) {
    const auto* s = r.find(name);
    return s == nullptr ? Ints{-999} : s->dims;
}

std::vector<double> values_of(const ShapeInference& r, const std::string& name) {
    const auto it = r.constants.find(name);
    return it == r.constants.end() ? std::vector<double>{-999} : it->second;
}

onnx::OnnxTensor int64_tensor(Ints dims, const Ints& values) {
    onnx::OnnxTensor t{"", onnx::DataType::int64, std::move(dims), {}, {}, {}};
    t.raw.resize(values.size() * 8);
    std::memcpy(t.raw.data(), values.data(), t.raw.size());
    return t;
}

GraphFixture& scalar(GraphFixture& g, const std::string& name, std::int64_t value) {
    return g.node("Constant", {}, {name}, {{"value", int64_tensor({}, {value})}});
}

ShapeInference at_batch(const GraphFixture& g, std::int64_t batch) {
    return infer_shapes(g.model, {.batch = batch, .input_shapes = {}});
}

bool all_inferred(const ShapeInference& r) {
    return std::ranges::all_of(r.node_inferred, [](bool inferred) { return inferred; });
}

// x.view(B, S, heads, head_dim) with B and S read from the tensor, then Q K^T.
TEST(ShapeInferenceExports, BertHeadSplitReshapeFromShapeGatherUnsqueezeConcat) {
    GraphFixture g;
    g.input("hidden", {std::string("batch"), std::int64_t{128}, std::int64_t{768}}).ints("heads", {12, 64});
    g.node("Shape", {"hidden"}, {"s"});
    scalar(g, "zero", 0).node("Gather", {"s", "zero"}, {"b"}, {{"axis", std::int64_t{0}}});
    scalar(g, "one", 1).node("Gather", {"s", "one"}, {"seq"}, {{"axis", std::int64_t{0}}});
    g.ints("axis0", {0});
    g.node("Unsqueeze", {"b", "axis0"}, {"b1"}).node("Unsqueeze", {"seq", "axis0"}, {"s1"});
    g.node("Concat", {"b1", "s1", "heads"}, {"target"}, {{"axis", std::int64_t{0}}});
    g.node("Reshape", {"hidden", "target"}, {"q"});
    g.node("Transpose", {"q"}, {"qt"}, {{"perm", Ints{0, 2, 1, 3}}});
    g.node("Transpose", {"q"}, {"kt"}, {{"perm", Ints{0, 2, 3, 1}}});
    g.node("MatMul", {"qt", "kt"}, {"scores"});
    const auto r = at_batch(g, 4);
    EXPECT_EQ(values_of(r, "target"), (std::vector<double>{4, 128, 12, 64}));
    EXPECT_EQ(dims_of(r, "scores"), (Ints{4, 12, 128, 128}));
    EXPECT_TRUE(all_inferred(r));
    const auto cost = estimate_cost(g.model, r);
    EXPECT_EQ(cost.totals.macs, std::int64_t{4} * 12 * 128 * 128 * 64);  // the batched attention product
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
}

// position_ids = arange(S).expand(B, S); the embedding lookup; the additive attention mask.
TEST(ShapeInferenceExports, BertPositionIdsAndAttentionMask) {
    GraphFixture g;
    g.input("input_ids", {std::string("batch"), std::int64_t{128}}, onnx::DataType::int64);
    g.input("attention_mask", {std::string("batch"), std::int64_t{128}}, onnx::DataType::int64);
    g.weight("positions", {512, 768});
    g.node("Shape", {"input_ids"}, {"s"});
    scalar(g, "one", 1).node("Gather", {"s", "one"}, {"seq"}, {{"axis", std::int64_t{0}}});
    scalar(g, "start", 0);
    g.node("Range", {"start", "seq", "one"}, {"range"});
    g.ints("axis0", {0}).node("Unsqueeze", {"range", "axis0"}, {"pos"});
    g.node("Expand", {"pos", "s"}, {"position_ids"});
    g.node("Gather", {"positions", "position_ids"}, {"embedded"});
    g.ints("axes12", {1, 2}).node("Unsqueeze", {"attention_mask", "axes12"}, {"m4"});
    g.node("Cast", {"m4"}, {"mf"}, {{"to", std::int64_t{1}}});
    g.node("Sub", {"one", "mf"}, {"inverted"}).node("Mul", {"inverted", "mf"}, {"additive"});
    const auto r = at_batch(g, 2);
    EXPECT_EQ(dims_of(r, "range"), (Ints{128}));
    EXPECT_EQ(values_of(r, "range")[127], 127);
    EXPECT_EQ(dims_of(r, "position_ids"), (Ints{2, 128}));
    EXPECT_EQ(dims_of(r, "embedded"), (Ints{2, 128, 768}));
    EXPECT_EQ(dims_of(r, "additive"), (Ints{2, 1, 1, 128}));
    EXPECT_TRUE(all_inferred(r));
}

// cls_token.expand(B, -1, -1) as exporters write it: ConstantOfShape, Mul, Equal, Where, Expand.
TEST(ShapeInferenceExports, ExpandTargetFromWhereEqualConstantOfShape) {
    GraphFixture g;
    g.input("x", {std::string("batch"), std::int64_t{196}, std::int64_t{768}}).weight("cls", {1, 1, 768});
    g.node("Shape", {"x"}, {"s"});
    scalar(g, "zero", 0).node("Gather", {"s", "zero"}, {"b"}, {{"axis", std::int64_t{0}}});
    g.ints("axis0", {0}).node("Unsqueeze", {"b", "axis0"}, {"b1"});
    g.ints("minus_ones", {-1, -1}).node("Concat", {"b1", "minus_ones"}, {"wanted"}, {{"axis", std::int64_t{0}}});
    g.ints("three", {3}).node("ConstantOfShape", {"three"}, {"ones"}, {{"value", int64_tensor({1}, {1})}});
    scalar(g, "minus_one", -1).node("Mul", {"ones", "minus_one"}, {"negative"});
    g.node("Equal", {"wanted", "negative"}, {"keep"});
    g.node("Where", {"keep", "ones", "wanted"}, {"target"});
    g.node("Expand", {"cls", "target"}, {"tokens"});
    g.node("Concat", {"tokens", "x"}, {"sequence"}, {{"axis", std::int64_t{1}}});
    const auto r = at_batch(g, 8);
    EXPECT_EQ(values_of(r, "target"), (std::vector<double>{8, 1, 1}));
    EXPECT_EQ(dims_of(r, "tokens"), (Ints{8, 1, 768}));
    EXPECT_EQ(dims_of(r, "sequence"), (Ints{8, 197, 768}));
    EXPECT_TRUE(all_inferred(r));
}

TEST(ShapeInferenceExports, FoldsReduceProdRangeModTileAndCast) {
    GraphFixture g;
    g.input("x", {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}});
    g.node("Shape", {"x"}, {"s"}).node("ReduceProd", {"s"}, {"numel"}, {{"keepdims", std::int64_t{0}}});
    scalar(g, "zero", 0);
    scalar(g, "five", 5).node("Range", {"zero", "numel", "five"}, {"steps"});
    scalar(g, "four", 4).node("Mod", {"steps", "four"}, {"rest"});
    g.ints("pair", {1, 2}).ints("repeats", {3}).node("Tile", {"pair", "repeats"}, {"tiled"});
    g.node("Cast", {"numel"}, {"as_float"}, {{"to", std::int64_t{1}}});
    g.node("Sqrt", {"as_float"}, {"root"}).node("Cast", {"root"}, {"side"}, {{"to", std::int64_t{7}}});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(values_of(r, "numel"), (std::vector<double>{24}));
    EXPECT_EQ(values_of(r, "steps"), (std::vector<double>{0, 5, 10, 15, 20}));
    EXPECT_EQ(values_of(r, "rest"), (std::vector<double>{0, 1, 2, 3, 0}));
    EXPECT_EQ(values_of(r, "tiled"), (std::vector<double>{1, 2, 1, 2, 1, 2}));
    EXPECT_EQ(values_of(r, "side"), (std::vector<double>{4}));  // Cast truncates toward zero
}

// An If node with the given branches.
GraphFixture& if_node(GraphFixture& g, const std::string& condition, const std::string& output,
                      onnx::OnnxGraph then_branch, onnx::OnnxGraph else_branch) {
    g.node("If", {condition}, {output});
    auto& node = g.model.graph.nodes.back();
    node.subgraphs["then_branch"] = std::make_shared<const onnx::OnnxGraph>(std::move(then_branch));
    node.subgraphs["else_branch"] = std::make_shared<const onnx::OnnxGraph>(std::move(else_branch));
    return g;
}

onnx::OnnxGraph branch(std::vector<onnx::OnnxNode> nodes, const std::string& output) {
    onnx::OnnxGraph graph;
    graph.nodes = std::move(nodes);
    graph.outputs.push_back({output, onnx::DataType::float32, false, {}});
    return graph;
}

onnx::OnnxNode op(std::string type, std::vector<std::string> inputs, std::string output,
                  std::map<std::string, onnx::OnnxAttributeValue, std::less<>> attributes = {}) {
    return {output, std::move(type), "", std::move(inputs), {output}, std::move(attributes)};
}

TEST(ShapeInferenceExports, IfWithAFoldedConditionTakesItsBranchAndCountsItsCost) {
    GraphFixture g;
    g.input("x", {std::string("batch"), std::int64_t{64}}).weight("w", {64, 32});
    g.node("Shape", {"x"}, {"s"});
    scalar(g, "zero", 0).node("Gather", {"s", "zero"}, {"b"}, {{"axis", std::int64_t{0}}});
    scalar(g, "one", 1).node("Equal", {"b", "one"}, {"single"});
    // then: squeeze the batch away; else: a matrix product (the branch a batch of 3 takes).
    if_node(g, "single", "y", branch({op("Flatten", {"x"}, "flat")}, "flat"),
            branch({op("MatMul", {"x", "w"}, "product")}, "product"));
    const auto r = at_batch(g, 3);
    EXPECT_EQ(dims_of(r, "y"), (Ints{3, 32}));
    EXPECT_FALSE(r.find("y")->data_dependent);
    EXPECT_EQ(r.find("flat"), nullptr);  // the branch not taken is not inferred
    const auto cost = estimate_cost(g.model, r);
    EXPECT_EQ(cost.totals.macs, 3 * 64 * 32);
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
    EXPECT_EQ(cost.totals.data_dependent_nodes, 0);
}

// torchvision's batched NMS: scores above a threshold (NonZero), the boxes they index, NMS, a box
// head over what it keeps. Every size after NonZero is its largest, and marked.
TEST(ShapeInferenceExports, NonZeroAndNmsSizesAreTheirLargestAndMarked) {
    GraphFixture g;
    g.input("scores", {std::int64_t{1}, std::int64_t{1}, std::int64_t{200}});
    g.input("boxes", {std::int64_t{1}, std::int64_t{200}, std::int64_t{4}});
    g.input("features", {std::int64_t{200}, std::int64_t{256}}).weight("w", {256, 1024});
    g.ints("limit", {100});
    g.node("NonMaxSuppression", {"boxes", "scores", "limit"}, {"selected"});
    scalar(g, "two", 2).node("Gather", {"selected", "two"}, {"index"}, {{"axis", std::int64_t{1}}});
    g.node("Gather", {"features", "index"}, {"kept"});
    g.node("MatMul", {"kept", "w"}, {"head"});
    g.node("Shape", {"kept"}, {"kept_shape"});
    scalar(g, "zero", 0).node("Gather", {"kept_shape", "zero"}, {"count"});
    g.node("Equal", {"count", "zero"}, {"none"});
    if_node(g, "none", "result", branch({op("Identity", {"features"}, "empty")}, "empty"),
            branch({op("Relu", {"head"}, "activated")}, "activated"));
    g.node("Greater", {"scores", "scores"}, {"mask"}).node("NonZero", {"mask"}, {"where"});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "selected"), (Ints{100, 3}));
    EXPECT_EQ(dims_of(r, "head"), (Ints{100, 1024}));
    EXPECT_EQ(dims_of(r, "where"), (Ints{3, 200}));
    EXPECT_TRUE(r.find("head")->data_dependent);
    EXPECT_TRUE(r.find("result")->data_dependent);  // the branch the largest count takes
    EXPECT_EQ(dims_of(r, "result"), (Ints{100, 1024}));
    EXPECT_FALSE(r.find("mask")->data_dependent);
    EXPECT_TRUE(all_inferred(r));
    const auto cost = estimate_cost(g.model, r);
    EXPECT_EQ(cost.totals.macs, 100 * 256 * 1024);  // at most
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
    EXPECT_GT(cost.totals.data_dependent_nodes, 4);
}

TEST(ShapeInferenceExports, TopKGatherNdScatterNdAndRoiAlign) {
    GraphFixture g;
    g.input("logits", {std::int64_t{1}, std::int64_t{1000}}).input("grid", {std::int64_t{7}, std::int64_t{7}});
    g.input("maps", {std::int64_t{1}, std::int64_t{256}, std::int64_t{20}, std::int64_t{20}});
    g.input("rois", {std::int64_t{150}, std::int64_t{4}});
    g.input("batch_index", {std::int64_t{150}}, onnx::DataType::int64);
    g.ints("k", {300}).node("TopK", {"logits", "k"}, {"top", "top_index"});
    g.input("index", {std::int64_t{5}, std::int64_t{2}}, onnx::DataType::int64);
    g.node("GatherND", {"grid", "index"}, {"picked"});
    g.input("updates", {std::int64_t{5}});
    g.node("ScatterND", {"grid", "index", "updates"}, {"scattered"});
    g.node("RoiAlign", {"maps", "rois", "batch_index"}, {"pooled"},
           {{"output_height", std::int64_t{7}}, {"output_width", std::int64_t{7}}});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "top"), (Ints{1, 300}));
    EXPECT_EQ(dims_of(r, "top_index"), (Ints{1, 300}));
    EXPECT_EQ(dims_of(r, "picked"), (Ints{5}));
    EXPECT_EQ(dims_of(r, "scattered"), (Ints{7, 7}));
    EXPECT_EQ(dims_of(r, "pooled"), (Ints{150, 256, 7, 7}));
    EXPECT_TRUE(all_inferred(r));
}

}  // namespace
}  // namespace inferbench::models
