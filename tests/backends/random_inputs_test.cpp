#include "backends/random_inputs.hpp"

#include <cstring>

#include <gtest/gtest.h>

#include "core/fnv1a.hpp"

namespace inferbench {
namespace {

TEST(RandomInputs, ShapesTypesAndSeedDeterminism) {
    const std::vector<TensorInfo> infos = {{"images", DType::f32, {2, 3, 4, 4}},
                                           {"input_ids", DType::i64, {2, 8}},
                                           {"attention_mask", DType::i64, {2, 8}},
                                           {"token_type_ids", DType::i64, {2, 8}}};
    const auto a = make_random_inputs(infos, 1);
    const auto b = make_random_inputs(infos, 1);
    const auto c = make_random_inputs(infos, 2);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0].data.size(), 2u * 3 * 4 * 4 * 4);
    EXPECT_EQ(a[0].data, b[0].data);
    EXPECT_NE(a[0].data, c[0].data);
    float f = 0;
    bool any_nonzero = false;
    for (std::size_t i = 0; i < 96; ++i) {
        std::memcpy(&f, a[0].data.data() + i * 4, 4);
        EXPECT_GE(f, -1.0f);
        EXPECT_LT(f, 1.0f);
        any_nonzero |= f != 0.0f;
    }
    EXPECT_TRUE(any_nonzero);
    std::int64_t v = 0;
    for (std::size_t i = 0; i < 16; ++i) {
        std::memcpy(&v, a[1].data.data() + i * 8, 8);
        EXPECT_GE(v, 0);
        EXPECT_LT(v, 1000);
        std::memcpy(&v, a[2].data.data() + i * 8, 8);
        EXPECT_EQ(v, 1);
        std::memcpy(&v, a[3].data.data() + i * 8, 8);
        EXPECT_TRUE(v == 0 || v == 1);
    }
}

TEST(RandomInputs, HalfPrecisionValuesAreInRange) {
    const auto t = make_random_inputs({{"x", DType::f16, {64}}, {"y", DType::bf16, {64}}}, 3);
    for (const auto& tensor : t) {
        for (std::size_t i = 0; i < 64; ++i) {
            std::uint16_t bits = 0;
            std::memcpy(&bits, tensor.data.data() + i * 2, 2);
            const int exponent = tensor.info.dtype == DType::f16 ? (bits >> 10) & 0x1F : (bits >> 7) & 0xFF;
            const int bias = tensor.info.dtype == DType::f16 ? 15 : 127;
            EXPECT_LT(exponent, bias) << "magnitude must stay below 1";
        }
    }
}

// The inputs of a seed are the same bytes in every build and release (results stay comparable): a
// change here changes what every benchmark feeds its model.
TEST(RandomInputs, TheBytesOfASeedArePinned) {
    const auto tensors = make_random_inputs({{"images", DType::f32, {64}},
                                             {"x", DType::f16, {16}},
                                             {"y", DType::bf16, {16}},
                                             {"input_ids", DType::i64, {16}},
                                             {"token_type_ids", DType::i32, {16}},
                                             {"q", DType::i8, {16}},
                                             {"flags", DType::boolean, {16}}},
                                            7);
    std::uint64_t digest = kFnv1aOffsetBasis;
    for (const auto& tensor : tensors)
        digest = fnv1a64({reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size()}, digest);
    EXPECT_EQ(digest, 0x326DDAFA91FEBD6FULL);
}

}  // namespace
}  // namespace inferbench
