// The graph rewrites of onnx_fusion.hpp: each decomposed pattern, as exporters write it, built as an
// ONNX graph and run with and without fusion (fp32 tight, bf16 looser); the fused node count; and the
// intermediate values read elsewhere that must block a rewrite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "backends/torch/onnx_test_graphs.hpp"
#include "core/error.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A multi-node graph built one value at a time.
struct Graph {
    onnx::OnnxModel model;
    int next = 0;

    explicit Graph(std::int64_t opset = 17) {
        model.ir_version = 8;
        model.opset_imports = {{"", opset}};
    }
    std::string input(const std::string& name, onnx::DataType type = onnx::DataType::float32) {
        model.graph.inputs.push_back({name, type, false, {}});
        return name;
    }
    std::string init(const torch::Tensor& value) {
        const std::string name = "c" + std::to_string(next++);
        model.graph.initializers.push_back(to_onnx(name, value));
        return name;
    }
    // A scalar as exporters write it: a Constant node.
    std::string scalar(double value) {
        const std::string name = "k" + std::to_string(next++);
        onnx::OnnxNode node{name, "Constant", "", {}, {name}, {}};
        node.attributes.emplace("value", to_onnx(name, torch::tensor(static_cast<float>(value))));
        model.graph.nodes.push_back(std::move(node));
        return name;
    }
    std::string op(const std::string& type, std::vector<std::string> inputs,
                   std::vector<std::pair<std::string, onnx::OnnxAttributeValue>> attributes = {}) {
        const std::string name = "v" + std::to_string(next++);
        onnx::OnnxNode node{name, type, "", std::move(inputs), {name}, {}};
        for (auto& [key, value] : attributes) node.attributes.emplace(key, std::move(value));
        model.graph.nodes.push_back(std::move(node));
        return name;
    }
    void output(const std::string& name) { model.graph.outputs.push_back({name, onnx::DataType::undefined, false, {}}); }
    // Makes the first `type` node's output a graph output too: a value read outside the pattern.
    void expose(const std::string& type) {
        const auto node = std::ranges::find(model.graph.nodes, type, &onnx::OnnxNode::op_type);
        ASSERT_NE(node, model.graph.nodes.end()) << type;
        output(node->outputs[0]);
    }
};

std::vector<std::string> op_types(const OnnxProgram& program) {
    std::vector<std::string> out;
    for (const ProgramNode& node : program.nodes()) out.push_back(node.op_type);
    return out;
}

// Runs `g` with and without the rewrites in fp32 and bf16 and compares; returns the fused program.
OnnxProgram expect_same_results(const Graph& g, const std::vector<torch::Tensor>& inputs,
                                bool channels_last = false) {
    OnnxProgram plain = OnnxProgram::from_model(g.model, "t.onnx", false);
    OnnxProgram fused = OnnxProgram::from_model(g.model, "t.onnx", true);
    EXPECT_EQ(plain.fusion_counts().total(), 0);
    for (const auto& [type, tolerance] : {std::pair{torch::kFloat, 2e-5}, std::pair{torch::kBFloat16, 3e-2}}) {
        plain.to(torch::kCPU, type, channels_last);
        fused.to(torch::kCPU, type, channels_last);
        const auto expected = plain.run(inputs);
        const auto actual = fused.run(inputs);
        EXPECT_EQ(expected.size(), actual.size());
        for (std::size_t k = 0; k < expected.size() && k < actual.size(); ++k) {
            const torch::Tensor want = expected[k].to(torch::kFloat);
            const torch::Tensor got = actual[k].to(torch::kFloat);
            EXPECT_EQ(want.sizes(), got.sizes());
            const double scale = std::max(1.0, want.abs().max().item<double>());
            EXPECT_LE((want - got).abs().max().item<double>(), tolerance * scale)
                << "output " << k << " in " << c10::toString(type);
        }
    }
    fused.to(torch::kCPU, torch::kFloat, channels_last);
    return fused;
}

// --- GELU ---

enum class GeluTail { x_times_p_then_half, p_times_half_then_x, half_x_then_p };

