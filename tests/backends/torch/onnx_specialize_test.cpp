// Transformer graphs as the exporters write them (Hugging Face's attention mask, timm's and
// torchvision's scaled attention with the scale computed from a Shape), against ONNX Runtime at
// fp32, fp16 and bf16, and OnnxProgram::specialize(): with the input shapes fixed, no node that
// only computes from shapes is left to run, and the outputs do not change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "backends/torch/onnx_vs_onnxruntime.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using ::testing::ElementsAre;

// A graph assembled node by node; constants are initializers.
class Graph {
public:
    Graph() {
        m_.ir_version = 8;
        m_.opset_imports = {{"", 17}};
    }
    void input(const std::string& name) { m_.graph.inputs.push_back({name, onnx::DataType::undefined, false, {}}); }
    void output(const std::string& name) { m_.graph.outputs.push_back({name, onnx::DataType::undefined, false, {}}); }
    std::string constant(const std::string& name, const torch::Tensor& value) {
        m_.graph.initializers.push_back(to_onnx(name, value));
        return name;
    }
    std::string node(std::string op, std::vector<std::string> inputs, const std::string& output,
                     std::vector<std::pair<std::string, onnx::OnnxAttributeValue>> attributes = {}) {
        onnx::OnnxNode n{output, std::move(op), "", std::move(inputs), {output}, {}};
        for (auto& [name, value] : attributes) n.attributes.emplace(name, std::move(value));
        m_.graph.nodes.push_back(std::move(n));
        return output;
    }
    const onnx::OnnxModel& model() const { return m_; }

private:
    onnx::OnnxModel m_;
};

std::int64_t cast_to(onnx::DataType type) { return static_cast<std::int64_t>(type); }

// BERT's extended attention mask on scores [B, H, S, S] with mask [B, S] (int64):
// (1 - mask[:, None, None, :].float()) * finfo.min, broadcast by an Expand whose shape the exporter
// computes as Where(Equal(shape, -1), 1, shape); softmax; NaN (fully masked rows at fp16) to 0.
onnx::OnnxModel bert_attention_mask() {
    Graph g;
    g.input("scores");
    g.input("mask");
    g.node("Unsqueeze", {"mask", g.constant("axes12", ints({1, 2}))}, "mask4");
    g.node("Cast", {"mask4"}, "maskf", {{"to", cast_to(onnx::DataType::float32)}});
    g.node("Sub", {g.constant("one", floats({1}).reshape({})), "maskf"}, "inverted");
    g.node("Mul", {"inverted", g.constant("min", floats({std::numeric_limits<float>::lowest()}).reshape({}))},
           "bias");
    g.node("Shape", {"scores"}, "shape");
    g.node("Equal", {"shape", g.constant("minus_one", ints({-1}))}, "is_minus_one");
    g.node("Where", {"is_minus_one", g.constant("ones4", ints({1, 1, 1, 1})), "shape"}, "target");
    g.node("Expand", {"bias", "target"}, "bias_full");
    g.node("Add", {"scores", "bias_full"}, "masked");
    g.node("Softmax", {"masked"}, "probs", {{"axis", std::int64_t{-1}}});
    g.node("IsNaN", {"probs"}, "nan");
    g.node("Where", {"nan", g.constant("zero", floats({0}).reshape({})), "probs"}, "y");
    g.output("y");
    return g.model();
}

// softmax(q k^T / sqrt(d)) v with d = Shape(q)[-1], then heads merged by a Reshape whose target is
// Concat(Shape(x)[0], Shape(x)[2], -1) after the Transpose: timm's and torchvision's ViT.
onnx::OnnxModel scaled_attention() {
    Graph g;
    for (const char* name : {"q", "k", "v"}) g.input(name);
    g.node("Shape", {"q"}, "q_shape");
    g.node("Gather", {"q_shape", g.constant("last", torch::tensor(-1, torch::kLong))}, "d");
    g.node("Cast", {"d"}, "d_float", {{"to", cast_to(onnx::DataType::float32)}});
    g.node("Sqrt", {"d_float"}, "scale");
    g.node("Transpose", {"k"}, "k_t", {{"perm", Ints{0, 1, 3, 2}}});
    g.node("MatMul", {"q", "k_t"}, "scores");
    g.node("Div", {"scores", "scale"}, "scaled");
    g.node("Softmax", {"scaled"}, "probs", {{"axis", std::int64_t{-1}}});
    g.node("MatMul", {"probs", "v"}, "heads");
    g.node("Transpose", {"heads"}, "tokens", {{"perm", Ints{0, 2, 1, 3}}});
    g.node("Shape", {"tokens"}, "t_shape");
    g.node("Gather", {"t_shape", g.constant("zero", ints({0}))}, "batch");
    g.node("Gather", {"t_shape", g.constant("one", ints({1}))}, "length");
    g.node("Concat", {"batch", "length", g.constant("minus_one", ints({-1}))}, "target", {{"axis", std::int64_t{0}}});
    g.node("Reshape", {"tokens", "target"}, "y");
    g.output("y");
    return g.model();
}

std::vector<torch::Tensor> bert_inputs() {
    torch::Tensor mask = (torch::rand({2, 5}) > 0.4).to(torch::kLong);
    mask.select(1, 0).fill_(1);  // every row keeps a token: ONNX Runtime's softmax has no NaN to clear
    return {torch::randn({2, 3, 4, 5}), mask};
}

std::vector<torch::Tensor> attention_inputs() {
    return {torch::randn({2, 3, 6, 8}), torch::randn({2, 3, 6, 8}), torch::randn({2, 3, 6, 8})};
}

