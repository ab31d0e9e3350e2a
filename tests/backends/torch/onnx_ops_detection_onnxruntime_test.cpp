// The operators of detection heads (NonMaxSuppression, RoiAlign, If with a condition computed at
// run time, TopK's ties) and of Hugging Face's position ids (CumSum, GatherElements), each against
// ONNX Runtime: attributes, constant and run-time inputs, integer and floating types, fp16/bf16
// where the op computes on floats (tolerances: tolerance_for() in onnx_vs_onnxruntime.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "backends/torch/onnx_vs_onnxruntime.hpp"
#include "core/error.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using Attribute = std::pair<std::string, onnx::OnnxAttributeValue>;

constexpr torch::ScalarType kFloatTypes[] = {torch::kFloat, torch::kHalf, torch::kBFloat16};

Attribute int_attr(std::string name, std::int64_t value) { return {std::move(name), value}; }
Attribute float_attr(std::string name, float value) { return {std::move(name), value}; }
Attribute string_attr(std::string name, std::string value) { return {std::move(name), std::move(value)}; }

class DetectionVsOnnxRuntime : public ::testing::Test {
protected:
    void SetUp() override { torch::manual_seed(17); }
};

torch::Tensor scalar(std::int64_t v) { return torch::tensor(v, torch::kLong); }
torch::Tensor scalar(float v) { return torch::tensor(v, torch::kFloat); }

// [batch, n, 4] boxes as [y1, x1, y2, x2] with corners in either order, clustered so they overlap.
torch::Tensor overlapping_boxes(std::int64_t batch, std::int64_t n) {
    const torch::Tensor centers = torch::rand({batch, n, 2}) * 4;
    const torch::Tensor sizes = torch::rand({batch, n, 2}) * 3 + 0.5;
    torch::Tensor boxes = torch::cat({centers - sizes / 2, centers + sizes / 2}, -1);
    // Swap the corners of every third box: ONNX lets them come in either order.
    const torch::Tensor swapped = torch::cat({boxes.narrow(-1, 2, 2), boxes.narrow(-1, 0, 2)}, -1);
    const torch::Tensor every_third = (torch::arange(n) % 3 == 0).view({1, n, 1});
    return torch::where(every_third, swapped, boxes);
}

TEST_F(DetectionVsOnnxRuntime, NonMaxSuppressionPerBatchAndClassWithThresholds) {
    const torch::Tensor boxes = overlapping_boxes(2, 40);
    const torch::Tensor scores = torch::rand({2, 3, 40});
    // Constant limits, as torchvision writes them; a per-class limit that cuts; a score threshold.
    EXPECT_TRUE(agrees_with_onnxruntime({"NonMaxSuppression",
                                         {in(boxes), in(scores), init(scalar(std::int64_t{5})),
                                          init(scalar(0.3F)), init(scalar(0.2F))}}));
    // Run-time limits; INT64_MAX boxes per class (torchvision's), no score threshold.
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"NonMaxSuppression",
         {in(boxes), in(scores), in(scalar(std::numeric_limits<std::int64_t>::max())), in(scalar(0.5F))}}));
    // IoU threshold 0: any overlap suppresses. Left out: 0 as well.
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"NonMaxSuppression", {in(boxes), in(scores), init(scalar(std::int64_t{100})), none(), none()}}));
    // No max_output_boxes_per_class: nothing is selected.
    EXPECT_TRUE(agrees_with_onnxruntime({"NonMaxSuppression", {in(boxes), in(scores)}}));
}

TEST_F(DetectionVsOnnxRuntime, NonMaxSuppressionCenterBoxesTiesAndEmptyBoxes) {
    const torch::Tensor centers = torch::cat({torch::rand({1, 30, 2}) * 4, torch::rand({1, 30, 2}) * 2 + 0.5}, -1);
    const torch::Tensor scores = torch::rand({1, 2, 30});
    EXPECT_TRUE(agrees_with_onnxruntime({"NonMaxSuppression",
                                         {in(centers), in(scores), init(scalar(std::int64_t{10})),
                                          init(scalar(0.4F)), init(scalar(0.1F))},
                                         {int_attr("center_point_box", 1)}}));
    // Equal scores: the lower box index first. Boxes of no area never suppress.
    torch::Tensor boxes = overlapping_boxes(1, 30);
    boxes.index_put_({0, torch::indexing::Slice(0, 5), 2}, boxes.index({0, torch::indexing::Slice(0, 5), 0}));
    EXPECT_TRUE(agrees_with_onnxruntime({"NonMaxSuppression",
                                         {in(boxes), in(torch::full({1, 1, 30}, 0.5F)),
                                          init(scalar(std::int64_t{30})), init(scalar(0.2F))}}));
    // No candidate above the score threshold: [0, 3].
    EXPECT_TRUE(agrees_with_onnxruntime({"NonMaxSuppression",
                                         {in(boxes), in(torch::full({1, 1, 30}, 0.1F)),
                                          init(scalar(std::int64_t{3})), init(scalar(0.5F)), init(scalar(0.9F))}}));
}