Graph erf_gelu(bool multiply_by_inverse, GeluTail tail) {
    Graph g;
    const std::string x = g.input("x");
    const std::string scaled = multiply_by_inverse ? g.op("Mul", {x, g.scalar(1.0 / std::numbers::sqrt2)})
                                                   : g.op("Div", {x, g.scalar(std::numbers::sqrt2)});
    const std::string p = g.op("Add", {g.op("Erf", {scaled}), g.scalar(1.0)});
    std::string y;
    switch (tail) {
        case GeluTail::x_times_p_then_half:
            y = g.op("Mul", {g.op("Mul", {x, p}), g.scalar(0.5)});
            break;
        case GeluTail::p_times_half_then_x:
            y = g.op("Mul", {x, g.op("Mul", {p, g.scalar(0.5)})});
            break;
        case GeluTail::half_x_then_p:
            y = g.op("Mul", {g.op("Mul", {g.scalar(0.5), x}), p});
            break;
    }
    g.output(y);
    return g;
}

TEST(OnnxFusion, ErfGeluInEveryExporterOrderBecomesOneGelu) {
    const torch::Tensor x = torch::randn({2, 3, 8});
    for (const bool inverse : {false, true}) {
        for (const GeluTail tail :
             {GeluTail::x_times_p_then_half, GeluTail::p_times_half_then_x, GeluTail::half_x_then_p}) {
            const OnnxProgram fused = expect_same_results(erf_gelu(inverse, tail), {x});
            EXPECT_EQ(fused.fusion_counts().gelu, 1);
            EXPECT_THAT(op_types(fused), ElementsAre("Gelu"));
            EXPECT_TRUE(torch::allclose(fused.run({x})[0], torch::gelu(x), 1e-5, 1e-6));
        }
    }
}

TEST(OnnxFusion, GeluWhoseIntermediateIsReadElsewhereStaysDecomposed) {
    Graph g = erf_gelu(false, GeluTail::x_times_p_then_half);
    g.expose("Erf");
    const OnnxProgram fused = expect_same_results(g, {torch::randn({4, 5})});
    EXPECT_EQ(fused.fusion_counts().total(), 0);
    EXPECT_THAT(op_types(fused), ElementsAre("Div", "Erf", "Add", "Mul", "Mul"));

    Graph wrong_constant;  // 0.6 instead of 0.5: not a GELU
    const std::string x = wrong_constant.input("x");
    const std::string p = wrong_constant.op(
        "Add", {wrong_constant.op("Erf", {wrong_constant.op("Div", {x, wrong_constant.scalar(std::numbers::sqrt2)})}),
                wrong_constant.scalar(1.0)});
    wrong_constant.output(wrong_constant.op("Mul", {wrong_constant.op("Mul", {x, p}), wrong_constant.scalar(0.6)}));
    EXPECT_EQ(OnnxProgram::from_model(wrong_constant.model, "t.onnx").fusion_counts().total(), 0);
}

TEST(OnnxFusion, TanhGeluBecomesApproximateGelu) {
    for (const bool pow : {true, false}) {
        Graph g;
        const std::string x = g.input("x");
        const std::string cube = pow ? g.op("Pow", {x, g.scalar(3.0)}) : g.op("Mul", {x, g.op("Mul", {x, x})});
        const std::string inner = g.op("Add", {x, g.op("Mul", {g.scalar(0.044715), cube})});
        const std::string t = g.op("Tanh", {g.op("Mul", {g.scalar(std::sqrt(2.0 / std::numbers::pi)), inner})});
        const std::string p = g.op("Add", {g.scalar(1.0), t});
        g.output(g.op("Mul", {g.op("Mul", {g.scalar(0.5), x}), p}));
        const torch::Tensor in = torch::randn({3, 16});
        const OnnxProgram fused = expect_same_results(g, {in});
        EXPECT_EQ(fused.fusion_counts().gelu, 1);
        EXPECT_THAT(op_types(fused), ElementsAre("Gelu"));
        EXPECT_TRUE(torch::allclose(fused.run({in})[0], torch::gelu(in, "tanh"), 1e-5, 1e-6));
    }
}

// --- LayerNorm and RMSNorm ---

// Reduces over the last axis, as an attribute (opset < 18) or an input (opset 18 on).
std::string reduce_mean(Graph& g, const std::string& x) {
    if (g.model.opset_version() >= 18) return g.op("ReduceMean", {x, g.init(ints({-1}))});
    return g.op("ReduceMean", {x}, {{"axes", Ints{-1}}});
}

