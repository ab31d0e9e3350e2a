// TensorRT versions, the GPU feature table and the builder flags of each precision.
#include "backends/tensorrt/tensorrt_platform.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr TensorRtVersion kTrt10{10, 3, 0};
constexpr TensorRtVersion kTrt86{8, 6, 1};
constexpr TensorRtVersion kTrt11{11, 0, 0};

PrecisionRequest request(Precision p, ComputeCapability cc, TensorRtVersion trt = kTrt10, bool random = true) {
    return {p, "Test GPU", cc, trt, random};
}

TEST(TensorRtPlatform, DecodesBothVersionEncodings) {
    EXPECT_EQ(to_string(decode_tensorrt_version(100300)), "10.3.0");
    EXPECT_EQ(to_string(decode_tensorrt_version(101307)), "10.13.7");
    EXPECT_EQ(to_string(decode_tensorrt_version(8601)), "8.6.1");
    EXPECT_EQ(to_string(decode_tensorrt_version(9200)), "9.2.0");
    EXPECT_EQ(to_string(decode_tensorrt_version(7103)), "7.1.3");
    EXPECT_EQ(to_string(decode_tensorrt_version(100130)), "10.1.30");
}

TEST(TensorRtPlatform, FeatureTableFollowsComputeCapability) {
    const PlatformSupport pascal_consumer = platform_support({6, 1}, kTrt10);
    EXPECT_FALSE(pascal_consumer.fast_fp16);
    EXPECT_TRUE(pascal_consumer.fast_int8);
    const PlatformSupport p100 = platform_support({6, 0}, kTrt10);
    EXPECT_TRUE(p100.fast_fp16);
    EXPECT_FALSE(p100.fast_int8);
    const PlatformSupport t4 = platform_support({7, 5}, kTrt10);
    EXPECT_TRUE(t4.fast_fp16 && t4.fast_int8);
    EXPECT_FALSE(t4.tf32 || t4.bf16 || t4.fp8);
    const PlatformSupport a100 = platform_support({8, 0}, kTrt10);
    EXPECT_TRUE(a100.tf32 && a100.bf16);
    EXPECT_FALSE(a100.fp8);
    EXPECT_TRUE(platform_support({8, 9}, kTrt10).fp8);
    EXPECT_TRUE(platform_support({9, 0}, kTrt10).fp8);
    EXPECT_TRUE(platform_support({10, 0}, kTrt10).fp8);
}

TEST(TensorRtPlatform, LibraryVersionGatesBf16AndFp8) {
    EXPECT_FALSE(platform_support({9, 0}, kTrt86).bf16);
    EXPECT_TRUE(platform_support({9, 0}, kTrt86).fp8);
    EXPECT_FALSE(platform_support({9, 0}, {8, 5, 3}).fp8);
    EXPECT_TRUE(platform_support({9, 0}, {9, 0, 0}).bf16);
}

TEST(TensorRtPlatform, Fp32ClearsEveryFlagTf32Included) {
    const PrecisionPlan plan = plan_precision(request(Precision::fp32, {9, 0}));
    EXPECT_EQ(plan.flags, BuildFlags{});
    EXPECT_FALSE(plan.flags.has(BuildFlag::tf32));
    EXPECT_FALSE(plan.needs_calibrator);
    EXPECT_FALSE(plan.unsupported);
    EXPECT_FALSE(plan.caveat);
}

TEST(TensorRtPlatform, EachPrecisionSetsItsFlags) {
    EXPECT_EQ(plan_precision(request(Precision::fp16, {7, 5})).flags, BuildFlags{BuildFlag::fp16});
    EXPECT_EQ(plan_precision(request(Precision::bf16, {8, 0})).flags, BuildFlags{BuildFlag::bf16});
    const PrecisionPlan int8 = plan_precision(request(Precision::int8, {7, 5}));
    EXPECT_EQ(int8.flags, BuildFlags{BuildFlag::int8});
    EXPECT_TRUE(int8.needs_calibrator);
    const PrecisionPlan fp8 = plan_precision(request(Precision::fp8, {8, 9}));
    EXPECT_EQ(fp8.flags, (BuildFlags{BuildFlag::fp8, BuildFlag::fp16}));
    EXPECT_FALSE(fp8.needs_calibrator);
    EXPECT_EQ(to_string(fp8.flags), "fp16+fp8");
    EXPECT_EQ(to_string(BuildFlags{}), "none");
}

