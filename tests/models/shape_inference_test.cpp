#include "models/shape_inference.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph_fixture.hpp"

namespace inferbench::models {
namespace {

using testing::GraphFixture;
using testing::Ints;

Ints dims_of(const ShapeInference& r, const std::string& name) {
    const auto* s = r.find(name);
    return s == nullptr ? Ints{-999} : s->dims;
}

TEST(ShapeInference, ConvAndPoolFollowPadsAndStrides) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{3}, std::int64_t{224}, std::int64_t{224}}).weight("w", {64, 3, 7, 7});
    g.node("Conv", {"x", "w"}, {"c"}, {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}});
    g.node("MaxPool", {"c"}, {"p"},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
    g.node("GlobalAveragePool", {"p"}, {"g"});
    g.node("Flatten", {"g"}, {"f"});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "c"), (Ints{1, 64, 112, 112}));
    EXPECT_EQ(dims_of(r, "p"), (Ints{1, 64, 56, 56}));
    EXPECT_EQ(dims_of(r, "g"), (Ints{1, 64, 1, 1}));
    EXPECT_EQ(dims_of(r, "f"), (Ints{1, 64}));
    EXPECT_TRUE(r.warnings.empty());
}

TEST(ShapeInference, SamePaddingAndCeilMode) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{8}, std::int64_t{7}, std::int64_t{7}}).weight("w", {8, 1, 3, 3});
    g.node("Conv", {"x", "w"}, {"c"},
           {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}, {"group", std::int64_t{8}}});
    g.node("MaxPool", {"x"}, {"p"},
           {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "c"), (Ints{1, 8, 4, 4}));
    EXPECT_EQ(dims_of(r, "p"), (Ints{1, 8, 4, 4}));
}

TEST(ShapeInference, ReshapeCopiesZerosAndInfersMinusOne) {
    GraphFixture g;
    g.input("x", {std::int64_t{2}, std::int64_t{8}, std::int64_t{12}})
        .ints("heads", {0, 0, 3, 4})
        .ints("flat", {0, -1});
    g.node("Reshape", {"x", "heads"}, {"a"}).node("Reshape", {"x", "flat"}, {"b"});
    g.node("Transpose", {"a"}, {"t"}, {{"perm", Ints{0, 2, 1, 3}}});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "a"), (Ints{2, 8, 3, 4}));
    EXPECT_EQ(dims_of(r, "b"), (Ints{2, 96}));
    EXPECT_EQ(dims_of(r, "t"), (Ints{2, 3, 8, 4}));
}

// What exporters write for x.view(x.size(0), -1): the target is computed, not stored.
TEST(ShapeInference, FoldsShapeGatherConcatChainsForReshape) {
    GraphFixture g;
    g.input("x", {std::string("batch"), std::int64_t{8}, std::int64_t{12}}).ints("minus_one", {-1});
    g.node("Shape", {"x"}, {"s"});
    g.node("Constant", {}, {"zero"}, {{"value_int", std::int64_t{0}}});
    g.node("Gather", {"s", "zero"}, {"n"}, {{"axis", std::int64_t{0}}});
    g.node("Constant", {}, {"axes"}, {{"value_ints", Ints{0}}});
    g.node("Unsqueeze", {"n", "axes"}, {"n1"});
    g.node("Concat", {"n1", "minus_one"}, {"target"}, {{"axis", std::int64_t{0}}});
    g.node("Reshape", {"x", "target"}, {"y"});
    ShapeInferenceOptions options;
    options.batch = 5;
    const auto r = infer_shapes(g.model, options);
    EXPECT_EQ(dims_of(r, "target"), (Ints{2}));
    EXPECT_EQ(r.constants.at("target"), (std::vector<double>{5, -1}));
    EXPECT_EQ(dims_of(r, "y"), (Ints{5, 96}));
}

TEST(ShapeInference, SymbolicBatchIsOneWithAWarningUnlessGiven) {
    GraphFixture g;
    g.input("x", {std::string("batch"), std::int64_t{3}});
    g.node("Relu", {"x"}, {"y"});
    const auto defaulted = infer_shapes(g.model);
    EXPECT_EQ(dims_of(defaulted, "y"), (Ints{1, 3}));
    ASSERT_EQ(defaulted.warnings.size(), 1u);
    EXPECT_NE(defaulted.warnings[0].find("--batch"), std::string::npos);
    ShapeInferenceOptions options;
    options.input_shapes["x"] = {7, 3};
    EXPECT_EQ(dims_of(infer_shapes(g.model, options), "y"), (Ints{7, 3}));
}