Graph decomposed_layer_norm(std::int64_t opset, bool with_beta, std::int64_t width) {
    Graph g(opset);
    const std::string x = g.input("x");
    const std::string centered = g.op("Sub", {x, reduce_mean(g, x)});
    const std::string variance = reduce_mean(g, g.op("Pow", {centered, g.scalar(2.0)}));
    const std::string root = g.op("Sqrt", {g.op("Add", {variance, g.scalar(1e-5)})});
    std::string y = g.op("Mul", {g.op("Div", {centered, root}), g.init(torch::rand({width}) + 0.5)});
    if (with_beta) y = g.op("Add", {y, g.init(torch::randn({width}))});
    g.output(y);
    return g;
}

TEST(OnnxFusion, DecomposedLayerNormBecomesLayerNormalization) {
    const torch::Tensor x = torch::randn({2, 5, 32}) * 3 + 1;
    for (const std::int64_t opset : {13, 18}) {
        for (const bool beta : {true, false}) {
            const OnnxProgram fused = expect_same_results(decomposed_layer_norm(opset, beta, 32), {x});
            EXPECT_EQ(fused.fusion_counts().layer_norm, 1);
            EXPECT_EQ(fused.fusion_counts().rms_norm, 0);
            EXPECT_THAT(op_types(fused), ElementsAre("LayerNormalization"));
        }
    }
}

TEST(OnnxFusion, LayerNormWithACenteredValueReadElsewhereStaysDecomposed) {
    Graph g = decomposed_layer_norm(17, true, 8);
    g.expose("Sub");  // x - mean
    const OnnxProgram fused = expect_same_results(g, {torch::randn({3, 8})});
    EXPECT_EQ(fused.fusion_counts().layer_norm, 0);
    // What follows x - mean is still an RMSNorm of it, which reads x - mean as its input: that one stays fusable.
    EXPECT_EQ(fused.fusion_counts().rms_norm, 1);
    EXPECT_THAT(op_types(fused), ElementsAre("ReduceMean", "Sub", "RMSNormalization", "Add"));
}

enum class RmsDivision { divide, reciprocal, one_over };

TEST(OnnxFusion, RmsNormInEachSpellingBecomesOneKernel) {
    const torch::Tensor x = torch::randn({2, 4, 64}) * 2;
    for (const RmsDivision division : {RmsDivision::divide, RmsDivision::reciprocal, RmsDivision::one_over}) {
        Graph g;
        const std::string in = g.input("x");
        const std::string mean = g.op("ReduceMean", {g.op("Pow", {in, g.scalar(2.0)})}, {{"axes", Ints{-1}}});
        const std::string root = g.op("Sqrt", {g.op("Add", {mean, g.scalar(1e-6)})});
        std::string normalized;
        if (division == RmsDivision::divide) normalized = g.op("Div", {in, root});
        if (division == RmsDivision::reciprocal) normalized = g.op("Mul", {in, g.op("Reciprocal", {root})});
        if (division == RmsDivision::one_over) normalized = g.op("Mul", {g.op("Div", {g.scalar(1.0), root}), in});
        g.output(g.op("Mul", {g.init(torch::rand({64}) + 0.5), normalized}));
        const OnnxProgram fused = expect_same_results(g, {x});
        EXPECT_EQ(fused.fusion_counts().rms_norm, 1);
        EXPECT_THAT(op_types(fused), ElementsAre("RMSNormalization"));
    }
}

TEST(OnnxFusion, RmsNormAveragesHalfPrecisionInFloat32) {
    Graph g;
    const std::string in = g.input("x");
    const std::string mean = g.op("ReduceMean", {g.op("Mul", {in, in})}, {{"axes", Ints{-1}}});
    g.output(g.op("Div", {in, g.op("Sqrt", {g.op("Add", {mean, g.scalar(1e-6)})})}));
    OnnxProgram fused = OnnxProgram::from_model(g.model, "t.onnx");
    ASSERT_EQ(fused.fusion_counts().rms_norm, 1);
    fused.to(torch::kCPU, torch::kHalf, false);
    // 300^2 overflows fp16 (the largest finite value is 65504): the fp32 statistics keep the result 1.
    const torch::Tensor x = torch::full({1, 16}, 300.0);
    const torch::Tensor y = fused.run({x})[0].to(torch::kFloat);
    EXPECT_TRUE(torch::allclose(y, torch::ones({1, 16}), 1e-2, 0)) << y;
}

// --- Attention ---

