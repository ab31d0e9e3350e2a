// ONNX Runtime's profile turned into per-node times: a real profile (ONNX Runtime 1.30, CPU, the zoo's
// MobileNet v1 at batch 1, graph_optimization all: one warm-up run then two, as layer_profile 2 runs
// them) and the ways a profile can be unusable.
#include "backends/onnxruntime/ort_profile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::filesystem::path kMobileNetProfile =
    std::filesystem::path(INFERBENCH_ORT_FIXTURES_DIR) / "ort-profile-mobilenet-b1.json";
// Written by hand in ONNX Runtime's format, as its CUDA execution provider profiles a small detector: one
// warm-up run and one profiled run; Shape and NonMaxSuppression fall back to the CPU, with the copies ONNX
// Runtime inserts around them (MemcpyToHost / MemcpyFromHost, run by the CUDA provider).
const std::filesystem::path kCudaFallbackProfile =
    std::filesystem::path(INFERBENCH_ORT_FIXTURES_DIR) / "ort-profile-cuda-fallback.json";

std::string error_of(std::string_view json, int skip_runs = 0) {
    try {
        ort_profile::node_times(json, "test.json", skip_runs);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no error)";
}

const LayerTime* find(const std::vector<LayerTime>& layers, std::string_view node) {
    const auto it = std::find_if(layers.begin(), layers.end(), [&](const LayerTime& l) { return l.node == node; });
    return it == layers.end() ? nullptr : &*it;
}

std::int64_t total_ns(const std::vector<LayerTime>& layers) {
    return std::accumulate(layers.begin(), layers.end(), std::int64_t{0},
                           [](std::int64_t sum, const LayerTime& l) { return sum + l.total_ns; });
}

