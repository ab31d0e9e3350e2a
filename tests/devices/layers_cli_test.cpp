// Per-layer times end to end: a real `inferbench run` of ONNX Runtime on MobileNet with layer_profile,
// the rows it stores, and `inferbench roofline --layers` (table, JSON, figure) on them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench::testing {
namespace {

using ::testing::HasSubstr;

#if INFERBENCH_HAVE_ONNXRUNTIME
TEST(LayersCli, LayerProfileStoresLayersAndRooflinePlacesThem) {
    CliScratch scratch;
    // The worker's temporary folders go here, to see that the profile is not left behind.
    const auto tmp = scratch.path() / "tmp";
    std::filesystem::create_directories(tmp);
    const char* previous = std::getenv("TMPDIR");
    const std::string saved = previous ? previous : "";
    ::setenv("TMPDIR", tmp.c_str(), 1);
    // graph_optimization basic keeps the model's node names, so the layers find their costs.
    const auto run = scratch.run(
        "run --backend onnxruntime --model mobilenet --batch 1 --duration 200ms --warmup 100ms --db r.db "
        "--set backend_options.onnxruntime.layer_profile=3 --set backend_options.onnxruntime.graph_optimization=basic "
        "--set backend_options.onnxruntime.intra_op_threads=1");
    if (previous)
        ::setenv("TMPDIR", saved.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    for (const auto& entry : std::filesystem::directory_iterator(tmp))
        EXPECT_FALSE(entry.path().filename().string().starts_with("inferbench-")) << entry.path() << " was left";
    {
        const auto results = store::ResultsStore::open(scratch.path() / "r.db");
        const auto benchmarks = results.benchmarks();
        ASSERT_EQ(benchmarks.size(), 1u);
        const auto layers = results.layer_times(benchmarks[0].benchmark_id);
        ASSERT_GT(layers.size(), 20u);
        EXPECT_EQ(layers[0].node, "Conv2d_0");  // the first layer the network runs
        EXPECT_EQ(layers[0].op_type, "Conv");
        for (const auto& layer : layers) {
            EXPECT_EQ(layer.calls, 3) << layer.node;  // the warm-up run is not counted
            EXPECT_EQ(layer.provider, "CPUExecutionProvider") << layer.node;
        }
    }
    const auto r = scratch.run("roofline --db r.db --layers --top 5 --out plots --format svg");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("layers of benchmark 1, mobilenet b1 fp32 (onnxruntime on cpu): "));
    EXPECT_THAT(r.out, HasSubstr("the 5 slowest ("));
    EXPECT_THAT(r.out, HasSubstr("wrote plots/roofline-layers-1-mobilenet-b1.svg"));
    EXPECT_TRUE(std::filesystem::file_size(scratch.path() / "plots/roofline-layers-1-mobilenet-b1.svg") > 1000u);

    const auto json = scratch.run("roofline --db r.db --layers --top 0 --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    ASSERT_EQ(doc.at("layers").size(), 1u);
    const auto& layers = doc.at("layers")[0];
    EXPECT_EQ(layers.at("benchmark_id"), 1);
    const auto& rows = layers.at("rows");
    ASSERT_EQ(rows.size(), layers.at("layers").get<std::size_t>());  // --top 0: every layer
    double share = 0;
    double pointwise = 0;
    double depthwise = 0;
    int costed = 0;
    for (const auto& row : rows) {
        share += row.at("share_pct").get<double>();
        const std::string node = row.at("node");
        if (node.find("_pointwise") != std::string::npos) pointwise += row.at("share_pct").get<double>();
        if (node.find("_depthwise") != std::string::npos) depthwise += row.at("share_pct").get<double>();
        if (row.at("intensity_op_per_byte").is_number()) ++costed;
    }
    EXPECT_NEAR(share, 100, 0.01);
    // The convolutions take most of MobileNet's time, pointwise and depthwise alike measured. Which of the
    // two takes more is the CPU's (and its other load's) matter, not the harness's: on this 2-core VM the
    // pointwise share moved between 46% and 60%, once below the depthwise one under a parallel test.
    EXPECT_GT(pointwise, 0.0);
    EXPECT_GT(depthwise, 0.0);
    EXPECT_GT(pointwise + depthwise, 50.0);
    EXPECT_GT(costed, 20);  // every Conv and Clip of the model by its own name
    // Slowest first; the slowest layer is a convolution with FLOPs, intensity and an achieved rate (a
    // pointwise one above 1 FLOP/B, or, as load decides, a depthwise one at 0.9).
    EXPECT_EQ(rows[0].at("op_type"), "Conv");
    EXPECT_GT(rows[0].at("intensity_op_per_byte").get<double>(), 0.5);
    EXPECT_GT(rows[0].at("achieved").get<double>(), 0.0);
    EXPECT_EQ(rows[0].at("unit"), "GFLOP/s");
}

TEST(LayersCli, WhatHasNoLayerTimesOrNoCostIsSaid) {
    CliScratch scratch;
    // layer_profile 0 then 2 (a sweep), at the default graph_optimization all, which renames fused nodes.
    const auto run = scratch.run(
        "run --backend onnxruntime --model mobilenet --batch 1 --duration 100ms --warmup 50ms --db r.db "
        "--set backend_options.onnxruntime.layer_profile=0,2");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    // Wide enough for each note on one line: this checks what is said, not the layout.
    const auto r = scratch.run("roofline --db r.db --layers", "COLUMNS=250");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("no layer times stored for benchmark(s) 1: a backend stores them when its "
                                 "layer_profile option asks, e.g. --set backend_options.onnxruntime.layer_profile=N"));
    EXPECT_EQ(r.out.find("layers of benchmark 1,"), std::string::npos);
    EXPECT_THAT(r.out, HasSubstr("layers of benchmark 2, mobilenet b1 fp32 layer_profile=2 (onnxruntime on cpu)"));
    EXPECT_THAT(r.out, HasSubstr("not in the model: renamed or added by the runtime"));
    EXPECT_THAT(r.out, HasSubstr("of the profiled time) have no cost: the runtime fused, renamed or added them"));
    EXPECT_THAT(r.out, HasSubstr("ONNX Runtime ran it at graph_optimization all, which fuses and renames nodes; at "
                                 "basic (--set backend_options.onnxruntime.graph_optimization=basic)"));
}
#endif

}  // namespace
}  // namespace inferbench::testing