struct AttentionShape {
    bool mask = false;
    bool dropout = false;
    bool multiply = false;  // scale as Mul by 1/sqrt(d) rather than Div by sqrt(d)
};

Graph attention(const AttentionShape& s, std::int64_t head_size) {
    Graph g;
    const std::string q = g.input("q");
    const std::string k = g.input("k");
    const std::string v = g.input("v");
    const std::string kt = g.op("Transpose", {k}, {{"perm", Ints{0, 1, 3, 2}}});
    const std::string product = g.op("MatMul", {q, kt});
    const double root = std::sqrt(static_cast<double>(head_size));
    std::string scores = s.multiply ? g.op("Mul", {product, g.scalar(1.0 / root)}) : g.op("Div", {product, g.scalar(root)});
    if (s.mask) scores = g.op("Add", {scores, g.input("mask")});
    std::string probs = g.op("Softmax", {scores}, {{"axis", std::int64_t{-1}}});
    if (s.dropout) probs = g.op("Dropout", {probs});
    g.output(g.op("MatMul", {probs, v}));
    return g;
}

TEST(OnnxFusion, MatMulSoftmaxMatMulBecomesOneAttention) {
    const torch::Tensor q = torch::randn({2, 3, 7, 16});
    const torch::Tensor k = torch::randn({2, 3, 7, 16});
    const torch::Tensor v = torch::randn({2, 3, 7, 16});
    const torch::Tensor mask = torch::where(torch::rand({2, 1, 1, 7}) > 0.3, 0.0, -1e4);
    for (const AttentionShape shape : {AttentionShape{}, AttentionShape{true, false, false},
                                       AttentionShape{false, true, true}, AttentionShape{true, true, true}}) {
        std::vector<torch::Tensor> inputs{q, k, v};
        if (shape.mask) inputs.push_back(mask);
        const OnnxProgram fused = expect_same_results(attention(shape, 16), inputs);
        EXPECT_EQ(fused.fusion_counts().attention, 1);
        EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "Attention"));
    }
}

TEST(OnnxFusion, AttentionTakesInTheScalesOfQAndKTransposed) {
    // nn.MultiheadAttention's export: Q / sqrt(d) before the product; PyTorch's SDPA export: Q and K^T
    // each times d^-1/4.
    for (const bool both : {false, true}) {
        Graph g;
        const std::string q = g.input("q");
        const std::string kt = g.op("Transpose", {g.input("k")}, {{"perm", Ints{0, 2, 1}}});
        const std::string scaled_q = both ? g.op("Mul", {q, g.scalar(std::pow(8.0, -0.25))}) : g.op("Div", {q, g.scalar(std::sqrt(8.0))});
        const std::string scaled_kt = both ? g.op("Mul", {g.scalar(std::pow(8.0, -0.25)), kt}) : kt;
        const std::string probs = g.op("Softmax", {g.op("MatMul", {scaled_q, scaled_kt})}, {{"axis", std::int64_t{-1}}});
        g.output(g.op("MatMul", {probs, g.input("v")}));
        const auto x = torch::randn({6, 5, 8});
        const OnnxProgram fused = expect_same_results(g, {x, torch::randn({6, 5, 8}), x});
        EXPECT_EQ(fused.fusion_counts().attention, 1);
        EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "Attention"));
    }
}

TEST(OnnxFusion, SdpaExportWithABooleanMaskAndItsNanGuardBecomesOneAttention) {
    // PyTorch's SDPA export with a boolean mask (BERT, DistilBERT, CLIP's text encoder): the mask as
    // Where(allowed, 0, -inf) added to Q K^T (Q and K^T each scaled by d^-1/4), and the probabilities
    // of a fully masked row (NaN after Softmax) zeroed by Where(IsNaN(p), 0, p).
    Graph g;
    const std::string q = g.op("Mul", {g.input("q"), g.scalar(std::pow(8.0, -0.25))});
    const std::string kt = g.op("Mul", {g.op("Transpose", {g.input("k")}, {{"perm", Ints{0, 1, 3, 2}}}), g.scalar(std::pow(8.0, -0.25))});
    const std::string mask = g.op("Where", {g.input("allowed", onnx::DataType::boolean), g.scalar(0.0),
                                            g.scalar(-std::numeric_limits<double>::infinity())});
    const std::string probs = g.op("Softmax", {g.op("Add", {g.op("MatMul", {q, kt}), mask})}, {{"axis", std::int64_t{-1}}});
    const std::string guarded = g.op("Where", {g.op("IsNaN", {probs}), g.scalar(0.0), probs});
    g.output(g.op("MatMul", {guarded, g.input("v")}));
    torch::Tensor allowed = torch::rand({2, 1, 5, 5}) > 0.4;
    allowed.index_put_({0, 0, 2}, false);  // one row with every score masked
    allowed.index_put_({1, 0, 3, 1}, true);
    const std::vector<torch::Tensor> inputs{torch::randn({2, 3, 5, 8}), torch::randn({2, 3, 5, 8}), allowed,
                                            torch::randn({2, 3, 5, 8})};
    const OnnxProgram fused = expect_same_results(g, inputs);
    EXPECT_EQ(fused.fusion_counts().attention, 1);
    EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "Where", "Attention"));
    const torch::Tensor y = fused.run(inputs)[0];
    EXPECT_TRUE(torch::equal(y.index({0, torch::indexing::Slice(), 2}), torch::zeros({3, 8}))) << y;
    EXPECT_FALSE(y.isnan().any().item<bool>());
}

