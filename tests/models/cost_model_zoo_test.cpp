// The cost model on the zoo against published figures (within 2%), with each source's convention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "models/cost_model.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {
namespace {

struct Inspected {
    onnx::OnnxModel model;
    ShapeInference shapes;
};

Inspected inspect(const GraphBuilder& graph, std::int64_t batch = 1) {
    const std::string bytes = graph.serialize();
    Inspected out{onnx::read_onnx(std::as_bytes(std::span(bytes.data(), bytes.size())), "zoo"), {}};
    out.shapes = infer_shapes(out.model, {.batch = batch, .input_shapes = {}});
    return out;
}

double relative_error(double value, double reference) { return std::abs(value - reference) / reference; }

std::int64_t flops_of(const ModelCost& cost, std::string_view op) {
    std::int64_t sum = 0;
    for (const auto& n : cost.nodes)
        if (n.op_type == op) sum += n.flops;
    return sum;
}

class ResNet50 : public ::testing::Test {
protected:
    static void SetUpTestSuite() { inspected_ = new Inspected(inspect(build_zoo_model("resnet50", 0))); }
    static void TearDownTestSuite() { delete inspected_; }
    static Inspected* inspected_;
};
Inspected* ResNet50::inspected_ = nullptr;

// torchvision's model table lists ResNet50_Weights.IMAGENET1K_V2 at "4.09 GFLOPS", measured with
// fvcore-style counting: convolutions and the fc layer, 1 multiply-add = 1 "FLOP", batch-norm,
// ReLU, pooling and residual adds ignored. That is our MAC total. In FLOPs proper (1 MAC = 2
// FLOPs) it is 8.2 GFLOPs, the figure e.g. the MLPerf and NVIDIA tables quote.
TEST_F(ResNet50, MacsMatchTorchvisionAndFvcore) {
    const auto cost = estimate_cost(inspected_->model, inspected_->shapes);
    EXPECT_TRUE(inspected_->shapes.warnings.empty());
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
    EXPECT_LT(relative_error(static_cast<double>(cost.totals.macs), 4.09e9), 0.02) << cost.totals.macs;
    EXPECT_LT(relative_error(2.0 * static_cast<double>(cost.totals.macs), 8.18e9), 0.02);
    // The zoo's parameter figure (trainable) plus batch-norm running mean and variance.
    std::int64_t running_stats = 0;
    for (const auto& n : cost.nodes)
        if (n.op_type == "BatchNormalization") running_stats += 2 * n.outputs[0].dims[1];
    EXPECT_EQ(cost.totals.parameters, find_zoo_model("resnet50")->parameters + running_stats);
}

// Sources that count every op (not fvcore's convention) add batch-norm (2 FLOPs/element unless
// folded), ReLU, the residual adds and pooling: under 1.5% on top of 2 * MACs for ResNet-50.
TEST_F(ResNet50, BatchNormIsCountedUnlessFolded) {
    const auto unfolded = estimate_cost(inspected_->model, inspected_->shapes);
    const auto folded = estimate_cost(inspected_->model, inspected_->shapes, {.fold_batch_norm = true});
    EXPECT_EQ(unfolded.totals.macs, folded.totals.macs);
    EXPECT_GT(flops_of(unfolded, "BatchNormalization"), 0);
    EXPECT_EQ(flops_of(folded, "BatchNormalization"), 0);
    EXPECT_EQ(unfolded.totals.flops - folded.totals.flops, flops_of(unfolded, "BatchNormalization"));
    const double extra = static_cast<double>(unfolded.totals.flops - 2 * unfolded.totals.macs);
    EXPECT_LT(extra / static_cast<double>(unfolded.totals.flops), 0.015);
    EXPECT_LT(relative_error(static_cast<double>(folded.totals.flops), 8.18e9), 0.02);
    EXPECT_EQ(unfolded.histogram.at("Conv"), 53);
}

TEST_F(ResNet50, MacsScaleWithTheBatch) {
    const auto batch8 = infer_shapes(inspected_->model, {.batch = 8, .input_shapes = {}});
    EXPECT_EQ(estimate_cost(inspected_->model, batch8).totals.macs,
              8 * estimate_cost(inspected_->model, inspected_->shapes).totals.macs);
}

// Howard et al. 2017 (arXiv:1704.04861), Table 8: 1.0 MobileNet-224, 569 million mult-adds,
// 4.2 million parameters. The paper counts convolutions and the classifier.
TEST(MobileNetCost, MacsMatchThePaper) {
    const auto inspected = inspect(build_zoo_model("mobilenet", 0));
    const auto cost = estimate_cost(inspected.model, inspected.shapes);
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
    EXPECT_LT(relative_error(static_cast<double>(cost.totals.macs), 569e6), 0.02) << cost.totals.macs;
    std::int64_t depthwise = 0;
    for (const auto& n : cost.nodes)
        if (std::ranges::find(n.flags, "depthwise") != n.flags.end()) ++depthwise;
    EXPECT_EQ(depthwise, 13);  // the paper's 13 depthwise separable blocks
}

// The BERT figure is computed, not quoted (papers give parameters, not MACs), by the standard
// transformer count: per token, every weight matrix costs one MAC per weight (2 * params FLOPs,
// Kaplan et al. 2020, arXiv:2001.08361, Table 1), plus attention's QK^T and PV, each S*H MACs per
// token per layer over the whole (bidirectional) sequence. For sequence S, hidden H, intermediate
// I, L layers: MACs = S * (L * (4H^2 + 2HI) + 2*L*S*H) + span head S*H*2.
// Embedding lookups (Gather) are not MACs.
double bert_macs(const BertConfig& c) {
    const double s = static_cast<double>(c.sequence_length);
    const double h = static_cast<double>(c.hidden);
    const double l = static_cast<double>(c.layers);
    const double i = static_cast<double>(c.intermediate);
    return s * (l * (4 * h * h + 2 * h * i) + 2 * l * s * h) + s * h * 2;
}

TEST(BertCost, BaseMacsMatchTheTransformerFormula) {
    const auto inspected = inspect(build_zoo_model("bert-base", 0), 1);
    const auto cost = estimate_cost(inspected.model, inspected.shapes);
    EXPECT_EQ(cost.totals.unknown_nodes, 0);
    EXPECT_LT(relative_error(static_cast<double>(cost.totals.macs), bert_macs(kBertBase)), 0.02)
        << cost.totals.macs << " vs " << bert_macs(kBertBase);  // 35.0 GMACs at 384 tokens
}

// bert-large is 1.3 GB of weights; the same architecture with 2 of its 24 layers (MACs are
// linear in the layer count) checks the large widths (hidden 1024, 16 heads, 4096) cheaply.
TEST(BertCost, LargeWidthsMatchTheTransformerFormula) {
    BertConfig two_layers = kBertLarge;
    two_layers.layers = 2;
    two_layers.vocab = 8;
    const auto inspected = inspect(build_bert(two_layers, 0), 2);
    const auto cost = estimate_cost(inspected.model, inspected.shapes);
    EXPECT_LT(relative_error(static_cast<double>(cost.totals.macs), 2 * bert_macs(two_layers)), 0.02);
    EXPECT_GT(bert_macs(kBertLarge), 1.2e11);  // the full model: about 123 GMACs (246 GFLOPs) per sequence
}

}  // namespace
}  // namespace inferbench::models
