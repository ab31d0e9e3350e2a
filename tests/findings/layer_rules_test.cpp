// Per-layer pitfalls: data movement and CPU fallbacks from stored layer times; memory-bound, depthwise,
// 1x1 and unaligned layers from layer sets placed under roofs (as analysis::roofline_layers places them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "findings/rules.hpp"
#include "findings_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace testing;

LayerTime layer(std::string node, std::string op, std::string provider, std::int64_t ns) {
    return {std::move(node), std::move(op), std::move(provider), 10, ns * 10};
}

TEST(LayerPitfalls, StoredLayersWithCopiesAndCpuNodesFireAndComputeOnlyLayersStaySilent) {
    auto b = benchmark("cuda:0", "fp16", 1, "onnxruntime");
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    b.layers = {layer("conv1", "FusedConv", "CUDAExecutionProvider", 500'000),
                layer("transpose_3", "Transpose", "CUDAExecutionProvider", 300'000),
                layer("nms", "NonMaxSuppression", "CPUExecutionProvider", 200'000)};
    auto clean = b;
    clean.layers = {layer("conv1", "FusedConv", "CUDAExecutionProvider", 500'000),
                    layer("conv2", "FusedConv", "CUDAExecutionProvider", 500'000)};
    const StoredRun run({b, clean});
    const auto found = layer_pitfalls(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("layers.data_movement", "layers.cpu_fallback"));
    EXPECT_THAT(found[0].statement, HasSubstr("30% of the profiled time is in 1 data-movement layers"));
    EXPECT_THAT(found[0].evidence.layers, ElementsAre("transpose_3 (Transpose, 30.0%)"));
    EXPECT_THAT(found[1].statement, HasSubstr("1 layers of this GPU benchmark ran on the CPU (20.0%"));
    EXPECT_EQ(found[1].severity, Severity::problem);
    EXPECT_THAT(layer_pitfalls(run.at(1)), IsEmpty());
}

TEST(LayerPitfalls, HostDispatchTimesGiveCountsNeverShares) {
    auto b = benchmark("cuda:0", "fp16", 1, "onnxruntime");
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    b.layers = {layer("conv1", "FusedConv", "CUDAExecutionProvider", 5'000),
                layer("transpose_3", "Transpose", "CUDAExecutionProvider", 30'000),
                layer("nms", "NonMaxSuppression", "CPUExecutionProvider", 200'000)};
    for (auto& l : b.layers) l.host_dispatch = l.provider == "CUDAExecutionProvider";
    const StoredRun run({b});
    const auto found = layer_pitfalls(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("layers.cpu_fallback")) << "no data-movement share from dispatch times";
    EXPECT_THAT(found[0].statement, AllOf(HasSubstr("1 layers of this GPU benchmark ran on the CPU"),
                                          HasSubstr("share of the GPU time is not measured")));
    EXPECT_THAT(found[0].statement, Not(HasSubstr("%")));
    auto device_timed = b;
    for (auto& l : device_timed.layers) l.host_dispatch = false;
    const StoredRun both({b, b, device_timed});
    const auto unmeasured = unmeasured_layer_times(both.evidence());
    ASSERT_THAT(ids(unmeasured), ElementsAre("layers.gpu_times_not_measured"));
    EXPECT_THAT(unmeasured[0].benchmarks, ElementsAre(both.at(0).id(), both.at(1).id()));
    EXPECT_THAT(unmeasured[0].statement, HasSubstr("for 2 benchmarks: the runtime's profiler timed the host's dispatch "
                                                   "of their 4 GPU layers"));
    const StoredRun measured({device_timed});
    EXPECT_THAT(unmeasured_layer_times(measured.evidence()), IsEmpty());
}

TEST(LayerPitfalls, WithoutALayerProfileNothingIsSaid) {
    auto b = benchmark();
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    const StoredRun run({b});
    EXPECT_THAT(layer_pitfalls(run.at(0)), IsEmpty());
}

analysis::LayerPoint placed(std::string node, double share_pct, std::vector<std::string> flags, devices::Bound bound) {
    analysis::LayerPoint p;
    p.layer = {std::move(node), "Conv", "CUDAExecutionProvider", 1, 1000};
    p.share_pct = share_pct;
    p.costed = true;
    p.flags = std::move(flags);
    p.datasheet = devices::Placement{};
    p.datasheet->bound = bound;
    return p;
}

BenchmarkEvidence evidence_with(std::vector<analysis::LayerPoint> layers, std::string device = "cuda:0") {
    BenchmarkEvidence e;
    e.summary.benchmark.benchmark_id = 7;
    e.summary.benchmark.device = std::move(device);
    e.layers = analysis::LayerSet{};
    e.layers->layers = std::move(layers);
    return e;
}

TEST(LayerPitfalls, MemoryBoundDepthwiseAndUnalignedLayersFire) {
    using devices::Bound;
    const auto e = evidence_with({placed("dw1", 40, {"depthwise"}, Bound::memory),
                                  placed("pw1", 25, {"1x1", "unaligned"}, Bound::memory),
                                  placed("fc", 35, {}, Bound::compute)});
    const auto found = layer_pitfalls(e);
    EXPECT_THAT(ids(found), ElementsAre("layers.memory_bound", "layers.depthwise", "layers.pointwise",
                                        "layers.unaligned"));
    EXPECT_THAT(only(found, "layers.memory_bound").statement, HasSubstr("65% of the profiled time is in 2 layers"));
    EXPECT_THAT(only(found, "layers.memory_bound").evidence.layers,
                ElementsAre("dw1 (Conv, 40.0%)", "pw1 (Conv, 25.0%)"));
    // Tensor-core alignment is a GPU matter: on a CPU the unaligned layers say nothing.
    auto on_cpu = evidence_with(e.layers->layers, "cpu");
    EXPECT_THAT(ids(layer_pitfalls(on_cpu)), Not(Contains("layers.unaligned")));
}

TEST(LayerPitfalls, ComputeBoundLayersWithoutPitfallsStaySilent) {
    using devices::Bound;
    const auto e = evidence_with({placed("c1", 60, {}, Bound::compute), placed("c2", 35, {}, Bound::compute),
                                  placed("dw", 5, {"depthwise"}, Bound::memory)});
    EXPECT_THAT(layer_pitfalls(e), IsEmpty());
}

}  // namespace
}  // namespace inferbench::findings
