// The roofline per layer: made-up layer times and node costs placed by hand-checkable arithmetic, what
// gets no cost (fused, renamed, added, ambiguous, unknown) and why, and the layers of stored benchmarks
// costed from their model files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "analysis/roofline_placement.hpp"
#include "devices/roofline.hpp"
#include "models/onnx_builder.hpp"
#include "report/roofline_plot.hpp"
#include "roofline_fixture.hpp"

namespace inferbench::devices {
namespace {

using analysis::LayerPoint;
using analysis::LayerSet;
using analysis::place_layers;
using analysis::roofline_layers;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing_fixture::kH200Environment;
using testing_fixture::RooflineDb;

// fp16 roofs of an H200: datasheet 989.5 TFLOP/s and 4.8 TB/s, measured 800 TFLOP/s and 4 TB/s.
DeviceRoofs h200_fp16() {
    DeviceRoofs roofs;
    roofs.key = "h200-sxm";
    roofs.name = "NVIDIA H200 SXM 141GB";
    roofs.compute = {{Precision::fp16, 989.5e12, RoofOrigin::datasheet, "tensor cores, dense"},
                     {Precision::fp16, 800e12, RoofOrigin::measured, "probe gemm_fp16"}};
    roofs.memory = {{"DRAM", 4.8e12, RoofOrigin::datasheet, "datasheet"},
                    {"DRAM", 4e12, RoofOrigin::measured, "probe dram_copy"}};
    return roofs;
}

models::NodeCost node(std::string name, std::string op, std::int64_t flops, std::int64_t read, std::int64_t written,
                      bool unknown = false) {
    return {std::move(name), std::move(op), {}, 0, 0, flops, read, written, unknown, {}};
}

// Bytes of the (fp32) cost model are halved for these fp16 benchmarks.
const std::vector<models::NodeCost> kNodes = {
    node("conv1", "Conv", 2'000'000'000, 3'000'000, 1'000'000),  // 2e6 B at fp16: 1000 FLOP/B
    node("relu1", "Relu", 1'000'000, 4'000'000, 4'000'000),      // 4e6 B at fp16: 0.25 FLOP/B
    node("relu2", "Relu", 1'000'000, 4'000'000, 4'000'000),
    node("conv2", "Conv", 1'000'000'000, 1'000'000, 1'000'000),
    node("flat", "Flatten", 0, 0, 0),
    node("dup", "Add", 10, 10, 10),
    node("dup", "Add", 10, 10, 10),
    node("tiny", "Add", 100, 800, 400),
    node("odd", "CustomOp", 0, 0, 0, true),
};

const std::vector<LayerTime> kLayers = {
    {"conv1", "Conv", "CUDAExecutionProvider", 10, 200'000},  // 20 us per call: 1e14 FLOP/s
    {"relu1", "Relu", "CUDAExecutionProvider", 10, 50'000},   // 5 us: 2e11 FLOP/s
    {"relu2", "Relu", "CUDAExecutionProvider", 10, 5'000},    // 0.5 us: 2e12 FLOP/s, above the 1e12 DRAM roof
    {"conv2", "FusedConv", "CUDAExecutionProvider", 10, 100'000},
    {"ReorderOutput", "ReorderOutput", "CPUExecutionProvider", 10, 40'000},
    {"flat", "Flatten", "CUDAExecutionProvider", 10, 1'000},
    {"dup", "Add", "CUDAExecutionProvider", 10, 3'000},
    {"tiny", "Add", "CUDAExecutionProvider", 10, 0},
    {"odd", "CustomOp", "CUDAExecutionProvider", 10, 1'000},
};

const LayerPoint& find(const LayerSet& set, std::string_view node) {
    for (const auto& layer : set.layers)
        if (layer.layer.node == node) return layer;
    throw std::logic_error("no layer " + std::string(node));
}

TEST(LayerRoofline, CostedLayersArePlacedUnderTheBenchmarksRoofs) {
    const LayerSet set = place_layers(kLayers, kNodes, 0.5, h200_fp16(), Precision::fp16);
    ASSERT_EQ(set.layers.size(), kLayers.size());
    EXPECT_EQ(set.total_ns, 400'000);
    const LayerPoint& conv = set.layers[0];  // in the stored order
    EXPECT_EQ(conv.layer, kLayers[0]);
    EXPECT_TRUE(conv.costed);
    EXPECT_DOUBLE_EQ(conv.mean_ns, 20'000);
    EXPECT_DOUBLE_EQ(conv.share_pct, 50);
    EXPECT_DOUBLE_EQ(conv.flops, 2e9);
    EXPECT_DOUBLE_EQ(conv.bytes, 2e6);
    EXPECT_DOUBLE_EQ(conv.intensity, 1000);
    EXPECT_DOUBLE_EQ(conv.achieved_per_s, 1e14);
    ASSERT_TRUE(conv.datasheet && conv.measured);
    EXPECT_DOUBLE_EQ(conv.datasheet->attainable_per_s, 989.5e12);  // above the ridge (206 FLOP/B)
    EXPECT_NEAR(conv.datasheet->percent, 100 * 1e14 / 989.5e12, 1e-9);
    EXPECT_EQ(conv.datasheet->bound, Bound::compute);
    EXPECT_DOUBLE_EQ(conv.measured->percent, 12.5);
    EXPECT_TRUE(conv.note.empty());

    const LayerPoint& relu = find(set, "relu1");
    EXPECT_DOUBLE_EQ(relu.intensity, 0.25);
    EXPECT_DOUBLE_EQ(relu.achieved_per_s, 2e11);
    EXPECT_DOUBLE_EQ(relu.datasheet->attainable_per_s, 1.2e12);  // 0.25 FLOP/B x 4.8 TB/s
    EXPECT_NEAR(relu.datasheet->percent, 100.0 / 6, 1e-9);
    EXPECT_EQ(relu.datasheet->bound, Bound::memory);
    EXPECT_DOUBLE_EQ(relu.measured->percent, 20);
    EXPECT_DOUBLE_EQ(relu.share_pct, 12.5);

    const LayerPoint& fast = find(set, "relu2");
    EXPECT_DOUBLE_EQ(fast.measured->percent, 200);
    EXPECT_THAT(fast.note, HasSubstr("above the bandwidth roof: caches hold part of the traffic"));
}

TEST(LayerRoofline, HostDispatchTimesAreNotPlaced) {
    std::vector<LayerTime> dispatched = kLayers;
    for (auto& layer : dispatched) layer.host_dispatch = layer.provider != "CPUExecutionProvider";
    const LayerSet set = place_layers(dispatched, kNodes, 0.5, h200_fp16(), Precision::fp16);
    const LayerPoint& conv = set.layers[0];
    EXPECT_TRUE(conv.costed);
    EXPECT_DOUBLE_EQ(conv.intensity, 1000) << "the cost model's figures stay";
    EXPECT_DOUBLE_EQ(conv.achieved_per_s, 0);
    EXPECT_FALSE(conv.datasheet || conv.measured);
    EXPECT_THAT(conv.note, HasSubstr("the host's dispatch of the GPU work, not the work"));
    EXPECT_EQ(set.host_dispatch,
              static_cast<std::size_t>(
                  std::count_if(dispatched.begin(), dispatched.end(), [](const auto& l) { return l.host_dispatch; })));
    EXPECT_THAT(set.notes, Contains(HasSubstr("not placed, and their shares are of the dispatch time")));
    EXPECT_EQ(place_layers(kLayers, kNodes, 0.5, h200_fp16(), Precision::fp16).host_dispatch, 0u);
}

TEST(LayerRoofline, WhatHasNoCostIsCountedAndSaidNeverGuessed) {
    const LayerSet set = place_layers(kLayers, kNodes, 0.5, h200_fp16(), Precision::fp16);
    const LayerPoint& fused = find(set, "conv2");
    EXPECT_FALSE(fused.costed);
    EXPECT_EQ(fused.note, "ran as FusedConv, the model's node is a Conv: fused with others by the runtime");
    EXPECT_FALSE(fused.datasheet);
    EXPECT_EQ(find(set, "ReorderOutput").note, "not in the model: renamed or added by the runtime");
    EXPECT_EQ(find(set, "dup").note, "the model has 2 nodes named dup");
    EXPECT_THAT(find(set, "odd").note, HasSubstr("the cost model has no figures for this CustomOp"));
    EXPECT_EQ(set.uncosted, 4u);
    EXPECT_DOUBLE_EQ(set.uncosted_share_pct, 36);  // (100 + 40 + 3 + 1) of 400 us
    ASSERT_EQ(set.notes.size(), 1u);
    EXPECT_THAT(set.notes[0], HasSubstr("4 of 9 layers (36.0% of the profiled time) have no cost"));
    // Costed, yet not placed: no bytes, or no time to divide by.
    const LayerPoint& view = find(set, "flat");
    EXPECT_TRUE(view.costed);
    EXPECT_FALSE(view.datasheet);
    EXPECT_THAT(view.note, HasSubstr("moves no bytes"));
    const LayerPoint& tiny = find(set, "tiny");
    EXPECT_TRUE(tiny.costed);
    EXPECT_DOUBLE_EQ(tiny.intensity, 100.0 / 600);
    EXPECT_FALSE(tiny.datasheet);
    EXPECT_THAT(tiny.note, HasSubstr("timed as 0 ns"));
}

// An fp32 layer above the CUDA-core peak where the device has TF32 tensor cores: said to be TF32 (as
// cuDNN runs fp32 convolutions on Ampere and newer), not blamed on the cost model.
TEST(LayerRoofline, Fp32AboveTheCudaCorePeakIsSaidToRunOnTf32) {
    DeviceRoofs roofs;
    roofs.compute = {{Precision::fp32, 67e12, RoofOrigin::datasheet, "CUDA cores"},
                     {Precision::tf32, 494.5e12, RoofOrigin::datasheet, "tensor cores, dense"}};
    roofs.memory = {{"DRAM", 4.8e12, RoofOrigin::datasheet, "datasheet"}};
    // 2e9 FLOP in 20 us: 1e14 FLOP/s, above 67 TFLOP/s; 1000 FLOP/B: compute-bound.
    const std::vector<models::NodeCost> nodes = {node("conv", "Conv", 2'000'000'000, 1'000'000, 1'000'000)};
    const std::vector<LayerTime> times = {{"conv", "Conv", "LibTorch CUDA", 10, 200'000}};
    const LayerSet set = place_layers(times, nodes, 1.0, roofs, Precision::fp32);
    ASSERT_EQ(set.layers.size(), 1u);
    EXPECT_EQ(set.layers[0].note,
              "above the fp32 CUDA-core peak: cuDNN/cuBLAS ran it on TF32 tensor cores (roof 494.5 TFLOP/s)");
}

TEST(LayerRoofline, NoRoofsOrNoPrecisionStillGivesTheLayersFigures) {
    const LayerSet no_precision = place_layers(kLayers, kNodes, 1.0, h200_fp16(), std::nullopt);
    EXPECT_DOUBLE_EQ(no_precision.layers[0].intensity, 500);  // fp32 bytes: 4e6
    EXPECT_DOUBLE_EQ(no_precision.layers[0].achieved_per_s, 1e14);
    EXPECT_FALSE(no_precision.layers[0].datasheet);
    const LayerSet no_roofs = place_layers(kLayers, kNodes, 0.5, DeviceRoofs{}, Precision::fp16);
    EXPECT_FALSE(no_roofs.layers[0].measured);
    EXPECT_TRUE(no_roofs.layers[0].costed);
    const LayerSet no_model = place_layers(kLayers, {}, 0.5, h200_fp16(), Precision::fp16);
    EXPECT_EQ(no_model.uncosted, kLayers.size());
    EXPECT_DOUBLE_EQ(no_model.uncosted_share_pct, 100);
}

// A stored benchmark whose model file is a small network: conv1 (8 -> 16 channels, 3x3, 16x16) and relu1.
class LayerRooflineDb : public RooflineDb {
protected:
    std::string write_model() {
        models::GraphBuilder g("net", 1);
        using models::OnnxDim;
        g.add_input("x", models::OnnxElemType::float32,
                    {OnnxDim::symbolic("batch"), OnnxDim::fixed(8), OnnxDim::fixed(16), OnnxDim::fixed(16)});
        const auto conv = g.conv("conv1", "x", 8, 16, {.kernel = 3, .pad = 1});
        const auto relu = g.relu("relu1", conv);
        g.add_output(relu, models::OnnxElemType::float32,
                     {OnnxDim::symbolic("batch"), OnnxDim::fixed(16), OnnxDim::fixed(16), OnnxDim::fixed(16)});
        const auto path = scratch_.path() / "net.onnx";
        std::ofstream(path, std::ios::binary) << g.serialize();
        return path.string();
    }

    // Batch 2, fp32, 100 iterations in 1 s, with the model-cost metrics a run stores and `layers`.
    std::int64_t stored(std::int64_t run_id, const std::string& model_path, const std::vector<LayerTime>& layers) {
        store::BenchmarkRecord b = record(run_id, "cuda:0", "fp32", 2);
        b.backend = "onnxruntime";
        b.model_path = model_path;
        const auto its = iterations(100);
        const std::vector<store::Metric> metrics = {{std::string(model_metrics::kFlopsPerInference), 1e6, "FLOP"},
                                                    {std::string(model_metrics::kBytesPerInference), 1e5, "B"}};
        return store_->add_benchmark(b, {.iterations = its, .metrics = metrics, .layer_times = layers});
    }
};

const std::vector<LayerTime> kNetLayers = {{"conv1", "Conv", "CUDAExecutionProvider", 4, 400'000},
                                           {"relu1", "Relu", "CUDAExecutionProvider", 4, 40'000},
                                           {"ReorderOutput", "ReorderOutput", "CPUExecutionProvider", 4, 4'000}};

TEST_F(LayerRooflineDb, StoredLayersAreCostedFromTheirModelFileAtTheBenchmarksBatch) {
    const auto r = run(kH200Environment);
    const std::string model = write_model();
    const std::int64_t with = stored(r, model, kNetLayers);
    stored(r, model, {});  // no layer times: no layer set
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 2u);
    const auto layers = roofline_layers(*store_, set);
    ASSERT_EQ(layers.size(), 1u);
    EXPECT_EQ(set.points[layers[0].point].benchmark.benchmark_id, with);
    const LayerPoint& conv = layers[0].layers[0];
    // Batch 2: 2 x 16 x 16 x 16 outputs x 8 x 9 MACs = 589824 MACs; bytes: input 16384 + weight 4608 + output 32768.
    EXPECT_DOUBLE_EQ(conv.flops, 2 * 589'824.0);
    EXPECT_DOUBLE_EQ(conv.bytes, 16'384 + 4'608 + 32'768);
    EXPECT_DOUBLE_EQ(conv.achieved_per_s, 2 * 589'824.0 / 100e-6);
    ASSERT_TRUE(conv.datasheet);  // the H200's fp32 CUDA-core roof
    EXPECT_DOUBLE_EQ(conv.datasheet->peak_per_s, set.devices[0].compute_roof(Precision::fp32, false)->per_s);
    const LayerPoint& relu = layers[0].layers[1];
    EXPECT_DOUBLE_EQ(relu.flops, 8192);  // one per output element
    EXPECT_DOUBLE_EQ(relu.bytes, 2 * 32'768);
    EXPECT_FALSE(layers[0].layers[2].costed);
    EXPECT_EQ(layers[0].uncosted, 1u);
}

TEST_F(LayerRooflineDb, AModelFileThatIsGoneLeavesEveryLayerWithoutACost) {
    const auto r = run(kH200Environment);
    const std::string gone = (scratch_.path() / "deleted.onnx").string();
    stored(r, gone, kNetLayers);
    const auto set = placed();
    const auto layers = roofline_layers(*store_, set);
    ASSERT_EQ(layers.size(), 1u);
    EXPECT_EQ(layers[0].uncosted, 3u);
    EXPECT_THAT(layers[0].layers[0].note, HasSubstr("its model file " + gone + " is gone"));
    ASSERT_EQ(layers[0].notes.size(), 1u);
    EXPECT_THAT(layers[0].notes[0], HasSubstr("no layer has a cost: its model file"));
}

TEST_F(LayerRooflineDb, TheLayerFigureDrawsTheRoofsTheLayersAndTheWholeModel) {
    const auto r = run(kH200Environment);
    stored(r, write_model(), kNetLayers);
    const auto set = placed();
    const auto layers = roofline_layers(*store_, set);
    ASSERT_EQ(layers.size(), 1u);
    const auto script =
        report::layer_roofline_script(set, layers[0], 1, report::ImageFormat::svg, {}, scratch_.path() / "l.svg");
    EXPECT_THAT(script, HasSubstr("Layers of net b2 fp32 (onnxruntime, h200-sxm): 2 of 3 layers drawn, 99% of the "
                                  "profiled time"));
    EXPECT_THAT(script, HasSubstr("title 'fp32 datasheet"));
    EXPECT_THAT(script, HasSubstr("title 'Conv (1 layer, 90% of the time)'"));
    EXPECT_THAT(script, HasSubstr("title 'Relu (1 layer, 9% of the time)'"));
    EXPECT_THAT(script, HasSubstr("'conv1 90.1%'"));  // the one slowest layer labelled
    EXPECT_EQ(script.find("'relu1 9.0%'"), std::string::npos);
    EXPECT_THAT(script, HasSubstr("title 'whole model, net b2 fp32:"));
    if (!report::gnuplot_available()) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    const auto formats = {report::ImageFormat::png, report::ImageFormat::svg};
    const auto files =
        report::draw_layer_rooflines(set, layers, scratch_.path() / "plots", std::vector<report::ImageFormat>(formats));
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].filename(), "roofline-layers-1-net-b2.png");
    EXPECT_GT(std::filesystem::file_size(files[0]), 1000u);
    EXPECT_GT(std::filesystem::file_size(files[1]), 1000u);
}

}  // namespace
}  // namespace inferbench::devices
