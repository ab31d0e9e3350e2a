// The arithmetic of int8 calibration: ranges, histograms, the percentile and entropy thresholds, scales
// and zero points, per-channel weights.
#include "models/quant_calibration.hpp"

#include <cmath>
#include <string>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace inferbench::models::quant {
namespace {

std::vector<float> gaussian(std::size_t n, float sigma, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0F, sigma);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
}

TEST(QuantCalibration, RangeSpansEveryBatchAndSkipsNonFiniteValues) {
    Range r;
    EXPECT_TRUE(r.empty);
    r.add(std::vector<float>{1.0F, -2.0F});
    r.add(std::vector<float>{3.5F, NAN, INFINITY});
    EXPECT_FALSE(r.empty);
    EXPECT_FLOAT_EQ(r.min, -2.0F);
    EXPECT_FLOAT_EQ(r.max, 3.5F);
    EXPECT_FLOAT_EQ(r.max_abs(), 3.5F);
}

TEST(QuantCalibration, PercentileCutsTheOutliersMinmaxWouldKeep) {
    std::vector<float> v = gaussian(100'000, 1.0F, 1);
    v.push_back(50.0F);  // one outlier: min/max would spend the int8 range on it
    Range r;
    r.add(v);
    Histogram h(r.max_abs());
    h.add(v);
    const float p = percentile_threshold(h, 99.9);
    EXPECT_GT(p, 3.0F);
    EXPECT_LT(p, 3.6F) << "|x| of a unit gaussian exceeds 3.29 0.1% of the time";
    EXPECT_FLOAT_EQ(percentile_threshold(h, 100.0), r.max_abs());
}

TEST(QuantCalibration, EntropyThresholdLiesBetweenTheBulkAndTheOutlier) {
    std::vector<float> v = gaussian(200'000, 1.0F, 2);
    for (int i = 0; i < 5; ++i) v.push_back(40.0F);
    Range r;
    r.add(v);
    Histogram h(r.max_abs());
    h.add(v);
    const float t = entropy_threshold(h);
    EXPECT_GT(t, 2.0F) << "clipping the bulk of the distribution costs more than it saves";
    EXPECT_LT(t, 20.0F) << "a handful of outliers is not worth the resolution";
}

TEST(QuantCalibration, EntropyOfAUniformDistributionKeepsItsWholeRange) {
    std::vector<float> v(100'000);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    for (auto& x : v) x = uniform(rng);
    Histogram h(1.0F);
    h.add(v);
    EXPECT_GT(entropy_threshold(h), 0.9F);
}

TEST(QuantCalibration, SymmetricAndAsymmetricParameters) {
    EXPECT_FLOAT_EQ(symmetric_int8(12.7F).scale, 0.1F);
    EXPECT_EQ(symmetric_int8(12.7F).zero_point, 0);
    EXPECT_FLOAT_EQ(symmetric_int8(0.0F).scale, 1.0F) << "an all-zero tensor still gets a usable scale";
    const QuantParams u = asymmetric_uint8(-1.0F, 3.0F);
    EXPECT_FLOAT_EQ(u.scale, 4.0F / 255.0F);
    EXPECT_EQ(u.zero_point, 64);
    EXPECT_EQ(asymmetric_uint8(0.5F, 2.0F).zero_point, 0) << "the range always holds zero";
    EXPECT_EQ(quantize_int8(1.26F, {0.1F, 0}), 13);
    EXPECT_EQ(quantize_int8(-100.0F, {0.1F, 0}), -128);
    EXPECT_EQ(quantize_uint8(-1.0F, u), 0);
    EXPECT_EQ(quantize_uint8(3.0F, u), 255);
}

TEST(QuantCalibration, WeightsGetOneScalePerChannelAlongTheAxis) {
    // [2 channels, 3]: channel 0 spans 1.27, channel 1 spans 0.127.
    const std::vector<float> w{1.27F, -0.5F, 0.0F, 0.127F, -0.0635F, 0.01F};
    const std::vector<std::int64_t> dims{2, 3};
    std::vector<std::int8_t> q;
    const std::vector<float> scales = quantize_weights(w, dims, 0, q);
    ASSERT_EQ(scales.size(), 2U);
    EXPECT_FLOAT_EQ(scales[0], 0.01F);
    EXPECT_FLOAT_EQ(scales[1], 0.001F);
    EXPECT_EQ(q, (std::vector<std::int8_t>{127, -50, 0, 127, -64, 10}));
    const std::vector<float> columns = quantize_weights(w, dims, 1, q);
    ASSERT_EQ(columns.size(), 3U);
    EXPECT_FLOAT_EQ(columns[1], 0.5F / 127.0F);
    const std::vector<float> tensor = quantize_weights(w, dims, std::nullopt, q);
    ASSERT_EQ(tensor.size(), 1U);
    EXPECT_FLOAT_EQ(tensor[0], 0.01F);
    EXPECT_EQ(q[3], 13);
}

// Reduced range (ONNX Runtime's reduce_range): each channel's largest |x| maps to 64, so that two uint8 x int8
// products add up within int16 (2 x 255 x 64 = 32640 <= 32767; at 127 they reach 64770).
TEST(QuantCalibration, ReducedRangeWeightsStayWithin64) {
    const std::vector<float> w{1.28F, -0.5F, 0.0F, 0.064F, -0.064F, 0.01F};
    const std::vector<std::int64_t> dims{2, 3};
    std::vector<std::int8_t> q;
    const std::vector<float> scales = quantize_weights(w, dims, 0, q, WeightRange::reduced);
    ASSERT_EQ(scales.size(), 2U);
    EXPECT_FLOAT_EQ(scales[0], 0.02F);
    EXPECT_FLOAT_EQ(scales[1], 0.001F);
    EXPECT_EQ(q, (std::vector<std::int8_t>{64, -25, 0, 64, -64, 10}));
    EXPECT_EQ(max_weight_level(WeightRange::full), 127);
    EXPECT_LE(2 * 255 * max_weight_level(WeightRange::reduced), 32767);
    EXPECT_GT(2 * 255 * max_weight_level(WeightRange::full), 32767);
}

TEST(QuantCalibration, Float8E4M3RoundsToNearestEvenAndSaturates) {
    EXPECT_EQ(to_float8e4m3fn(1.0F), 0x38);
    EXPECT_EQ(to_float8e4m3fn(-1.0F), 0xB8);
    EXPECT_EQ(to_float8e4m3fn(448.0F), 0x7E);
    EXPECT_EQ(to_float8e4m3fn(1e6F), 0x7E) << "saturated to the largest finite, never NaN";
    EXPECT_EQ(to_float8e4m3fn(-1e6F), 0xFE);
    EXPECT_EQ(to_float8e4m3fn(std::nanf("")), 0x7F);
    EXPECT_EQ(to_float8e4m3fn(0.0F), 0x00);
    EXPECT_EQ(to_float8e4m3fn(1.0F + 1.0F / 16.0F), 0x38) << "a tie rounds to the even mantissa";
    EXPECT_EQ(to_float8e4m3fn(1.0F + 3.0F / 16.0F), 0x3A);
    EXPECT_EQ(to_float8e4m3fn(std::ldexp(1.0F, -9)), 0x01) << "the smallest subnormal";
    EXPECT_EQ(to_float8e4m3fn(std::ldexp(7.0F, -9)), 0x07);
    EXPECT_EQ(to_float8e4m3fn(std::ldexp(1.0F, -6)), 0x08) << "the smallest normal";
    for (int b = 0; b < 256; ++b) {
        if ((b & 0x7F) == 0x7F) continue;
        const float v = from_float8e4m3fn(static_cast<std::uint8_t>(b));
        EXPECT_EQ(to_float8e4m3fn(v), b == 0x80 ? 0x80 : b) << b << " reads back as itself";
    }
}

TEST(QuantCalibration, Fp8WeightsScaleEachChannelTo448) {
    const std::vector<float> w{1.0F, -2.0F, 0.5F, 0.25F, 0.0F, 0.0F};
    const std::vector<std::int64_t> dims{3, 2};
    std::vector<std::uint8_t> q;
    const std::vector<float> scales = quantize_weights_fp8(w, dims, 0, q);
    ASSERT_EQ(scales.size(), 3U);
    EXPECT_FLOAT_EQ(scales[0], 2.0F / kFloat8E4M3Max);
    EXPECT_FLOAT_EQ(scales[1], 0.5F / kFloat8E4M3Max);
    EXPECT_FLOAT_EQ(scales[2], 1.0F) << "a channel of zeros";
    EXPECT_EQ(q[1], 0xFE);
    EXPECT_EQ(q[2], 0x7E);
    EXPECT_NEAR(from_float8e4m3fn(q[0]) * scales[0], 1.0F, 1.0F / 16.0F);
    EXPECT_EQ(q[4], 0x00);
}

TEST(QuantCalibration, CalibratesActivationsOverEveryBatchOfThePass) {
    const std::vector<std::string> names{"a", "b", "never"};
    int passes = 0;
    const CalibrationPass pass = [&](const TensorVisit& visit) {
        ++passes;
        const std::vector<float> first{-1.0F, 0.5F}, second{3.0F}, other{-0.25F};
        visit("a", first);
        visit("a", second);
        visit("b", other);
        visit("unknown", second);
    };
    const auto minmax = calibrate_activations(names, {CalibrationMethod::minmax, 99.99, ActivationType::int8}, pass);
    EXPECT_EQ(passes, 1) << "min/max needs one pass";
    ASSERT_EQ(minmax.size(), 2U) << "a name without values gets no parameters";
    EXPECT_FLOAT_EQ(minmax.at("a").scale, 3.0F / 127.0F);
    EXPECT_FLOAT_EQ(minmax.at("b").scale, 0.25F / 127.0F);
    const auto fp8 = calibrate_activations(names, {CalibrationMethod::minmax, 99.99, ActivationType::float8e4m3}, pass);
    EXPECT_FLOAT_EQ(fp8.at("a").scale, 3.0F / kFloat8E4M3Max);
    const auto uint8 = calibrate_activations(names, {CalibrationMethod::minmax, 99.99, ActivationType::uint8}, pass);
    EXPECT_FLOAT_EQ(uint8.at("a").scale, asymmetric_uint8(-1.0F, 3.0F).scale);
    EXPECT_EQ(uint8.at("a").zero_point, asymmetric_uint8(-1.0F, 3.0F).zero_point);
    passes = 0;
    const auto entropy = calibrate_activations(names, {CalibrationMethod::entropy, 99.99, ActivationType::int8}, pass);
    EXPECT_EQ(passes, 2) << "the histogram methods read the values twice";
    EXPECT_GT(entropy.at("a").scale, 0.0F);
    EXPECT_LE(entropy.at("a").scale, 3.0F / 127.0F * 1.001F);
}

}  // namespace
}  // namespace inferbench::models::quant
