// The QDQ rewrite: which activations need ranges, and the structure of a quantized graph (int8 per-channel
// weights, int32 biases, a QuantizeLinear/DequantizeLinear pair per activation, the float weights gone).
#include "models/onnx_qdq.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/onnx_wire.hpp"
#include "transform_models.hpp"

namespace inferbench::models::onnx {
namespace {

namespace fs = std::filesystem;

class QdqTest : public ::testing::Test {
protected:
    QdqTest() : dir_(fs::temp_directory_path() / ("inferbench-qdq-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
        path_ = testing::write_model(testing::small_cnn(), dir_ / "cnn.onnx");
    }
    ~QdqTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path dir_;
    fs::path path_;
};

const OnnxTensor* find_tensor(const OnnxGraph& g, const std::string& name) {
    for (const auto& t : g.initializers)
        if (t.name == name) return &t;
    return nullptr;
}

const OnnxNode* find_node(const OnnxGraph& g, std::string_view op, const std::string& output = "") {
    for (const auto& n : g.nodes)
        if (n.op_type == op && (output.empty() || n.outputs[0] == output)) return &n;
    return nullptr;
}

const OnnxNode* producer(const OnnxGraph& g, const std::string& value) {
    for (const auto& n : g.nodes)
        if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
    return nullptr;
}

TEST_F(QdqTest, CalibratesTheInputsAndReadOutputsOfConvMatMulAndGemm) {
    // Conv's input and output (read by Relu); Gemm's input; not the logits, which no node reads.
    EXPECT_EQ(qdq_activations(read_onnx_file(path_)), (std::vector<std::string>{"images", "conv", "flat"}));
}

TEST_F(QdqTest, QuantizesWeightsPerChannelBiasesToInt32AndActivationsPerTensor) {
    const std::map<std::string, quant::QuantParams, std::less<>> ranges{
        {"images", {0.01F, 0}}, {"conv", {0.02F, 0}}, {"flat", {0.04F, 0}}};
    const std::string bytes = quantize_to_qdq(path_, ranges, {});
    const OnnxGraph g = read_onnx(wire::as_bytes(bytes), "quantized").graph;
    const OnnxModel original = read_onnx_file(path_);

    const OnnxNode* conv = find_node(g, "Conv");
    ASSERT_NE(conv, nullptr);
    const OnnxNode* x = producer(g, conv->inputs[0]);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->op_type, "DequantizeLinear");
    const OnnxNode* q = producer(g, x->inputs[0]);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->op_type, "QuantizeLinear");
    EXPECT_EQ(q->inputs[0], "images");
    ASSERT_NE(find_tensor(g, q->inputs[2]), nullptr);
    EXPECT_EQ(find_tensor(g, q->inputs[2])->data_type, DataType::int8) << "int8 activations: symmetric, zero point 0";

    const OnnxNode* w = producer(g, conv->inputs[1]);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->op_type, "DequantizeLinear");
    EXPECT_EQ(std::get<std::int64_t>(w->attributes.at("axis")), 0);
    const OnnxTensor* wq = find_tensor(g, w->inputs[0]);
    ASSERT_NE(wq, nullptr);
    EXPECT_EQ(wq->data_type, DataType::int8);
    EXPECT_EQ(wq->dims, (std::vector<std::int64_t>{8, 3, 3, 3}));
    EXPECT_EQ(find_tensor(g, w->inputs[1])->dims, (std::vector<std::int64_t>{8})) << "one scale per output channel";
    EXPECT_EQ(find_tensor(g, "conv.weight"), nullptr) << "the float weight no node reads any more is gone";

    const OnnxNode* b = producer(g, conv->inputs[2]);
    ASSERT_NE(b, nullptr);
    const OnnxTensor* bq = find_tensor(g, b->inputs[0]);
    EXPECT_EQ(bq->data_type, DataType::int32);
    const OnnxTensor* b_scale = find_tensor(g, b->inputs[1]);
    const OnnxTensor* w_scale = find_tensor(g, w->inputs[1]);
    float bs = 0;
    float ws = 0;
    std::memcpy(&bs, b_scale->raw.data(), 4);
    std::memcpy(&ws, w_scale->raw.data(), 4);
    EXPECT_FLOAT_EQ(bs, 0.01F * ws) << "bias scale = input scale x weight scale";

    const OnnxNode* relu = find_node(g, "Relu");
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ(producer(g, relu->inputs[0])->op_type, "DequantizeLinear") << "Conv's output is quantized for fusion";
    const OnnxNode* gemm = find_node(g, "Gemm");
    EXPECT_EQ(std::get<std::int64_t>(producer(g, gemm->inputs[1])->attributes.at("axis")), 0) << "transB: [out, in]";
    EXPECT_EQ(gemm->outputs[0], "logits");
    EXPECT_EQ(find_node(g, "Max")->inputs[1], "floor") << "ops outside Conv, MatMul and Gemm stay float";
    EXPECT_EQ(g.outputs.size(), original.graph.outputs.size());
}

