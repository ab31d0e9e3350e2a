// The cost model on the zoo against published figures (within 2%), with each source's convention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <utility>

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
    // The zoo's parameter figure (trainable); batch-norm running mean and variance counted apart.
    std::int64_t running_stats = 0;
    for (const auto& n : cost.nodes)
        if (n.op_type == "BatchNormalization") running_stats += 2 * n.outputs[0].dims[1];
    EXPECT_EQ(cost.totals.parameters, find_zoo_model("resnet50")->parameters);
    EXPECT_EQ(cost.totals.batch_norm_statistics, running_stats);
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
    // One parameter count everywhere: `models inspect` and the summary say what `list models` says.
    EXPECT_EQ(cost.totals.parameters, find_zoo_model("mobilenet")->parameters);
    EXPECT_EQ(cost.totals.parameters, 4'231'976);
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

// --- Detectors and Swin at their published input sizes. Each source's convention is stated where it
// is used: "FLOPs" in the literature are sometimes multiply-adds (fvcore, the Swin paper), sometimes
// 2 per multiply-add (darknet, ultralytics, MLPerf's "OPs"); some count biases or normalisation.

// What the sources' conventions need from one zoo model at batch 1, computed once per process:
// the big models' weights make building them cost a second or more each.
struct ZooCounts {
    std::int64_t macs = 0;                 // Conv, ConvTranspose, Gemm, MatMul
    std::int64_t conv_outputs = 0;         // output elements of every Conv (one bias add each, if biased)
    std::int64_t batch_norm_elements = 0;  // BatchNormalization output elements
    std::int64_t layer_norm_elements = 0;  // LayerNormalization output elements
    std::int64_t unknown_nodes = 0;
    std::size_t warnings = 0;
};

const ZooCounts& zoo_counts(const std::string& name) {
    static std::map<std::string, ZooCounts> cache;
    if (const auto it = cache.find(name); it != cache.end()) return it->second;
    const auto inspected = inspect(build_zoo_model(name, 0));
    const auto cost = estimate_cost(inspected.model, inspected.shapes);
    ZooCounts c{cost.totals.macs, 0, 0, 0, cost.totals.unknown_nodes, inspected.shapes.warnings.size()};
    for (const auto& n : cost.nodes) {
        const std::int64_t elements = n.outputs.empty() ? 0 : n.outputs[0].elements();
        if (n.op_type == "Conv") c.conv_outputs += elements;
        if (n.op_type == "BatchNormalization") c.batch_norm_elements += elements;
        if (n.op_type == "LayerNormalization") c.layer_norm_elements += elements;
    }
    std::cout << name << ": " << static_cast<double>(c.macs) / 1e9 << " GMACs, conv outputs " << c.conv_outputs
              << ", BN elements " << c.batch_norm_elements << ", LayerNorm elements " << c.layer_norm_elements << "\n";
    return cache.emplace(name, c).first->second;
}

