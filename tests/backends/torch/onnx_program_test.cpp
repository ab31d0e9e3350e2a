// OnnxProgram as a whole: load-time errors that name the node, input checking, constant folding,
// float types.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include "backends/torch/onnx_test_graphs.hpp"
#include "core/error.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string load_error(const onnx::OnnxModel& m) {
    try {
        OnnxProgram::from_model(m, "m.onnx");
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OnnxProgram, UnknownOperatorsFailAtLoadNamingTheNode) {
    EXPECT_THAT(load_error(model_of({"NonMaxSuppression", {in(torch::zeros({1}))}})),
                AllOf(HasSubstr("m.onnx: node 'node' (NonMaxSuppression): operator NonMaxSuppression is not supported"),
                      HasSubstr("supported: Abs, Add,")));
    onnx::OnnxModel custom = model_of({"Relu", {in(torch::zeros({1}))}});
    custom.graph.nodes[0].domain = "com.microsoft";
    EXPECT_THAT(load_error(custom), HasSubstr("operators of domain 'com.microsoft' are not supported"));
    EXPECT_THAT(load_error(model_of({"Resize",
                                     {in(torch::zeros({1, 1, 2, 2})), none(), init(torch::ones({4}))},
                                     {{"mode", std::string("cubic")}}})),
                HasSubstr("mode 'cubic' with coordinate_transformation_mode 'half_pixel'"));
    EXPECT_THAT(load_error(model_of({"Conv", {in(torch::zeros({1, 1, 2, 2}))}})), HasSubstr("input 1 is missing"));
    EXPECT_THAT(load_error(model_of({"Transpose", {in(torch::zeros({1}))}, {{"perm", 1.0F}}})),
                HasSubstr("attribute 'perm' should be a list of ints"));
}

TEST(OnnxProgram, UndefinedValuesAndDuplicatesFailAtLoad) {
    onnx::OnnxModel m = model_of({"Relu", {in(torch::zeros({1}))}});
    m.graph.nodes[0].inputs[0] = "nowhere";
    EXPECT_THAT(load_error(m),
                HasSubstr("node 'node' uses 'nowhere', which no earlier node, initializer or graph input defines"));
    m = model_of({"Relu", {in(torch::zeros({1}))}});
    m.graph.outputs[0].name = "missing";
    EXPECT_THAT(load_error(m), HasSubstr("graph output uses 'missing'"));
    m = model_of({"Relu", {in(torch::zeros({1}))}});
    m.graph.nodes.push_back(m.graph.nodes[0]);
    EXPECT_THAT(load_error(m), HasSubstr("value 'y0' (output of node 'node') is defined twice"));
}

TEST(OnnxProgram, ChecksInputsAgainstTheDeclaredShape) {
    onnx::OnnxModel m = model_of({"Relu", {in(torch::zeros({1}))}});
    m.graph.inputs[0].has_shape = true;
    m.graph.inputs[0].dims = {std::string("batch"), std::int64_t{3}};
    // An initializer listed among the inputs too (IR < 4) is not an input to feed.
    m.graph.initializers.push_back(to_onnx("w", torch::ones({1})));
    m.graph.inputs.push_back({"w", onnx::DataType::float32, false, {}});
    const OnnxProgram program = OnnxProgram::from_model(m, "m.onnx");
    ASSERT_EQ(program.inputs().size(), 1U);
    EXPECT_EQ(program.inputs()[0].name, "x0");
    EXPECT_EQ(program.run({-torch::ones({5, 3})}).at(0).sizes(), (Ints{5, 3}));
    EXPECT_THROW(program.run({torch::ones({5, 4})}), std::invalid_argument);
    EXPECT_THROW(program.run({torch::ones({3})}), std::invalid_argument);
    EXPECT_THROW(program.run({}), std::invalid_argument);
}

// Shape(x) -> Gather(0) -> Unsqueeze -> Concat with a constant -> Reshape, as PyTorch exports
// x.reshape(x.shape[0], -1); the Constant -> Unsqueeze branch is folded at load.
onnx::OnnxModel dynamic_reshape_model() {
    onnx::OnnxModel m = model_of({"Shape", {in(torch::zeros({1, 1}))}});
    m.graph.inputs[0].name = "x";
    auto& nodes = m.graph.nodes;
    nodes[0].inputs = {"x"};
    nodes[0].outputs = {"shape"};
    const auto node = [](std::string op, std::vector<std::string> inputs, std::string output) {
        return onnx::OnnxNode{output, std::move(op), "", std::move(inputs), {std::move(output)}, {}};
    };
    nodes.push_back(node("Constant", {}, "zero"));
    nodes.back().attributes.emplace("value", to_onnx("zero", torch::tensor(0, torch::kLong)));
    nodes.push_back(node("Gather", {"shape", "zero"}, "batch"));
    nodes.push_back(node("Constant", {}, "minus_one"));
    nodes.back().attributes.emplace("value_ints", Ints{-1});
    nodes.push_back(node("Constant", {}, "axes"));
    nodes.back().attributes.emplace("value_ints", Ints{0});
    nodes.push_back(node("Unsqueeze", {"batch", "axes"}, "batch_1d"));
    nodes.push_back(node("Concat", {"batch_1d", "minus_one"}, "target"));
    nodes.back().attributes.emplace("axis", std::int64_t{0});
    nodes.push_back(node("Reshape", {"x", "target"}, "y"));
    m.graph.outputs = {{"y", onnx::DataType::float32, false, {}}};
    return m;
}