TEST_F(QdqTest, FloatBiasesStayFloatBesideInt8Weights) {
    const std::map<std::string, quant::QuantParams, std::less<>> ranges{
        {"images", {0.01F, 0}}, {"conv", {0.02F, 0}}, {"flat", {0.04F, 0}}};
    const std::string bytes = quantize_to_qdq(path_, ranges, {.quantize_bias = false});
    const OnnxGraph g = read_onnx(wire::as_bytes(bytes), "quantized").graph;
    const OnnxNode* conv = find_node(g, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(producer(g, conv->inputs[1])->op_type, "DequantizeLinear") << "the weight is still int8";
    EXPECT_EQ(producer(g, conv->inputs[2]), nullptr) << "the bias is read as it was";
    const OnnxTensor* bias = find_tensor(g, conv->inputs[2]);
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->data_type, DataType::float32);
    for (const auto& node : g.nodes) {
        if (node.op_type != "DequantizeLinear") continue;
        const OnnxTensor* t = find_tensor(g, node.inputs[0]);
        EXPECT_TRUE(t == nullptr || t->data_type != DataType::int32) << node.name << " dequantizes an int32 tensor";
    }
}

TEST_F(QdqTest, PerTensorWeightsAndUint8Activations) {
    const std::map<std::string, quant::QuantParams, std::less<>> ranges{{"images", {0.01F, 128}}};
    const std::string bytes = quantize_to_qdq(path_, ranges, {.per_channel = false, .activation = quant::ActivationType::uint8});
    const OnnxGraph g = read_onnx(wire::as_bytes(bytes), "quantized").graph;
    const OnnxNode* conv = find_node(g, "Conv");
    const OnnxNode* w = producer(g, conv->inputs[1]);
    EXPECT_FALSE(w->attributes.contains("axis"));
    EXPECT_TRUE(find_tensor(g, w->inputs[1])->dims.empty());
    const OnnxNode* x = producer(g, conv->inputs[0]);
    const OnnxTensor* zero = find_tensor(g, x->inputs[2]);
    EXPECT_EQ(zero->data_type, DataType::uint8);
    EXPECT_EQ(static_cast<int>(zero->raw[0]), 128);
    EXPECT_EQ(producer(g, find_node(g, "Relu")->inputs[0])->op_type, "Conv") << "no range given: Conv's output stays float";
}

TEST_F(QdqTest, Fp8ActivationsGetFp8WeightsAndFloatBiases) {
    auto g19 = testing::small_cnn();
    g19.set_opset_version(kFloat8QdqOpset);
    const fs::path path = testing::write_model(g19, dir_ / "cnn19.onnx");
    const std::map<std::string, quant::QuantParams, std::less<>> ranges{{"images", quant::symmetric_fp8(2.0F)},
                                                                        {"conv", quant::symmetric_fp8(4.0F)}};
    const std::string bytes = quantize_to_qdq(path, ranges, {.activation = quant::ActivationType::float8e4m3});
    const OnnxGraph g = read_onnx(wire::as_bytes(bytes), "fp8").graph;
    const OnnxNode* conv = find_node(g, "Conv");
    const OnnxNode* x = producer(g, conv->inputs[0]);
    ASSERT_EQ(x->op_type, "DequantizeLinear");
    EXPECT_EQ(find_tensor(g, x->inputs[2])->data_type, DataType::float8e4m3fn);
    const OnnxNode* w = producer(g, conv->inputs[1]);
    ASSERT_EQ(w->op_type, "DequantizeLinear");
    const OnnxTensor* weights = find_tensor(g, w->inputs[0]);
    EXPECT_EQ(weights->data_type, DataType::float8e4m3fn);
    EXPECT_EQ(find_tensor(g, w->inputs[2])->data_type, DataType::float8e4m3fn);
    EXPECT_EQ(std::get<std::int64_t>(w->attributes.at("axis")), 0);
    const OnnxTensor* scales = find_tensor(g, w->inputs[1]);
    ASSERT_EQ(scales->dims, (std::vector<std::int64_t>{8}));
    // Each output channel's largest weight maps to 448 (0x7E), or -448 (0xFE).
    const std::size_t per_channel = weights->raw.size() / 8;
    for (std::size_t c = 0; c < 8; ++c) {
        bool reaches_max = false;
        for (std::size_t i = 0; i < per_channel; ++i) {
            const auto b = std::to_integer<unsigned>(weights->raw[c * per_channel + i]);
            reaches_max = reaches_max || (b & 0x7FU) == 0x7EU;
        }
        EXPECT_TRUE(reaches_max) << "channel " << c;
    }
    const OnnxTensor* bias = find_tensor(g, conv->inputs[2]);
    ASSERT_NE(bias, nullptr) << "the bias stays a float initializer";
    EXPECT_EQ(bias->data_type, DataType::float32);
    EXPECT_THROW(quantize_to_qdq(path_, ranges, {.activation = quant::ActivationType::float8e4m3}), UserError)
        << "below opset 19 QuantizeLinear has no FP8";
}

TEST_F(QdqTest, ExtraOutputsExposeActivations) {
    const std::vector<std::string> names{"conv", "flat"};
    const OnnxGraph g = read_onnx(wire::as_bytes(with_extra_outputs(path_, names)), "augmented").graph;
    ASSERT_EQ(g.outputs.size(), 3U);
    EXPECT_EQ(g.outputs[1].name, "conv");
    EXPECT_EQ(g.outputs[1].elem_type, DataType::float32);
    EXPECT_EQ(g.outputs[2].name, "flat");
}

}  // namespace
}  // namespace inferbench::models::onnx