// Within 2% of `published` and, as every figure below is, equal to it at the precision it is
// printed with (`unit`: its last digit's place), with the figures in the failure message.
::testing::AssertionResult matches(double computed, double published, double unit) {
    const double error = relative_error(computed, published);
    if (error <= 0.02 && std::abs(computed - published) <= unit / 2 * (1 + 1e-9)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "computed " << computed << ", published " << published << " (+-" << unit / 2
                                         << "): " << 100 * error << "% off";
}

// MLPerf Inference's paper (Reddi et al. 2020, arXiv:1911.02549, Table I, "GOPS/input") counts 2
// operations per multiply-add, as its other rows show: ResNet-50 v1.5 "8.2" = 2 x 4.1 G and
// MobileNet-v1 "1.138" = 2 x 569 M mult-adds. SSD-MobileNet-v1 300x300: 2.47 GOPS.
TEST(DetectorCost, SsdMobilenetMatchesMlperf) {
    const ZooCounts& c = zoo_counts("ssd-mobilenet");
    EXPECT_EQ(c.unknown_nodes, 0);
    EXPECT_TRUE(matches(2.0 * static_cast<double>(c.macs), 2.47e9, 0.01e9));  // 1.237 GMACs
}

// The same table: SSD-ResNet34 1200x1200, 433 GOPS = 216.5 G multiply-adds.
TEST(DetectorCost, SsdResnet34MatchesMlperf) {
    const ZooCounts& c = zoo_counts("ssd-resnet34");
    EXPECT_EQ(c.unknown_nodes, 0);
    EXPECT_TRUE(matches(2.0 * static_cast<double>(c.macs), 433e9, 1e9));  // 216.4 GMACs
}

// darknet (pjreddie.com/darknet/yolo, and what `darknet detector` prints for cfg/yolov3.cfg):
// YOLOv3-416 65.86 BFLOPs, YOLOv3-608 140.69 BFLOPs. darknet counts each convolutional layer as
// 2 * n * size^2 * c / groups * out_h * out_w: 2 FLOPs per multiply-add, no bias, BN folded (not
// counted), shortcut, route and upsample layers 0.
TEST(DetectorCost, Yolov3MatchesDarknet) {
    for (const auto& [name, published] : {std::pair{"yolov3", 65.86e9}, {"yolov3-608", 140.69e9}}) {
        const ZooCounts& c = zoo_counts(name);
        EXPECT_EQ(c.unknown_nodes, 0) << name;
        EXPECT_TRUE(matches(2.0 * static_cast<double>(c.macs), published, 0.01e9)) << name;
    }
}

// ultralytics YOLOv5 doubles what thop counts (FLOPs = 2 x thop's multiply-adds); SiLU, max
// pooling, nearest upsampling and concatenation count 0. Three figures, three conventions:
// - The README's v7.0 table, "FLOPs @640 (B)": s 16.5, m 49.0, l 109.1, x 205.7. Counted on the
//   fused model (model.fuse() folds each BN into its convolution, which gains a bias) with a thop
//   that added 1 per output element for a convolution's bias: 2 x (MACs + conv outputs). All four
//   match to the printed digit; 2 x MACs alone would give 16.4, 48.9, 109.0, 205.4.
// - What current releases print after fusing (detect.py, val.py: "YOLOv5s summary: 213 layers,
//   7225885 parameters, 0 gradients, 16.4 GFLOPs"): thop >= 0.1 counts no bias, so 2 x MACs.
// - The training summary, unfused ("YOLOv5s summary: 214 layers, 7235389 parameters, 7235389
//   gradients, 16.6 GFLOPs"): thop counts 4 per BN element (2, doubled for the affine scale and
//   shift), so 2 x (MACs + 4 x BN elements).
TEST(DetectorCost, Yolov5MatchesUltralytics) {
    for (const auto& [name, published] :
         {std::pair{"yolov5s", 16.5e9}, {"yolov5m", 49.0e9}, {"yolov5l", 109.1e9}, {"yolov5x", 205.7e9}}) {
        const ZooCounts& c = zoo_counts(name);
        EXPECT_EQ(c.unknown_nodes, 0) << name;
        EXPECT_TRUE(matches(2.0 * static_cast<double>(c.macs + c.conv_outputs), published, 0.1e9)) << name;
    }
    const ZooCounts& s = zoo_counts("yolov5s");
    EXPECT_TRUE(matches(2.0 * static_cast<double>(s.macs), 16.4e9, 0.1e9)) << "fused, current thop";
    EXPECT_TRUE(matches(2.0 * static_cast<double>(s.macs + 4 * s.batch_norm_elements), 16.6e9, 0.1e9))
        << "unfused, the training summary";
}

// Liu et al. 2021 (arXiv:2103.14030), Table 1, ImageNet 224x224: Swin-T 4.5G, Swin-S 8.7G, Swin-B
// 15.4G "FLOPs", and Swin-L 34.5G (Table 1(b)). These are multiply-adds (fvcore's convention and the
// authors' SwinTransformer.flops(), which counts each Linear and attention product once per
// multiply-add) plus, in flops(), one per LayerNorm element: both match.
TEST(SwinCost, MacsMatchThePaper) {
    for (const auto& [name, published] :
         {std::pair{"swin-t", 4.5e9}, {"swin-s", 8.7e9}, {"swin-b", 15.4e9}, {"swin-l", 34.5e9}}) {
        const ZooCounts& c = zoo_counts(name);
        EXPECT_EQ(c.unknown_nodes, 0) << name;
        EXPECT_TRUE(matches(static_cast<double>(c.macs), published, 0.1e9)) << name << " (MACs)";
        EXPECT_TRUE(matches(static_cast<double>(c.macs + c.layer_norm_elements), published, 0.1e9))
            << name << " (MACs + LayerNorm elements, as flops())";
    }
}

}  // namespace
}  // namespace inferbench::models