TEST(TensorRtPlatform, UnsupportedPrecisionsSayWhy) {
    const PrecisionPlan fp16 = plan_precision(request(Precision::fp16, {6, 1}));
    EXPECT_THAT(fp16.unsupported.value_or(""),
                AllOf(HasSubstr("tensorrt fp16"), HasSubstr("Test GPU"), HasSubstr("compute capability 6.1"),
                      HasSubstr("TensorRT 10.3.0")));
    EXPECT_EQ(fp16.flags, BuildFlags{});
    EXPECT_THAT(plan_precision(request(Precision::bf16, {7, 5})).unsupported.value_or(""), HasSubstr("8.0 or newer"));
    EXPECT_THAT(plan_precision(request(Precision::bf16, {9, 0}, kTrt86)).unsupported.value_or(""),
                HasSubstr("TensorRT 9 or newer"));
    EXPECT_THAT(plan_precision(request(Precision::fp8, {8, 0})).unsupported.value_or(""), HasSubstr("8.9 or newer"));
    EXPECT_TRUE(plan_precision(request(Precision::int8, {6, 0})).unsupported.has_value());
}

TEST(TensorRtPlatform, CaveatsSayWhatTheNumbersDoNotMean) {
    EXPECT_THAT(plan_precision(request(Precision::int8, {8, 0})).caveat.value_or(""),
                AllOf(HasSubstr("random"), HasSubstr("accuracy is meaningless"), HasSubstr("calibration_dir")));
    EXPECT_FALSE(plan_precision(request(Precision::int8, {8, 0}, kTrt10, false)).caveat);
    EXPECT_THAT(plan_precision(request(Precision::fp8, {9, 0})).caveat.value_or(""),
                AllOf(HasSubstr("QuantizeLinear"), HasSubstr("unquantized model measures fp16")));
}

TEST(TensorRtPlatform, ElevenSetsNoPrecisionFlagAndNoCalibrator) {
    for (const Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8, Precision::fp8}) {
        const PrecisionPlan plan = plan_precision(request(p, {9, 0}, kTrt11, false));
        EXPECT_EQ(plan.route, PrecisionRoute::typed_onnx) << to_string(p);
        EXPECT_EQ(plan.flags, BuildFlags{}) << to_string(p) << ": TensorRT 11 has no precision builder flags";
        EXPECT_FALSE(plan.needs_calibrator) << to_string(p) << ": the Q/DQ file carries the scales";
        EXPECT_FALSE(plan.unsupported) << to_string(p);
    }
    EXPECT_EQ(plan_precision(request(Precision::fp16, {7, 5})).route, PrecisionRoute::builder_flags);
}

TEST(TensorRtPlatform, ElevenKeepsTheHardwareRules) {
    EXPECT_THAT(plan_precision(request(Precision::fp8, {8, 6}, kTrt11)).unsupported.value_or(""),
                AllOf(HasSubstr("8.9 or newer"), HasSubstr("TensorRT 11.0.0")));
    EXPECT_TRUE(plan_precision(request(Precision::bf16, {7, 5}, kTrt11)).unsupported.has_value());
    EXPECT_TRUE(plan_precision(request(Precision::fp16, {6, 1}, kTrt11)).unsupported.has_value());
    EXPECT_TRUE(plan_precision(request(Precision::int4, {9, 0}, kTrt11)).unsupported.has_value());
    EXPECT_THAT(plan_precision(request(Precision::int8, {8, 0}, kTrt11)).caveat.value_or(""), HasSubstr("random"));
    EXPECT_THAT(plan_precision(request(Precision::fp8, {9, 0}, kTrt11)).caveat.value_or(""), HasSubstr("float32"));
}

TEST(TensorRtPlatform, NewerThanKnownRefusesEveryPrecision) {
    const TensorRtVersion next{kNewestKnownTensorRt.major + 1, 0, 0};
    for (const Precision p : kAllPrecisions) {
        const PrecisionPlan plan = plan_precision(request(p, {9, 0}, next));
        EXPECT_THAT(plan.unsupported.value_or(""), AllOf(HasSubstr("newer"), HasSubstr("libnvinfer"))) << to_string(p);
    }
}

}  // namespace
}  // namespace inferbench
