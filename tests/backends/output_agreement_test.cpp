#include "backends/output_agreement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace inferbench {
namespace {

template <typename T>
HostTensor tensor(const std::string& name, DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values) {
    HostTensor t;
    t.info = {name, dtype, std::move(shape)};
    t.data.resize(values.size() * sizeof(T));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

HostTensor floats(std::vector<float> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return tensor("y", DType::f32, {n}, v);
}

TEST(OutputAgreement, EqualOutputsAgreeExactly) {
    const std::vector<HostTensor> a{floats({1, 2, 3})};
    const auto rows = compare_outputs(a, a);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].max_abs_error, 0);
    EXPECT_EQ(rows[0].elements, 3);
    EXPECT_TRUE(rows[0].within(0));
}

// Below 1 the error is absolute; above, relative to the largest reference magnitude.
TEST(OutputAgreement, ErrorIsRelativeToTheLargestReferenceValueOrOne) {
    const std::vector<HostTensor> got{floats({0.5F, 201})}, want{floats({0.25F, 200})};
    const auto rows = compare_outputs(got, want);
    EXPECT_DOUBLE_EQ(rows[0].max_abs_error, 1.0);
    EXPECT_DOUBLE_EQ(rows[0].reference_max, 200.0);
    EXPECT_DOUBLE_EQ(rows[0].relative_error(), 1.0 / 200);
    EXPECT_TRUE(rows[0].within(0.01));
    EXPECT_FALSE(rows[0].within(0.001));
    const std::vector<HostTensor> small_got{floats({0.3F})}, small_want{floats({0.1F})};
    const auto small = compare_outputs(small_got, small_want);
    EXPECT_NEAR(small[0].relative_error(), 0.2, 1e-7);
    EXPECT_NEAR(small[0].reference_max, 0.1, 1e-7);
}

TEST(OutputAgreement, NanOrInfinityOnOneSideOnlyIsAMismatch) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<HostTensor> got{floats({nan, inf, 1, -inf})}, want{floats({nan, inf, nan, inf})};
    const auto rows = compare_outputs(got, want);
    EXPECT_EQ(rows[0].mismatched, 2);  // 1 vs NaN, -inf vs inf; NaN vs NaN and inf vs inf agree
    EXPECT_FALSE(rows[0].within(1));
}

TEST(OutputAgreement, IntegerOutputsCompareExactly) {
    const std::vector<HostTensor> got{tensor<std::int64_t>("labels", DType::i64, {3}, {1, 7, 3})};
    const std::vector<HostTensor> want{tensor<std::int64_t>("labels", DType::i64, {3}, {1, 8, 3})};
    const auto rows = compare_outputs(got, want);
    EXPECT_EQ(rows[0].mismatched, 1);
    EXPECT_EQ(rows[0].max_abs_error, 0);
    EXPECT_FALSE(rows[0].within(0.5));
}

TEST(OutputAgreement, ShapesAndCountsThatDifferAreProblemsNotNumbers) {
    const std::vector<HostTensor> got{floats({1, 2}), floats({1})};
    const std::vector<HostTensor> want{floats({1, 2, 3})};
    const auto rows = compare_outputs(got, want);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].problem, "shape [2], reference [3]");
    EXPECT_EQ(rows[1].problem, "the reference has no such output");
    EXPECT_FALSE(rows[0].within(1e9));
    const auto reversed = compare_outputs(want, got);
    EXPECT_EQ(reversed[1].problem, "missing on the checked side");
}

// A half-precision output against an fp32 reference: the checked side's values widened exactly.
TEST(OutputAgreement, ReadsHalfAndBfloat16Exactly) {
    const HostTensor h = tensor<std::uint16_t>("h", DType::f16, {5}, {0x3C00, 0xC000, 0x7C00, 0x0001, 0x3555});
    EXPECT_EQ(element_as_double(h, 0), 1.0);
    EXPECT_EQ(element_as_double(h, 1), -2.0);
    EXPECT_TRUE(std::isinf(element_as_double(h, 2)));
    EXPECT_EQ(element_as_double(h, 3), std::ldexp(1.0, -24));  // the smallest subnormal
    EXPECT_NEAR(element_as_double(h, 4), 1.0 / 3, 1e-3);
    const HostTensor b = tensor<std::uint16_t>("b", DType::bf16, {2}, {0x3F80, 0xC2C8});
    EXPECT_EQ(element_as_double(b, 0), 1.0);
    EXPECT_EQ(element_as_double(b, 1), -100.0);
    const std::vector<HostTensor> got{tensor<std::uint16_t>("y", DType::f16, {1}, {0x3C00})};
    const std::vector<HostTensor> want{floats({1.0009765625F})};  // 1 + 2^-10: one fp16 step
    EXPECT_NEAR(compare_outputs(got, want)[0].relative_error(), 1.0 / 1024 / 1.0009765625, 1e-12);
}

// A model agrees when it has outputs and each agrees; outputs with a nearly zero reference are named.
TEST(OutputAgreement, TheVerdictOfAModelAndItsNearlyZeroOutputs) {
    const std::vector<HostTensor> got{floats({1, 2}), tensor<float>("tiny", DType::f32, {1}, {2e-4F})};
    const std::vector<HostTensor> want{floats({1, 2.002F}), tensor<float>("tiny", DType::f32, {1}, {1e-4F})};
    const auto rows = compare_outputs(got, want);
    EXPECT_NEAR(largest_relative_error(rows), 0.002 / 2.002, 1e-6);
    EXPECT_TRUE(all_agree(rows, 2e-3));
    EXPECT_FALSE(all_agree(rows, 1e-4));
    EXPECT_FALSE(all_agree({}, 1)) << "no output, no agreement";
    EXPECT_EQ(largest_relative_error({}), 0);
    EXPECT_EQ(nearly_zero_outputs(rows), std::vector<std::string>{"tiny"});
}

TEST(OutputAgreement, DefaultToleranceGrowsAsPrecisionShrinks) {
    EXPECT_LT(default_output_tolerance(Precision::fp32), default_output_tolerance(Precision::fp16));
    EXPECT_LT(default_output_tolerance(Precision::fp16), default_output_tolerance(Precision::bf16));
    EXPECT_LT(default_output_tolerance(Precision::bf16), default_output_tolerance(Precision::int8));
}

}  // namespace
}  // namespace inferbench