TEST(OnnxFusion, AttentionWhoseNanGuardIsReadElsewhereStaysDecomposed) {
    Graph g;
    const std::string q = g.input("q");
    const std::string kt = g.op("Transpose", {g.input("k")}, {{"perm", Ints{0, 1, 3, 2}}});
    const std::string probs = g.op("Softmax", {g.op("MatMul", {q, kt})}, {{"axis", std::int64_t{-1}}});
    const std::string is_nan = g.op("IsNaN", {probs});
    g.output(g.op("MatMul", {g.op("Where", {is_nan, g.scalar(0.0), probs}), g.input("v")}));
    g.output(is_nan);
    const auto x = torch::randn({1, 2, 5, 8});
    EXPECT_EQ(expect_same_results(g, {x, x, x}).fusion_counts().attention, 0);
}

TEST(OnnxFusion, AttentionWhoseProbabilitiesAreAnOutputStaysDecomposed) {
    Graph g = attention({}, 8);
    g.expose("Softmax");
    const auto x = torch::randn({1, 2, 5, 8});
    const OnnxProgram fused = expect_same_results(g, {x, x, x});
    EXPECT_EQ(fused.fusion_counts().attention, 0);
    EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "MatMul", "Div", "Softmax", "MatMul"));
}

// --- Linear and the ConvNeXt block ---

TEST(OnnxFusion, MatMulPlusBiasBecomesOneLinearOnContiguousAndStridedInputs) {
    for (const bool strided : {false, true}) {
        Graph g;
        std::string x = g.input("x");
        if (strided) x = g.op("Transpose", {x}, {{"perm", Ints{0, 2, 1}}});
        // The bias through an Identity, as PyTorch's exporter shares equal weights.
        const std::string bias = g.op("Identity", {g.init(torch::randn({24}))});
        g.output(g.op("Add", {bias, g.op("MatMul", {x, g.init(torch::randn({16, 24}))})}));
        const OnnxProgram fused = expect_same_results(g, {strided ? torch::randn({3, 16, 5}) : torch::randn({3, 5, 16})});
        EXPECT_EQ(fused.fusion_counts().linear, 1);
        EXPECT_EQ(op_types(fused).back(), "Linear");
    }
}

TEST(OnnxFusion, LinearOnASequenceFirstViewMultipliesInMemoryOrderWithoutACopy) {
    // nn.MultiheadAttention's export: batch-first activations [B, L, E] transposed to [L, B, E] before
    // the input projection. The product keeps the activations' memory order: a [L, B, N] view of a
    // dense [B, L, N].
    Graph g;
    const std::string x = g.op("Transpose", {g.input("x")}, {{"perm", Ints{1, 0, 2}}});
    g.output(g.op("Add", {g.op("MatMul", {x, g.init(torch::randn({16, 24}))}), g.init(torch::randn({24}))}));
    const OnnxProgram fused = expect_same_results(g, {torch::randn({3, 5, 16})});
    EXPECT_EQ(fused.fusion_counts().linear, 1);
    const torch::Tensor y = fused.run({torch::randn({3, 5, 16})})[0];
    EXPECT_EQ(y.sizes(), (Ints{5, 3, 24}));
    EXPECT_TRUE(y.transpose(0, 1).is_contiguous());
}