TEST(OnnxProgram, RunsShapeArithmeticAndIsRepeatable) {
    const OnnxProgram program = OnnxProgram::from_model(dynamic_reshape_model(), "m.onnx");
    const torch::Tensor x = iota({3, 2, 5});
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(torch::equal(program.run({x}).at(0), x.reshape({3, 10})));
    EXPECT_EQ(program.run({iota({7, 2})}).at(0).sizes(), (Ints{7, 2}));
}

TEST(OnnxProgram, ConvertsFloatWeightsAndInputsToTheChosenType) {
    const torch::Tensor w = torch::randn({4, 3});
    OnnxProgram program = OnnxProgram::from_model(model_of({"MatMul", {in(torch::zeros({2, 4})), init(w)}}), "m.onnx");
    const torch::Tensor x = torch::randn({2, 4});
    const torch::Tensor fp32 = program.run({x}).at(0);
    EXPECT_EQ(fp32.scalar_type(), torch::kFloat);

    program.to(torch::kCPU, torch::kBFloat16, false);
    const torch::Tensor bf16 = program.run({x}).at(0);  // the fp32 input is converted
    EXPECT_EQ(bf16.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::allclose(bf16.to(torch::kFloat), fp32, 0.05, 0.05));

    program.to(torch::kCPU, torch::kDouble, false);  // the float64 reference the cross-backend tests use
    const torch::Tensor fp64 = program.run({x}).at(0);
    EXPECT_EQ(fp64.scalar_type(), torch::kDouble);
    EXPECT_TRUE(torch::allclose(fp64, torch::matmul(x.to(torch::kDouble), w.to(torch::kDouble)), 1e-12, 1e-12));

    program.to(torch::kCPU, torch::kFloat, true);  // back to fp32 from the file's weights: exact again
    EXPECT_TRUE(torch::equal(program.run({x}).at(0), fp32));
    EXPECT_THROW(program.to(torch::kCPU, torch::kInt, false), std::invalid_argument);
}

// finfo(float32).min, the exporters' mask value, is beyond fp16 and bf16: it saturates, so that
// 0 * min stays 0 rather than becoming NaN; infinities stay infinite.
TEST(OnnxProgram, FloatConstantsSaturateAtHalfAndBfloat16) {
    const float lowest = std::numeric_limits<float>::lowest();
    const float inf = std::numeric_limits<float>::infinity();
    OnnxProgram program = OnnxProgram::from_model(
        model_of({"Mul", {in(torch::zeros({3})), init(floats({lowest, -inf, 2.0F}))}}), "m.onnx");
    for (const auto type : {torch::kHalf, torch::kBFloat16}) {
        program.to(torch::kCPU, type, false);
        const torch::Tensor y = program.run({floats({0.0F, 1.0F, 1.0F})}).at(0).to(torch::kFloat);
        EXPECT_EQ(y[0].item<float>(), 0.0F) << type;
        EXPECT_EQ(y[1].item<float>(), -inf) << type;
        EXPECT_EQ(y[2].item<float>(), 2.0F) << type;
    }
}

// Hostile shapes (the fuzz target's findings): a tensor sized by values in the file fails with an
// error naming the node, at load when the values are constants, at run time when they are not.
TEST(OnnxProgram, HugeOrNegativeShapesFromTheFileAreErrors) {
    EXPECT_THAT(load_error(model_of({"ConstantOfShape", {init(ints({1 << 20, 1 << 20, 1 << 20}))}})),
                AllOf(HasSubstr("node 'node' (ConstantOfShape): cannot compute this constant node"),
                      HasSubstr("has more than 2147483648 elements")));
    EXPECT_THAT(load_error(model_of({"ConstantOfShape", {init(ints({4, -2}))}})), HasSubstr("dimension -2 is negative"));
    EXPECT_THAT(load_error(model_of({"Range", {init(ints({0}).reshape({})), init(ints({1L << 40}).reshape({})),
                                               init(ints({1}).reshape({}))}})),
                HasSubstr("Range: more than 2147483648 elements"));
    const OnnxProgram tile =
        OnnxProgram::from_model(model_of({"Tile", {in(torch::ones({2, 3})), in(ints({1, 1L << 40}))}}), "m.onnx");
    EXPECT_THAT([&] { tile.run({torch::ones({2, 3}), ints({1, 1L << 40})}); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("node 'node' (Tile): Tile: more than")));
    const OnnxProgram pad =
        OnnxProgram::from_model(model_of({"Pad", {in(torch::ones({2})), in(ints({0, 1L << 40}))}}), "m.onnx");
    EXPECT_THAT([&] { pad.run({torch::ones({2}), ints({0, 1L << 40})}); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("node 'node' (Pad): Pad: ")));
}

TEST(OnnxProgram, RunTimeErrorsNameTheNode) {
    const OnnxProgram program =
        OnnxProgram::from_model(model_of({"MatMul", {in(torch::zeros({2, 4})), init(torch::ones({4, 3}))}}), "m.onnx");
    EXPECT_THAT(
        [&] {
            program.run({torch::ones({2, 5})});
        },
        ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("m.onnx: node 'node' (MatMul): ")));
}

}  // namespace
}  // namespace inferbench::torch_onnx
