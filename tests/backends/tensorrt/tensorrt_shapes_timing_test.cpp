// Batch resolution of engine shapes, and CUDA event stamps to DeviceTimes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/tensorrt/tensorrt_shapes.hpp"
#include "backends/tensorrt/tensorrt_timing.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string shape_error(std::vector<std::int64_t> shape, std::int64_t batch) {
    try {
        resolve_batch(std::move(shape), batch, "x", "m.onnx");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(TensorRtShapes, DynamicFirstDimensionBecomesTheBatch) {
    EXPECT_THAT(resolve_batch({-1, 3, 224, 224}, 8, "x", "m.onnx"), ElementsAre(8, 3, 224, 224));
    EXPECT_THAT(resolve_batch({4, 10}, 4, "x", "m.onnx"), ElementsAre(4, 10));
    EXPECT_TRUE(resolve_batch({}, 1, "x", "m.onnx").empty());
    EXPECT_TRUE(has_dynamic_batch({-1, 3}));
    EXPECT_FALSE(has_dynamic_batch({1, 3}));
    EXPECT_FALSE(has_dynamic_batch({}));
}

TEST(TensorRtShapes, OtherShapesAreErrorsThatSayWhatToDo) {
    EXPECT_THAT(shape_error({-1, -1}, 2), AllOf(HasSubstr("input x"), HasSubstr("m.onnx"), HasSubstr("dimension 1"),
                                                HasSubstr("static shapes")));
    EXPECT_THAT(shape_error({1, 4}, 8), AllOf(HasSubstr("fixed batch size of 1"), HasSubstr("batch size 8")));
    EXPECT_THAT(shape_error({}, 2), HasSubstr("scalar"));
}

TEST(TensorRtTiming, StampsBecomeNanosecondSpans) {
    const EventStamps stamps{0.0f, 0.25f, 1.75f, 2.0f};
    const DeviceTimes times = device_times_from_events(stamps, true, 12345);
    EXPECT_EQ(times.enqueue_ns, 12345);
    EXPECT_EQ(times.h2d_ns, 250'000);
    EXPECT_EQ(times.compute_ns, 1'500'000);
    EXPECT_EQ(times.d2h_ns, 250'000);
}

TEST(TensorRtTiming, DeviceResidentMeasuresComputeOnly) {
    const DeviceTimes times = device_times_from_events({0.0f, 0.0f, 0.5f, 0.0f}, false, 900);
    EXPECT_EQ(times.compute_ns, 500'000);
    EXPECT_EQ(times.h2d_ns, kNotMeasured);
    EXPECT_EQ(times.d2h_ns, kNotMeasured);
    EXPECT_EQ(times.enqueue_ns, 900);
}

TEST(TensorRtTiming, SpansRoundAndNeverGoNegative) {
    EXPECT_EQ(span_ns(0.0f, 0.0015f), 1500);
    EXPECT_EQ(span_ns(1.0f, 1.0f), 0);
    EXPECT_EQ(span_ns(2.0f, 1.999f), 0);
    // Event resolution is about half a microsecond: a float stamp keeps that far past a minute.
    EXPECT_NEAR(static_cast<double>(span_ns(60000.0f, 60000.5f)), 500'000.0, 4000.0);
}

}  // namespace
}  // namespace inferbench
