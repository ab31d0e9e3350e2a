#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "models/weight_generator.hpp"

namespace inferbench::models {
namespace {

TEST(WeightGenerator, TensorSeedsDependOnSeedAndName) {
    EXPECT_EQ(tensor_seed(1, "conv1.weight"), tensor_seed(1, "conv1.weight"));
    EXPECT_NE(tensor_seed(1, "conv1.weight"), tensor_seed(2, "conv1.weight"));
    EXPECT_NE(tensor_seed(1, "conv1.weight"), tensor_seed(1, "conv1.bias"));
}

TEST(WeightGenerator, SignedUnitIsInRangeAndCentred) {
    WeightGenerator gen(42);
    double sum = 0.0;
    float lo = 1.0F;
    float hi = -1.0F;
    constexpr int kCount = 100000;
    for (int k = 0; k < kCount; ++k) {
        const float v = gen.next_signed_unit();
        ASSERT_GE(v, -1.0F);
        ASSERT_LT(v, 1.0F);
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_NEAR(sum / kCount, 0.0, 0.01);
    EXPECT_LT(lo, -0.99F);
    EXPECT_GT(hi, 0.99F);
}

TEST(WeightGenerator, UniformStaysInItsInterval) {
    WeightGenerator gen(7);
    std::vector<float> values(10000);
    gen.fill_uniform(values, 0.9F, 1.1F);
    for (const float v : values) {
        ASSERT_GE(v, 0.9F);
        ASSERT_LE(v, 1.1F);
    }
}

TEST(WeightGenerator, SameSeedSameValues) {
    WeightGenerator a(123);
    WeightGenerator b(123);
    WeightGenerator c(124);
    const auto va = he_uniform(a, 1000, 27);
    EXPECT_EQ(va, he_uniform(b, 1000, 27));
    EXPECT_NE(va, he_uniform(c, 1000, 27));
}

TEST(WeightGenerator, HeUniformHasVarianceTwoOverFanIn) {
    WeightGenerator gen(9);
    constexpr std::int64_t kFanIn = 576;
    const auto values = he_uniform(gen, 200000, kFanIn);
    const float bound = he_uniform_bound(kFanIn);
    double sum_sq = 0.0;
    for (const float v : values) {
        ASSERT_LE(std::abs(v), bound);
        sum_sq += double{v} * double{v};
    }
    const double variance = sum_sq / static_cast<double>(values.size());
    EXPECT_NEAR(variance * kFanIn / 2.0, 1.0, 0.02);
}

TEST(WeightGenerator, HeBoundRejectsEmptyFanIn) { EXPECT_THROW(he_uniform_bound(0), std::invalid_argument); }

}  // namespace
}  // namespace inferbench::models