std::vector<std::string> operators(const OnnxProgram& program) {
    std::vector<std::string> ops;
    for (const ProgramNode& node : program.nodes()) ops.push_back(node.op_type);
    return ops;
}

// bf16's softmax and matrix products over 5 to 8 terms: a few roundings of 2^-8 each. (fp16 is the
// GPU's: LibTorch 1.13 has no fp16 softmax or sqrt on the CPU.)
constexpr double kAttentionToleranceBfloat16 = 4e-2;

TEST(TransformerGraphsVsOnnxRuntime, BertAttentionMask) {
    torch::manual_seed(21);
    const auto inputs = bert_inputs();
    EXPECT_TRUE(agrees_with_onnxruntime(bert_attention_mask(), inputs));
    EXPECT_TRUE(agrees_with_onnxruntime(bert_attention_mask(), inputs, torch::kBFloat16, kAttentionToleranceBfloat16));
}

TEST(TransformerGraphsVsOnnxRuntime, ScaledAttentionWithTheScaleFromAShape) {
    torch::manual_seed(22);
    const auto inputs = attention_inputs();
    EXPECT_TRUE(agrees_with_onnxruntime(scaled_attention(), inputs));
    EXPECT_TRUE(agrees_with_onnxruntime(scaled_attention(), inputs, torch::kBFloat16, kAttentionToleranceBfloat16));
}

TEST(OnnxProgramSpecialize, FoldsTheShapeArithmeticOfTheAttentionMask) {
    torch::manual_seed(23);
    OnnxProgram program = OnnxProgram::from_model(bert_attention_mask(), "bert.onnx");
    EXPECT_THAT(operators(program), ElementsAre("Unsqueeze", "Cast", "Sub", "Mul", "Shape", "Equal", "Where", "Expand",
                                                "Add", "Softmax", "IsNaN", "Where"));
    const auto inputs = bert_inputs();
    const torch::Tensor general = program.run(inputs).at(0);
    program.specialize(inputs);
    EXPECT_TRUE(program.specialized());
    // Shape, Equal and the first Where computed the Expand's target: now a constant.
    EXPECT_THAT(operators(program),
                ElementsAre("Unsqueeze", "Cast", "Sub", "Mul", "Expand", "Add", "Softmax", "IsNaN", "Where"));
    EXPECT_TRUE(torch::equal(program.run(inputs).at(0), general));
}

TEST(OnnxProgramSpecialize, FoldsTheAttentionScaleAndTheReshapeTarget) {
    torch::manual_seed(24);
    OnnxProgram program = OnnxProgram::from_model(scaled_attention(), "vit.onnx");
    EXPECT_EQ(program.nodes().size(), 15U);
    const auto inputs = attention_inputs();
    const torch::Tensor general = program.run(inputs).at(0);
    program.specialize(inputs);
    EXPECT_THAT(operators(program),
                ElementsAre("Transpose", "MatMul", "Div", "Softmax", "MatMul", "Transpose", "Reshape"));
    EXPECT_TRUE(torch::equal(program.run(inputs).at(0), general));

    // Other shapes: rejected, until specialized for them (from the general program again).
    const std::vector<torch::Tensor> longer = {torch::randn({1, 3, 7, 8}), torch::randn({1, 3, 7, 8}),
                                               torch::randn({1, 3, 7, 8})};
    EXPECT_THROW(program.run(longer), std::invalid_argument);
    program.specialize(longer);
    EXPECT_EQ(program.run(longer).at(0).sizes(), (Ints{1, 7, 24}));
}

// At bf16 the folded scale is computed in fp32 and converted once, like a weight.
TEST(OnnxProgramSpecialize, KeepsTheFloatTypeAndAgreesAtBfloat16) {
    torch::manual_seed(25);
    OnnxProgram program = OnnxProgram::from_model(scaled_attention(), "vit.onnx");
    program.to(torch::kCPU, torch::kBFloat16, false);
    const auto inputs = attention_inputs();
    const torch::Tensor general = program.run(inputs).at(0);
    program.specialize(inputs);
    EXPECT_EQ(program.float_type(), torch::kBFloat16);
    const torch::Tensor specialized = program.run(inputs).at(0);
    EXPECT_EQ(specialized.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::allclose(specialized.to(torch::kFloat), general.to(torch::kFloat), 2e-2, 2e-2));
}

// A Shape after NonZero depends on the data: it stays, and so does what reads it.
TEST(OnnxProgramSpecialize, LeavesDataDependentShapesToRunTime) {
    Graph g;
    g.input("x");
    g.node("NonZero", {"x"}, "where");
    g.node("Shape", {"where"}, "count_shape");
    g.node("Shape", {"x"}, "x_shape");
    g.node("Concat", {"count_shape", "x_shape"}, "y", {{"axis", std::int64_t{0}}});
    g.output("y");
    OnnxProgram program = OnnxProgram::from_model(g.model(), "nonzero.onnx");
    const torch::Tensor x = torch::tensor({0.0F, 1.0F, 2.0F});
    program.specialize({x});
    EXPECT_THAT(operators(program), ElementsAre("NonZero", "Shape", "Concat"));
    EXPECT_TRUE(torch::equal(program.run({x}).at(0), ints({1, 2, 3})));
    EXPECT_TRUE(torch::equal(program.run({torch::tensor({1.0F, 1.0F, 2.0F})}).at(0), ints({1, 3, 3})));
}

}  // namespace
}  // namespace inferbench::torch_onnx