TEST(ShapeInference, OtherSymbolicDimensionsNeedAShape) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::string("height")});
    EXPECT_THROW(infer_shapes(g.model), UserError);
    ShapeInferenceOptions options;
    options.input_shapes["nope"] = {1};
    EXPECT_THROW(infer_shapes(g.model, options), UserError);
}

TEST(ShapeInference, UnknownOpsLeaveOutputsUnknownAndWarnOnce) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{4}});
    g.node("FancyOp", {"x"}, {"a"}).node("FancyOp", {"a"}, {"b"}).node("Relu", {"b"}, {"c"}).node("Relu", {"x"}, {"d"});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(r.find("a"), nullptr);
    EXPECT_EQ(r.find("c"), nullptr);
    EXPECT_EQ(dims_of(r, "d"), (Ints{1, 4}));
    EXPECT_EQ(r.node_inferred, (std::vector<bool>{false, false, false, true}));
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_NE(r.warnings[0].find("unknown op FancyOp (2 nodes)"), std::string::npos) << r.warnings[0];
}

TEST(ShapeInference, MatMulGemmAndBroadcasting) {
    GraphFixture g;
    g.input("x", {std::int64_t{2}, std::int64_t{4}, std::int64_t{8}, std::int64_t{16}}).weight("w", {16, 32});
    g.input("m", {std::int64_t{3}, std::int64_t{5}}).weight("fc", {10, 5}).weight("bias", {10});
    g.node("MatMul", {"x", "w"}, {"y"}).node("Gemm", {"m", "fc", "bias"}, {"z"}, {{"transB", std::int64_t{1}}});
    g.node("Add", {"z", "bias"}, {"s"});
    g.node("Equal", {"z", "bias"}, {"e"});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "y"), (Ints{2, 4, 8, 32}));
    EXPECT_EQ(dims_of(r, "z"), (Ints{3, 10}));
    EXPECT_EQ(dims_of(r, "s"), (Ints{3, 10}));
    EXPECT_EQ(r.find("e")->type, onnx::DataType::boolean);
}

TEST(ShapeInference, SliceSplitSqueezeUnsqueezeConcatExpandResize) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{6}, std::int64_t{10}, std::int64_t{10}});
    g.ints("starts", {1, -4}).ints("ends", {5, 1000}).ints("axes", {1, 3}).ints("steps", {2, 1});
    g.ints("ax0", {0}).ints("target", {2, 6, 10, 10}).ints("sizes", {1, 6, 20, 30});
    g.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sl"});
    g.node("Split", {"x"}, {"p0", "p1", "p2"}, {{"axis", std::int64_t{1}}});
    g.node("Squeeze", {"x", "ax0"}, {"sq"}).node("Unsqueeze", {"sq", "ax0"}, {"un"});
    g.node("Concat", {"p0", "p1"}, {"cat"}, {{"axis", std::int64_t{1}}});
    g.node("Expand", {"x", "target"}, {"ex"});
    g.node("Resize", {"x", "", "", "sizes"}, {"rs"});
    g.node("ReduceMean", {"x"}, {"rm"}, {{"axes", Ints{2, 3}}, {"keepdims", std::int64_t{0}}});
    const auto r = infer_shapes(g.model);
    EXPECT_EQ(dims_of(r, "sl"), (Ints{1, 2, 10, 4}));
    EXPECT_EQ(dims_of(r, "p2"), (Ints{1, 2, 10, 10}));
    EXPECT_EQ(dims_of(r, "sq"), (Ints{6, 10, 10}));
    EXPECT_EQ(dims_of(r, "un"), (Ints{1, 6, 10, 10}));
    EXPECT_EQ(dims_of(r, "cat"), (Ints{1, 4, 10, 10}));
    EXPECT_EQ(dims_of(r, "ex"), (Ints{2, 6, 10, 10}));
    EXPECT_EQ(dims_of(r, "rs"), (Ints{1, 6, 20, 30}));
    EXPECT_EQ(dims_of(r, "rm"), (Ints{1, 6}));
}

TEST(ShapeInference, ParsesShapeOverrides) {
    EXPECT_EQ(parse_shape_override("input=1,3,224,224"), (std::pair<std::string, Ints>{"input", {1, 3, 224, 224}}));
    EXPECT_EQ(parse_shape_override("a=b=2x3").second, (Ints{2, 3}));
    EXPECT_THROW(parse_shape_override("input"), UserError);
    EXPECT_THROW(parse_shape_override("input=1,,3"), UserError);
    EXPECT_THROW(parse_shape_override("input=0"), UserError);
}

}  // namespace
}  // namespace inferbench::models