TEST(OnnxFusion, MatMulWhoseProductIsReadElsewhereOrWithABroadcastBiasStaysApart) {
    Graph shared;
    const std::string x = shared.input("x");
    const std::string product = shared.op("MatMul", {x, shared.init(torch::randn({8, 4}))});
    shared.output(shared.op("Add", {product, shared.init(torch::randn({4}))}));
    shared.output(product);
    EXPECT_EQ(expect_same_results(shared, {torch::randn({2, 8})}).fusion_counts().linear, 0);

    Graph broadcast;  // a [2, 4] bias is not a Linear's
    const std::string y = broadcast.input("x");
    broadcast.output(broadcast.op("Add", {broadcast.op("MatMul", {y, broadcast.init(torch::randn({8, 4}))}),
                                          broadcast.init(torch::randn({2, 4}))}));
    EXPECT_EQ(expect_same_results(broadcast, {torch::randn({2, 8})}).fusion_counts().linear, 0);
}

// torchvision's CNBlock as PyTorch 1.13 exports it: depthwise Conv, to NHWC, LayerNorm, Linear, GELU,
// Linear, back to NCHW, layer scale, residual.
Graph convnext_block(std::int64_t channels) {
    Graph g;
    const std::string x = g.input("x");
    const std::string conv = g.op("Conv", {x, g.init(torch::randn({channels, 1, 7, 7}) * 0.1), g.init(torch::randn({channels}))},
                                  {{"group", channels}, {"kernel_shape", Ints{7, 7}}, {"pads", Ints{3, 3, 3, 3}}});
    const std::string nhwc = g.op("Transpose", {conv}, {{"perm", Ints{0, 2, 3, 1}}});
    const std::string norm = g.op("LayerNormalization", {nhwc, g.init(torch::rand({channels}) + 0.5), g.init(torch::randn({channels}))},
                                  {{"axis", std::int64_t{-1}}, {"epsilon", 1e-6F}});
    const std::string up = g.op("Add", {g.init(torch::randn({4 * channels})), g.op("MatMul", {norm, g.init(torch::randn({channels, 4 * channels}) * 0.2)})});
    const std::string p = g.op("Add", {g.op("Erf", {g.op("Div", {up, g.scalar(std::numbers::sqrt2)})}), g.scalar(1.0)});
    const std::string gelu = g.op("Mul", {g.op("Mul", {up, p}), g.scalar(0.5)});
    const std::string down = g.op("Add", {g.init(torch::randn({channels})), g.op("MatMul", {gelu, g.init(torch::randn({4 * channels, channels}) * 0.1)})});
    const std::string nchw = g.op("Transpose", {down}, {{"perm", Ints{0, 3, 1, 2}}});
    g.output(g.op("Add", {g.op("Mul", {g.init(torch::rand({channels, 1, 1})), nchw}), x}));
    return g;
}

TEST(OnnxFusion, ConvNextBlockFusesAndKeepsChannelsLastThroughout) {
    const Graph g = convnext_block(16);
    const torch::Tensor x = torch::randn({2, 16, 9, 9});
    for (const bool channels_last : {false, true}) {
        const OnnxProgram fused = expect_same_results(g, {x}, channels_last);
        EXPECT_EQ(fused.fusion_counts().gelu, 1);
        EXPECT_EQ(fused.fusion_counts().linear, 2);
        EXPECT_THAT(op_types(fused), ElementsAre("Conv", "Transpose", "LayerNormalization", "Linear", "Gelu",
                                                 "Linear", "Transpose", "Mul", "Add"));
        // The NHWC Linear's output read back as NCHW is channels_last: with NHWC inputs the block hands the
        // next convolution an NHWC tensor, as PyTorch's own CNBlock does, with no layout copy anywhere.
        const torch::Tensor y = fused.run({x})[0];
        EXPECT_TRUE(y.is_contiguous(torch::MemoryFormat::ChannelsLast)) << "channels_last=" << channels_last;
    }
}

// --- Reshape chains ---

