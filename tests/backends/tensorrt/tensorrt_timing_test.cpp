// CUDA event stamps to DeviceTimes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/cuda_timing.hpp"

namespace inferbench {
namespace {

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