TEST_F(DetectionVsOnnxRuntime, NonMaxSuppressionRejectsAnIouThresholdAboveOne) {
    Node n{"NonMaxSuppression",
           {in(overlapping_boxes(1, 4)), in(torch::rand({1, 1, 4})), init(scalar(std::int64_t{2})), init(scalar(1.5F))}};
    EXPECT_THAT([&] { run(n); }, ::testing::ThrowsMessage<std::runtime_error>(
                                     ::testing::HasSubstr("iou_threshold 1.5 is not in [0, 1]")));
}

// Rois [n, 4] as x1, y1, x2, y2 over an image of `size`, some reaching past its edges.
torch::Tensor rois(std::int64_t n, double size) {
    const torch::Tensor a = torch::rand({n, 2}) * size - 1;
    return torch::cat({a, a + torch::rand({n, 2}) * size / 2 + 0.1}, 1);
}

TEST_F(DetectionVsOnnxRuntime, RoiAlignModesTransformsAndSampling) {
    const torch::Tensor x = torch::randn({2, 3, 10, 12});
    const torch::Tensor r = rois(6, 12);
    const torch::Tensor batch = torch::tensor({0, 1, 1, 0, 1, 0}, torch::kLong);
    for (const char* mode : {"avg", "max"}) {
        for (const char* transform : {"half_pixel", "output_half_pixel"}) {
            for (const std::int64_t sampling : {0, 2}) {
                EXPECT_TRUE(agrees_with_onnxruntime(
                    {"RoiAlign",
                     {in(x), in(r), in(batch)},
                     {string_attr("mode", mode), string_attr("coordinate_transformation_mode", transform),
                      int_attr("output_height", 3), int_attr("output_width", 4), int_attr("sampling_ratio", sampling)},
                     1,
                     16}))
                    << mode << " " << transform << " sampling " << sampling;
            }
        }
    }
}

// Faster R-CNN's form: rois in image coordinates on a stride-4 feature map (spatial_scale 1/4),
// adaptive sampling; opset 10 (no transformation attribute: output_half_pixel); fp16 and bf16.
TEST_F(DetectionVsOnnxRuntime, RoiAlignSpatialScaleOpsetTenAndHalfPrecision) {
    const torch::Tensor x = torch::randn({1, 4, 8, 8});
    const torch::Tensor r = rois(5, 32);
    const torch::Tensor batch = torch::zeros({5}, torch::kLong);
    const std::vector<Attribute> attributes = {int_attr("output_height", 2), int_attr("output_width", 2),
                                               float_attr("spatial_scale", 0.25F)};
    EXPECT_TRUE(agrees_with_onnxruntime({"RoiAlign", {in(x), in(r), init(batch)}, attributes, 1, 10}));
    for (const torch::ScalarType type : {torch::kFloat, torch::kHalf}) {
        EXPECT_TRUE(agrees_with_onnxruntime({"RoiAlign", {in(x), in(r), init(batch)}, attributes, 1, 16}, type))
            << type;
    }
    // At bf16 the rois themselves round: coordinates near 32 to 1/8 of a pixel of the image, 1/32
    // of one of the feature map, which moves each sample along a gradient of random values (~2 per
    // pixel): 0.1 rather than the one-rounding tolerance.
    EXPECT_TRUE(agrees_with_onnxruntime({"RoiAlign", {in(x), in(r), init(batch)}, attributes, 1, 16}, torch::kBFloat16,
                                        0.1));
    // No rois: [0, C, h, w].
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"RoiAlign", {in(x), in(torch::zeros({0, 4})), in(torch::zeros({0}, torch::kLong))}, attributes, 1, 16}));
}

TEST_F(DetectionVsOnnxRuntime, TopKRanksEqualValuesByTheLowerIndex) {
    const torch::Tensor x = torch::randint(0, 3, {4, 12}).to(torch::kFloat);
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), init(ints({5}))}, {int_attr("axis", 1)}, 2}));
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), init(ints({3}))}, {int_attr("largest", 0)}, 2}));
    EXPECT_TRUE(agrees_with_onnxruntime({"TopK", {in(x), init(ints({2}))}, {int_attr("axis", 0)}, 2}));
}

