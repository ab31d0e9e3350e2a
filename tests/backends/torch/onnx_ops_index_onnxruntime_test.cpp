// The operators real exports need beyond the zoo's (torchvision's DenseNet, Inception, Swin and
// detection heads, Hugging Face's attention masks), each against ONNX Runtime on one-node graphs:
// constant and run-time inputs, negative indices and pads, broadcasting, integer and boolean
// tensors, and the interpreter at fp16 and bf16 where the op computes on floats (tolerances:
// tolerance_for() in onnx_vs_onnxruntime.hpp).
#include <gtest/gtest.h>

#include <limits>

#include "backends/torch/onnx_vs_onnxruntime.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using Attribute = std::pair<std::string, onnx::OnnxAttributeValue>;

constexpr torch::ScalarType kFloatTypes[] = {torch::kFloat, torch::kHalf, torch::kBFloat16};

Attribute ints_attr(std::string name, Ints values) { return {std::move(name), std::move(values)}; }
Attribute int_attr(std::string name, std::int64_t value) { return {std::move(name), value}; }
Attribute string_attr(std::string name, std::string value) { return {std::move(name), std::move(value)}; }

class VsOnnxRuntime : public ::testing::Test {
protected:
    void SetUp() override { torch::manual_seed(13); }
};

// DenseNet's and Inception's form: constant pads from a Constant; Swin's: run-time pads, which crop too.
TEST_F(VsOnnxRuntime, PadConstantWithValueNegativePadsAndRunTimePads) {
    const torch::Tensor x = torch::randn({1, 2, 3, 4});
    for (const torch::ScalarType type : kFloatTypes) {
        EXPECT_TRUE(agrees_with_onnxruntime(
            {"Pad", {in(x), init(ints({0, 0, 1, 2, 0, 0, 2, -1})), init(floats({1.5F}).reshape({}))}}, type))
            << type;
    }
    EXPECT_TRUE(agrees_with_onnxruntime({"Pad", {in(x), in(ints({0, 1, 0, 1, 0, 0, 1, 1}))}}));
    // An integer tensor keeps its type; the fill converts to it.
    EXPECT_TRUE(agrees_with_onnxruntime({"Pad",
                                         {in(torch::arange(6, torch::kLong).reshape({2, 3})), init(ints({1, 0, 0, 2})),
                                          init(torch::tensor(7, torch::kLong))}}));
}

TEST_F(VsOnnxRuntime, PadReflectEdgeAndWrapOnSeveralAxes) {
    const torch::Tensor x = torch::randn({2, 3, 5});
    for (const char* mode : {"reflect", "edge"}) {
        EXPECT_TRUE(agrees_with_onnxruntime(
            {"Pad", {in(x), init(ints({0, 2, 1, 0, 1, 4})), none()}, {string_attr("mode", mode)}}))
            << mode;
    }
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"Pad", {in(x), init(ints({0, 2, 3, 0, 1, 4})), none()}, {string_attr("mode", "wrap")}, 1, 19}));
}

// Opset 18's axes input: the pads cover the listed axes only (negative ones count from the end).
TEST_F(VsOnnxRuntime, PadOnListedAxes) {
    const torch::Tensor x = torch::randn({2, 3, 4});
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"Pad", {in(x), init(ints({1, 2, 0, 3})), init(floats({-1.0F}).reshape({})), init(ints({-1, 0}))}, {}, 1, 18}));
}

// Before opset 11: pads and value are attributes.
TEST_F(VsOnnxRuntime, PadAttributesBeforeOpsetEleven) {
    EXPECT_TRUE(agrees_with_onnxruntime({"Pad",
                                         {in(torch::randn({2, 3}))},
                                         {ints_attr("pads", {1, 0, 0, 2}), {"value", 0.25F}},
                                         1,
                                         10}));
}

TEST_F(VsOnnxRuntime, TileWithConstantAndRunTimeRepeats) {
    EXPECT_TRUE(agrees_with_onnxruntime({"Tile", {in(torch::randn({2, 1, 3})), init(ints({1, 3, 2}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"Tile", {in(torch::arange(4, torch::kLong).reshape({2, 2})), in(ints({2, 1}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"Tile", {in(torch::rand({2, 2}) > 0.5), init(ints({0, 2}))}}));
}

// Distinct values: the order of ties is the one thing the two may choose differently.
TEST_F(VsOnnxRuntime, TopKLargestAndSmallestOnAnyAxis) {
    const torch::Tensor x = torch::randperm(60, torch::kFloat).reshape({3, 4, 5});
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), init(ints({3}))}, {int_attr("axis", 1)}, 2}));
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), in(ints({2}))}, {int_attr("largest", 0)}, 2}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"TopK", {in(torch::randperm(10, torch::kLong)), init(ints({4}))}, {int_attr("axis", -1)}, 2}));
    // At bf16 (LibTorch 1.13 has no fp16 topk on the CPU): the values 0..59 are exact there too.
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), init(ints({3}))}, {int_attr("axis", 1)}, 2}, torch::kBFloat16));
}

TEST_F(VsOnnxRuntime, NonZeroOfBooleansIntegersAndFloats) {
    EXPECT_TRUE(agrees_with_onnxruntime({"NonZero", {in(torch::rand({3, 4}) > 0.5)}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"NonZero", {in(torch::tensor({0, 3, 0, -1}, torch::kLong))}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"NonZero", {in(torch::relu(torch::randn({2, 2, 3})))}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"NonZero", {in(torch::zeros({2, 3}))}}));  // none: [2, 0]
}