TEST(OrtProfile, RealProfileWithoutItsWarmUpRun) {
    const auto layers = ort_profile::read_node_times(kMobileNetProfile, 1);
    // 32 nodes after ONNX Runtime's fusions (the model has 85); every one ran once per profiled run.
    ASSERT_EQ(layers.size(), 32u);
    for (const auto& layer : layers) {
        EXPECT_EQ(layer.calls, 2) << layer.node;
        EXPECT_EQ(layer.provider, "CPUExecutionProvider") << layer.node;
        EXPECT_FALSE(layer.op_type.empty()) << layer.node;
        EXPECT_FALSE(layer.node.ends_with("_kernel_time")) << layer.node;
    }
    // In the order they ran: Conv + BatchNorm + Relu6 fused into a NCHWc convolution named after the Relu6.
    EXPECT_EQ(layers.front(), (LayerTime{"Conv2d_0/Relu6_nchwc", "Conv", "CPUExecutionProvider", 2, 1'499'000}));
    EXPECT_EQ(layers.back(), (LayerTime{"probabilities", "Softmax", "CPUExecutionProvider", 2, 39'000}));
    const LayerTime* reorder = find(layers, "ReorderOutput");
    ASSERT_NE(reorder, nullptr);
    EXPECT_EQ(reorder->op_type, "ReorderOutput");
    const LayerTime* slowest = &*std::max_element(
        layers.begin(), layers.end(), [](const LayerTime& a, const LayerTime& b) { return a.total_ns < b.total_ns; });
    EXPECT_EQ(slowest->node, "Conv2d_1_pointwise/Relu6_nchwc");
    EXPECT_EQ(slowest->total_ns, 6'838'000);
    // The two runs' model_run events last 28438 + 24510 us; their kernels sum to less (scheduling between them).
    EXPECT_EQ(total_ns(layers), 52'396'000);
}

TEST(OrtProfile, EveryRunWhenNoneIsSkipped) {
    const auto layers = ort_profile::read_node_times(kMobileNetProfile);
    ASSERT_EQ(layers.size(), 32u);
    for (const auto& layer : layers) EXPECT_EQ(layer.calls, 3) << layer.node;
    EXPECT_EQ(layers.front().total_ns, 3'475'000);  // the warm-up run's first convolution took 1976 us
    EXPECT_GT(total_ns(layers), 52'396'000);
}

TEST(OrtProfile, TooFewRunsForTheWarmUp) {
    EXPECT_THAT([] { ort_profile::read_node_times(kMobileNetProfile, 3); },
                ::testing::ThrowsMessage<std::runtime_error>(
                    AllOf(HasSubstr(kMobileNetProfile.string()), HasSubstr("holds 3 run(s)"),
                          HasSubstr("3 warm-up run(s) and at least one profiled run"))));
}

TEST(OrtProfile, KernelTimeOnlyAndSummedPerNode) {
    const std::string json = R"([
{"cat": "Session", "name": "model_run", "ts": 0, "dur": 100, "ph": "X", "args": {}},
{"cat": "Node", "name": "a_fence_before", "ts": 1, "dur": 50, "args": {"op_name": "MatMul"}},
{"cat": "Node", "name": "a_kernel_time", "ts": 2, "dur": 10, "args": {"op_name": "MatMul", "provider": "CPUExecutionProvider"}},
{"cat": "Node", "name": "b_kernel_time", "ts": 20, "dur": 5, "args": {"op_name": "Relu", "provider": "CPUExecutionProvider"}},
{"cat": "Session", "name": "model_run", "ts": 200, "dur": 100, "ph": "X", "args": {}},
{"cat": "Node", "name": "a_kernel_time", "ts": 201, "dur": 12, "args": {"op_name": "MatMul", "provider": "CPUExecutionProvider"}},
{"cat": "Node", "name": "b_kernel_time", "ts": 220, "dur": 7.9, "args": {"op_name": "Relu", "provider": "CPUExecutionProvider"}}
])";
    const auto all = ort_profile::node_times(json, "test.json");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0], (LayerTime{"a", "MatMul", "CPUExecutionProvider", 2, 22'000}));
    EXPECT_EQ(all[1], (LayerTime{"b", "Relu", "CPUExecutionProvider", 2, 12'900}));  // fractions of a us kept
    const auto second = ort_profile::node_times(json, "test.json", 1);
    ASSERT_EQ(second.size(), 2u);
    EXPECT_EQ(second[0], (LayerTime{"a", "MatMul", "CPUExecutionProvider", 1, 12'000}));
    EXPECT_EQ(second[1].calls, 1);
}

TEST(OrtProfile, RunTimesInTheOrderTheRunsStarted) {
    EXPECT_EQ(ort_profile::run_times(R"([
{"cat": "Session", "name": "model_run", "ts": 200, "dur": 7.5, "args": {}},
{"cat": "Node", "name": "a_kernel_time", "ts": 201, "dur": 1, "args": {"op_name": "Add"}},
{"cat": "Session", "name": "model_loading_uri", "ts": 0, "dur": 900, "args": {}},
{"cat": "Session", "name": "model_run", "ts": 100, "dur": 40, "args": {}}
])",
                                     "test.json"),
              (std::vector<std::int64_t>{40'000, 7'500}));
    // The real profile: one warm-up run and two profiled runs.
    EXPECT_EQ(ort_profile::run_times(ort_profile::read_profile(kMobileNetProfile), "mobilenet"),
              (std::vector<std::int64_t>{26'018'000, 28'438'000, 24'510'000}));
    EXPECT_THROW(ort_profile::run_times("{}", "test.json"), std::runtime_error);
}

TEST(OrtProfile, ProfilerTimesBesideEventsOverTheSameRuns) {
    const std::vector<std::int64_t> runtime = {1'010, 2'020, 3'030};
    const std::vector<std::int64_t> events = {1'000, 2'000, 3'000};
    const auto metrics = ort_profile::compare_with_events(runtime, events);
    ASSERT_EQ(metrics.size(), 4u);
    EXPECT_EQ(metrics[0].name, "profile_runs");
    EXPECT_EQ(metrics[0].value, 3);
    EXPECT_EQ(metrics[1].name, "profile_runtime_median_ns");
    EXPECT_EQ(metrics[1].value, 2'020);
    EXPECT_EQ(metrics[2].name, "profile_events_median_ns");
    EXPECT_EQ(metrics[2].value, 2'000);
    EXPECT_EQ(metrics[3].name, "profile_runtime_over_events");
    EXPECT_DOUBLE_EQ(metrics[3].value, 6'060.0 / 6'000.0);
    EXPECT_TRUE(ort_profile::compare_with_events(runtime, std::vector<std::int64_t>{1, 2}).empty())
        << "runs that cannot be paired are not compared";
    EXPECT_TRUE(ort_profile::compare_with_events({}, {}).empty());
}

TEST(OrtProfile, MalformedJsonNamesTheFile) {
    EXPECT_THAT(error_of(R"([{"cat": "Node", "name": "a_kernel_time", "dur": )"),
                AllOf(HasSubstr("ONNX Runtime profile test.json is not valid JSON"), HasSubstr("parse error")));
    EXPECT_THAT(error_of(""), HasSubstr("not valid JSON"));
}

TEST(OrtProfile, NotAnArrayOfEvents) {
    EXPECT_THAT(error_of(R"({"traceEvents": []})"), HasSubstr("test.json is not a JSON array of trace events"));
    EXPECT_THAT(error_of(R"([1, 2])"), HasSubstr("test.json: event 0 is not an object"));
}

TEST(OrtProfile, NoNodeEvents) {
    const std::string sessions_only = R"([
{"cat": "Session", "name": "model_loading_uri", "ts": 3, "dur": 100, "args": {}},
{"cat": "Session", "name": "model_run", "ts": 200, "dur": 50, "args": {}}
])";
    EXPECT_THAT(error_of(sessions_only), HasSubstr("ONNX Runtime profile test.json has no node events"));
    EXPECT_THAT(error_of("[]"), HasSubstr("has no node events"));
    // Node events only in the warm-up run.
    const std::string warmup_only = R"([
{"cat": "Session", "name": "model_run", "ts": 0, "dur": 50, "args": {}},
{"cat": "Node", "name": "a_kernel_time", "ts": 1, "dur": 10, "args": {"op_name": "Add"}},
{"cat": "Session", "name": "model_run", "ts": 60, "dur": 50, "args": {}}
])";
    EXPECT_THAT(error_of(warmup_only, 1), HasSubstr("has no node events (\"cat\": \"Node\", \"name\": "
                                                    "\"<node>_kernel_time\") after the warm-up run"));
}

TEST(OrtProfile, AnEventWithoutItsTimes) {
    EXPECT_THAT(error_of(R"([{"cat": "Node", "name": "a_kernel_time", "ts": 1, "args": {}}])"),
                HasSubstr("test.json: event 0 has no numeric \"dur\""));
    EXPECT_THAT(error_of(R"([{"cat": "Session", "name": "model_run", "ts": "soon", "dur": 4}])"),
                HasSubstr("event 0 has no numeric \"ts\""));
}

TEST(OrtProfile, ProvidersOfACudaProfileAfterItsWarmUp) {
    const auto layers = ort_profile::read_node_times(kCudaFallbackProfile, 1);
    ASSERT_EQ(layers.size(), 8u);
    EXPECT_EQ(layers.front().node, "images_MemcpyFromHost");
    EXPECT_EQ(layers.front().provider, "CUDAExecutionProvider");
    const LayerTime* nms = find(layers, "/head/NonMaxSuppression");
    ASSERT_NE(nms, nullptr);
    EXPECT_EQ(nms->provider, "CPUExecutionProvider");
    EXPECT_EQ(nms->op_type, "NonMaxSuppression");
    EXPECT_EQ(nms->calls, 1);
    EXPECT_EQ(nms->total_ns, 1'302'000);  // the profiled run's, not the warm-up's 1480 us
    const LayerTime* conv = find(layers, "/backbone/conv1/Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->op_type, "FusedConv");
    EXPECT_EQ(conv->provider, "CUDAExecutionProvider");
    const auto on_cpu = std::count_if(layers.begin(), layers.end(),
                                      [](const LayerTime& l) { return l.provider == "CPUExecutionProvider"; });
    EXPECT_EQ(on_cpu, 2);
}

TEST(OrtProfile, UnreadableFile) {
    EXPECT_THAT([] { ort_profile::read_node_times("/nonexistent/profile.json"); },
                ::testing::ThrowsMessage<std::runtime_error>(
                    HasSubstr("cannot read ONNX Runtime profile /nonexistent/profile.json")));
}

}  // namespace
}  // namespace inferbench