TEST_F(DetectionVsOnnxRuntime, CumSumExclusiveReverseOnAnyAxis) {
    const torch::Tensor x = torch::randn({3, 4, 5});
    for (const std::int64_t exclusive : {0, 1}) {
        for (const std::int64_t reverse : {0, 1}) {
            const std::vector<Attribute> attributes = {int_attr("exclusive", exclusive), int_attr("reverse", reverse)};
            EXPECT_TRUE(agrees_with_onnxruntime({"CumSum", {in(x), init(scalar(std::int64_t{1}))}, attributes}))
                << exclusive << reverse;
            // The axis as a run-time int32 input, counted from the end.
            EXPECT_TRUE(agrees_with_onnxruntime(
                {"CumSum", {in(x), in(torch::tensor(-1, torch::kInt))}, attributes}))
                << exclusive << reverse;
        }
    }
    for (const torch::ScalarType type : kFloatTypes) {
        EXPECT_TRUE(agrees_with_onnxruntime({"CumSum", {in(torch::rand({2, 6})), init(scalar(std::int64_t{1}))}}, type))
            << type;
    }
}

// Hugging Face's position ids: cumsum(mask, 1) of an int mask, which must stay int (not promote).
TEST_F(DetectionVsOnnxRuntime, CumSumOfIntegersKeepsTheirType) {
    const torch::Tensor mask32 = torch::randint(0, 2, {2, 7}, torch::kInt);
    EXPECT_TRUE(agrees_with_onnxruntime({"CumSum", {in(mask32), init(scalar(std::int64_t{1}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"CumSum", {in(mask32.to(torch::kLong)), init(scalar(std::int64_t{0}))}, {int_attr("exclusive", 1)}}));
}

TEST_F(DetectionVsOnnxRuntime, GatherElementsWithNegativeIndicesOnAnAxis) {
    const torch::Tensor x = torch::randn({3, 4});
    const torch::Tensor indices = torch::tensor({0, -1, 2, 1, 3, -4}).reshape({3, 2});
    EXPECT_TRUE(agrees_with_onnxruntime({"GatherElements", {in(x), init(indices)}, {int_attr("axis", 1)}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"GatherElements", {in(x), in(torch::tensor({2, -1, 0, 1}, torch::kInt).reshape({1, 4}))}}));
    EXPECT_TRUE(agrees_with_onnxruntime(
        {"GatherElements", {in(torch::arange(12, torch::kLong).reshape({3, 4})), init(indices)}, {int_attr("axis", -1)}}));
    for (const torch::ScalarType type : kFloatTypes) {
        EXPECT_TRUE(agrees_with_onnxruntime({"GatherElements", {in(x), init(indices)}, {int_attr("axis", 1)}}, type))
            << type;
    }
}

// --- If ---

onnx::OnnxValueInfo value(const std::string& name, onnx::DataType type = onnx::DataType::float32) {
    return {name, type, false, {}};
}

onnx::OnnxNode node(std::string op, std::vector<std::string> inputs, std::string output) {
    return {output, std::move(op), "", std::move(inputs), {output}, {}};
}

// A branch graph: `nodes`, writing `output` (float32).
std::shared_ptr<const onnx::OnnxGraph> branch(std::vector<onnx::OnnxNode> nodes, const std::string& output,
                                              std::vector<onnx::OnnxTensor> initializers = {}) {
    auto g = std::make_shared<onnx::OnnxGraph>();
    g->name = output + "_graph";
    g->nodes = std::move(nodes);
    g->initializers = std::move(initializers);
    g->outputs = {value(output)};
    return g;
}

onnx::OnnxNode if_node(const std::string& condition, const std::string& output,
                       std::shared_ptr<const onnx::OnnxGraph> then_graph,
                       std::shared_ptr<const onnx::OnnxGraph> else_graph) {
    onnx::OnnxNode n = node("If", {condition}, output);
    n.subgraphs.emplace("then_branch", std::move(then_graph));
    n.subgraphs.emplace("else_branch", std::move(else_graph));
    return n;
}

// y = If(sum(x) > limit) then x * 2 + bias (outer x, a branch constant, an outer initializer)
//     else (If(sum(x) < -limit) then -x else x - 1): the branches read outer values, one nests another.
onnx::OnnxModel data_dependent_if() {
    onnx::OnnxModel m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    m.graph.inputs = {value("x"), value("limit")};
    m.graph.outputs = {value("y")};
    m.graph.initializers = {to_onnx("bias", floats({0.5F}))};
    m.graph.nodes = {node("ReduceSum", {"x"}, "sum"), node("Greater", {"sum", "limit"}, "big"),
                     node("Neg", {"limit"}, "low")};
    onnx::OnnxNode below = node("Less", {"sum", "low"}, "small");
    const auto then_graph = branch({node("Mul", {"x", "two"}, "doubled"), node("Add", {"doubled", "bias"}, "t")}, "t",
                                   {to_onnx("two", floats({2.0F}))});
    const auto negated = branch({node("Neg", {"x"}, "n")}, "n");
    const auto decremented = branch({node("Sub", {"x", "bias"}, "d1"), node("Sub", {"d1", "bias"}, "d")}, "d");
    const auto else_graph = branch({below, if_node("small", "e", negated, decremented)}, "e");
    m.graph.nodes.push_back(if_node("big", "y", then_graph, else_graph));
    return m;
}

TEST_F(DetectionVsOnnxRuntime, IfRunsTheBranchTheRunTimeConditionPicks) {
    const onnx::OnnxModel m = data_dependent_if();
    const torch::Tensor limit = scalar(3.0F);
    for (const float offset : {2.0F, -2.0F, 0.0F}) {  // then, else-then, else-else
        const torch::Tensor x = torch::rand({2, 3}) + offset;
        for (const torch::ScalarType type : kFloatTypes) {
            EXPECT_TRUE(agrees_with_onnxruntime(m, {x, limit}, type)) << offset << " " << type;
        }
    }
    const OnnxProgram program = OnnxProgram::from_model(m, "if.onnx");
    std::vector<std::string> ops;
    for (const ProgramNode& n : program.nodes()) ops.push_back(n.op_type);
    EXPECT_THAT(ops, ::testing::Contains("If"));
}

// A condition computed from the input's shape (an exporter's `if x.size(0) == 1`): specialize()
// folds it, and the branch taken runs inline; the nodes left include no If.
TEST_F(DetectionVsOnnxRuntime, IfOnAShapeFoldsAtSpecializeAndAConstantOneAtLoad) {
    onnx::OnnxModel m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    m.graph.inputs = {value("x")};
    m.graph.outputs = {value("y")};
    m.graph.initializers = {to_onnx("axis0", ints({0})), to_onnx("one", ints({1})), to_onnx("always", torch::tensor(true))};
    m.graph.nodes = {node("Shape", {"x"}, "shape"), node("Gather", {"shape", "axis0"}, "rows"),
                     node("Equal", {"rows", "one"}, "single_v"), node("Squeeze", {"single_v"}, "single"),
                     if_node("single", "picked", branch({node("Neg", {"x"}, "n")}, "n"),
                             branch({node("Relu", {"x"}, "r")}, "r")),
                     if_node("always", "y", branch({node("Identity", {"picked"}, "kept")}, "kept"),
                             branch({node("Abs", {"picked"}, "a")}, "a"))};
    for (const std::int64_t rows : {1, 3}) {
        const torch::Tensor x = torch::randn({rows, 4});
        EXPECT_TRUE(agrees_with_onnxruntime(m, {x})) << rows;
        OnnxProgram program = OnnxProgram::from_model(m, "if.onnx");
        program.specialize({x});
        std::vector<std::string> ops;
        for (const ProgramNode& n : program.nodes()) ops.push_back(n.op_type);
        EXPECT_THAT(ops, ::testing::Contains(rows == 1 ? "Neg" : "Relu")) << rows;
        EXPECT_THAT(ops, ::testing::Not(::testing::Contains(rows == 1 ? "Relu" : "Neg"))) << rows;
        EXPECT_THAT(ops, ::testing::Not(::testing::Contains("If"))) << rows;
        EXPECT_TRUE(torch::equal(program.run({x})[0], rows == 1 ? -x : torch::relu(x)));
    }
}

TEST_F(DetectionVsOnnxRuntime, IfWithAMissingBranchOrAWrongOutputCountIsALoadError) {
    onnx::OnnxModel m = data_dependent_if();
    m.graph.nodes.back().subgraphs.erase("else_branch");
    EXPECT_THAT([&] { OnnxProgram::from_model(m, "if.onnx"); },
                ::testing::ThrowsMessage<UserError>(::testing::HasSubstr(
                    "if.onnx: node 'y' (If): attribute else_branch (a graph) is missing")));
    m = data_dependent_if();
    m.graph.nodes.back().outputs.push_back("extra");
    EXPECT_THAT([&] { OnnxProgram::from_model(m, "if.onnx"); },
                ::testing::ThrowsMessage<UserError>(::testing::HasSubstr("then_branch has 1 outputs, the node 2")));
}

}  // namespace
}  // namespace inferbench::torch_onnx