// SSDlite's form: full and partial index tuples, negative indices, batch_dims.
TEST_F(VsOnnxRuntime, GatherNdFullAndPartialTuplesAndBatchDims) {
    const torch::Tensor x = torch::randn({3, 4, 5});
    EXPECT_TRUE(agrees_with_onnxruntime({"GatherND", {in(x), init(torch::tensor({2, -1, 0, 1}).reshape({2, 2}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"GatherND", {in(x), in(torch::tensor({1, -3, 4, 2, 0, 0}).reshape({2, 1, 3}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"GatherND", {in(x), init(torch::tensor({1, 0, 3}).reshape({3, 1}))},
                                         {int_attr("batch_dims", 1)}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"GatherND", {in(torch::arange(12, torch::kLong).reshape({3, 4})), init(torch::tensor({2, 0}).reshape({2, 1}))}}));
}

// Swin's form: a mask built by writing into ConstantOfShape; reductions add, mul, max.
TEST_F(VsOnnxRuntime, ScatterNdWritesAndReduces) {
    const torch::Tensor x = torch::randn({4, 3, 2});
    const torch::Tensor rows = torch::tensor({2, 0}).reshape({2, 1});
    EXPECT_TRUE(agrees_with_onnxruntime({"ScatterND", {in(x), init(rows), in(torch::randn({2, 3, 2}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"ScatterND", {in(x), init(torch::tensor({1, 2, -1, 0}).reshape({2, 2})), in(torch::randn({2, 2}))}}));
    const torch::Tensor repeated = torch::tensor({1, 1, 3}).reshape({3, 1});
    for (const char* reduction : {"add", "mul", "max", "min"}) {
        EXPECT_TRUE(agrees_with_onnxruntime(
            {"ScatterND", {in(x), init(repeated), in(torch::randn({3, 3, 2}))}, {string_attr("reduction", reduction)}, 1, 18}))
            << reduction;
    }
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"ScatterND", {in(torch::zeros({3, 3}, torch::kLong)), init(rows), in(torch::ones({2, 3}, torch::kLong))}}));
}

TEST_F(VsOnnxRuntime, ScatterElementsOnAnAxisWithNegativeIndices) {
    const torch::Tensor x = torch::randn({3, 4});
    const torch::Tensor indices = torch::tensor({0, -1, 2, 1, 3, -4}).reshape({2, 3});
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"ScatterElements", {in(x), init(indices), in(torch::randn({2, 3}))}, {int_attr("axis", 1)}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"ScatterElements",
                                         {in(x), init(torch::tensor({0, 0, 2, 0}).reshape({1, 4})), in(torch::randn({1, 4}))},
                                         {int_attr("axis", 0), string_attr("reduction", "add")}}));
}

// Swin's window shift: integer Mod of negative numbers (Python's sign rule), broadcast.
TEST_F(VsOnnxRuntime, ModIntegerAndFloatingWithBroadcasting) {
    const torch::Tensor a = torch::tensor({-7, -3, 0, 4, 9, 11}, torch::kLong).reshape({2, 3});
    EXPECT_TRUE(agrees_with_onnxruntime({"Mod", {in(a), init(torch::tensor({3, -4, 5}, torch::kLong))}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"Mod", {in(a), init(torch::tensor({3, -4, 5}, torch::kLong))}, {int_attr("fmod", 1)}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"Mod", {in(torch::randn({2, 3}) * 10), init(floats({2.5F}))}, {int_attr("fmod", 1)}}));
}

// Hugging Face's attention mask after softmax of fully masked rows; finfo.min at fp16 is -inf.
TEST_F(VsOnnxRuntime, IsNanAndIsInf) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const torch::Tensor x = floats({1, nan, -inf, inf, 0, -2}).reshape({2, 3});
    for (const torch::ScalarType type : kFloatTypes) {
        EXPECT_TRUE(agrees_with_onnxruntime({"IsNaN", {in(x)}}, type)) << type;
        EXPECT_TRUE(agrees_with_onnxruntime({"IsInf", {in(x)}}, type)) << type;
    }
    EXPECT_TRUE(agrees_with_onnxruntime({"IsInf", {in(x)}, {int_attr("detect_positive", 0)}}));
    EXPECT_TRUE(agrees_with_onnxruntime({"IsInf", {in(x)}, {int_attr("detect_negative", 0)}}));
}

// Detection heads' element counts: ReduceProd of a shape, keepdims 0; axes as attribute and input.
TEST_F(VsOnnxRuntime, ReduceProdOverAxes) {
    EXPECT_TRUE(agrees_with_onnxruntime({"ReduceProd", {in(ints({3, 4, 5}))}, {int_attr("keepdims", 0)}, 1, 13}));
    const torch::Tensor x = torch::rand({2, 3, 4}) + 0.5;
    EXPECT_TRUE(agrees_with_onnxruntime({"ReduceProd", {in(x)}, {ints_attr("axes", {0, -1})}, 1, 13}));
    EXPECT_TRUE(agrees_with_onnxruntime({"ReduceProd", {in(x), init(ints({1}))}, {int_attr("keepdims", 0)}, 1, 18}));
}

// Swin's export asks for Dropout's mask too: at inference, all true.
TEST_F(VsOnnxRuntime, DropoutPassesThroughWithAFullMask) {
    EXPECT_TRUE(agrees_with_onnxruntime({"Dropout", {in(torch::randn({2, 3, 4}))}, {}, 2}));
    EXPECT_TRUE(agrees_with_onnxruntime({"Dropout", {in(torch::randn({5})), init(floats({0.1F}).reshape({}))}, {}, 2}));
}

}  // namespace
}  // namespace inferbench::torch_onnx