TEST(OnnxFusion, HeadSplitReshapeTransposeReshapeBecomesOneViewChain) {
    // nn.MultiheadAttention's export on a sequence-first view: [L, B, E] -> [L, B * H, d] -> [B * H, L, d]
    // -> [B, H, L, d], the targets as constants (after specialization) or computed.
    Graph g;
    const std::string x = g.op("Transpose", {g.input("x")}, {{"perm", Ints{1, 0, 2}}});
    const std::string split = g.op("Reshape", {x, g.init(torch::tensor(Ints{0, -1, 2}, torch::kLong))});
    const std::string heads = g.op("Transpose", {split}, {{"perm", Ints{1, 0, 2}}});
    g.output(g.op("Reshape", {heads, g.init(torch::tensor(Ints{3, -1, 5, 2}, torch::kLong))}));
    const torch::Tensor input = torch::randn({3, 5, 8});
    const OnnxProgram fused = expect_same_results(g, {input});
    EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "ViewChain"));
    const torch::Tensor y = fused.run({input})[0];
    EXPECT_EQ(y.sizes(), (Ints{3, 4, 5, 2}));
    EXPECT_EQ(y.storage().data(), input.storage().data());  // a view of the input, no copy

    Graph shared = g;
    shared.expose("Reshape");  // the split heads read elsewhere too: the chain stays apart
    EXPECT_THAT(op_types(expect_same_results(shared, {input})), ElementsAre("Transpose", "Reshape", "Transpose", "Reshape"));
}

// The dynamo exporter writes allowzero=1 on its reshapes: the chain fuses the same, and a 0 in a
// target keeps its allowzero meaning (an empty dimension, not the input's).
TEST(OnnxFusion, AllowZeroReshapesFuseIntoAViewChainThatKeepsTheirMeaning) {
    Graph g;
    const std::string x = g.op("Transpose", {g.input("x")}, {{"perm", Ints{1, 0, 2}}});
    const std::string split =
        g.op("Reshape", {x, g.init(torch::tensor(Ints{5, 12, 2}, torch::kLong))}, {{"allowzero", std::int64_t{1}}});
    const std::string heads = g.op("Transpose", {split}, {{"perm", Ints{1, 0, 2}}});
    g.output(g.op("Reshape", {heads, g.init(torch::tensor(Ints{3, 4, 5, 2}, torch::kLong))}, {{"allowzero", std::int64_t{1}}}));
    const torch::Tensor input = torch::randn({3, 5, 8});
    const OnnxProgram fused = expect_same_results(g, {input});
    EXPECT_THAT(op_types(fused), ElementsAre("Transpose", "ViewChain"));
    EXPECT_EQ(fused.run({input})[0].storage().data(), input.storage().data());  // a view, no copy

    Graph empty;  // [4, 0] -> [0, 2, 2] with allowzero: the 0 is a size (without it, 4: no fit), and the chain says so
    const std::string first =
        empty.op("Reshape", {empty.input("x"), empty.init(torch::tensor(Ints{0, 2, 2}, torch::kLong))}, {{"allowzero", std::int64_t{1}}});
    const std::string swapped = empty.op("Transpose", {first}, {{"perm", Ints{0, 2, 1}}});
    empty.output(empty.op("Reshape", {swapped, empty.init(torch::tensor(Ints{0, 4}, torch::kLong))}, {{"allowzero", std::int64_t{1}}}));
    const OnnxProgram fused_empty = OnnxProgram::from_model(empty.model, "t.onnx", true);
    EXPECT_THAT(op_types(fused_empty), ElementsAre("ViewChain"));
    EXPECT_EQ(fused_empty.run({torch::zeros({4, 0})})[0].sizes(), (Ints{0, 4}));
}

// --- The fused domain ---

TEST(OnnxFusion, FusedOperatorsInAFileAreCheckedLikeAnyOther) {
    onnx::OnnxModel m = model_of({"Linear", {in(torch::zeros({2, 2})), init(torch::zeros({2, 2}))}});
    m.graph.nodes[0].domain = std::string(kFusedDomain);
    try {
        OnnxProgram::from_model(m, "m.onnx");
        ADD_FAILURE() << "a Linear without its bias loaded";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("m.onnx: node 'node' (Linear): input 2 is missing"));
    }
    m.graph.nodes[0].op_type = "NoSuchOp";
    EXPECT_THROW(OnnxProgram::from_model(m, "m.onnx"), UserError);
}

TEST(OnnxFusion, SummaryNamesEachKindOnce) {
    EXPECT_EQ((FusionCounts{}).summary(), "no fusions");
    EXPECT_EQ((FusionCounts{12, 25, 0, 12, 48}).summary(), "fused 12 GELU, 25 LayerNorm, 12 attention, 48 Linear");
}

}  // namespace
}  // namespace inferbench::torch_onnx
