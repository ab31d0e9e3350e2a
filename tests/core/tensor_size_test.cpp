// Element counts and byte sizes from shapes in files: exact where they fit, refused where they do not.
#include "core/tensor_size.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/splitmix64.hpp"

namespace inferbench {
namespace {

// Exact products for the reference (a GCC and clang extension).
__extension__ typedef __int128 Wide;

constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
constexpr std::int64_t k2to31 = std::int64_t{1} << 31;

// The count in 128 bits, or -1 for a negative dimension: the reference the checked arithmetic must agree with.
Wide reference_count(const std::vector<std::int64_t>& shape) {
    for (const std::int64_t d : shape)
        if (d < 0) return -1;
    for (const std::int64_t d : shape)
        if (d == 0) return 0;
    const Wide beyond = static_cast<Wide>(1) << 64;  // more than any count: stays there, never wraps
    Wide n = 1;
    for (const std::int64_t d : shape) n = n > beyond / d ? beyond : n * d;
    return n;
}

std::string error_of(const std::vector<std::int64_t>& shape, std::size_t element_size) {
    try {
        byte_size_or_throw("input x", shape, element_size);
    } catch (const UserError& e) {
        return e.what();
    }
    return {};
}

TEST(TensorSize, ShapesThatWrapA64BitSizeAreRefused) {
    EXPECT_EQ(checked_element_count(std::vector<std::int64_t>{1, k2to62 + 16}), k2to62 + 16);
    EXPECT_FALSE(checked_byte_size(std::vector<std::int64_t>{1, k2to62 + 16}, 4).has_value());
    // 4 * (2^62 + 16) is 64 modulo 2^64: the size that once was allocated and written past.
    EXPECT_EQ(error_of({1, k2to62 + 16}, 4),
              "input x has shape [1, 4611686018427387920]: 4611686018427387920 elements of 4 bytes are more than "
              "274877906944 bytes; the shape in the file is out of range (inferbench feeds at most 256 GiB per tensor "
              "and per cell)");
    // 2^31 * 2^31 * 4 is 0 modulo 2^64: the size that once made a null buffer.
    EXPECT_FALSE(checked_byte_size(std::vector<std::int64_t>{1, k2to31, k2to31}, 4).has_value());
    EXPECT_EQ(error_of({4, k2to31, k2to31, 4}, 1),
              "input x has shape [4, 2147483648, 2147483648, 4]: its element count overflows a 64-bit integer; the "
              "shape in the file is out of range (inferbench feeds at most 256 GiB per tensor and per cell)");
    EXPECT_EQ(error_of({-3, 2}, 4).find("input x has shape [-3, 2]: a dimension is negative"), 0u);
}

TEST(TensorSize, SizesUpToTheLimitAreExact) {
    EXPECT_EQ(byte_size_or_throw("x", std::vector<std::int64_t>{2, 3, 224, 224}, 4), 2u * 3 * 224 * 224 * 4);
    EXPECT_EQ(byte_size_or_throw("x", std::vector<std::int64_t>{}, 8), 8u);  // a scalar
    EXPECT_EQ(byte_size_or_throw("x", std::vector<std::int64_t>{0, 5}, 4), 0u);
    EXPECT_EQ(byte_size_or_throw("x", std::vector<std::int64_t>{std::int64_t{1} << 36}, 4), kMaxTensorBytes);
    EXPECT_THROW(byte_size_or_throw("x", std::vector<std::int64_t>{(std::int64_t{1} << 36) + 1}, 4), UserError);
    EXPECT_EQ(add_total_bytes_or_throw("x", kMaxTensorBytes - 4, 4), kMaxTensorBytes);
    EXPECT_THROW(add_total_bytes_or_throw("input y", kMaxTensorBytes - 4, 5), UserError);
}

// Many random and adversarial shapes: every answer is the exact size, or a refusal where the exact size is
// beyond the limit; none wraps.
TEST(TensorSize, RandomAndAdversarialShapesNeverWrap) {
    SplitMix64 rng(32);
    const std::int64_t edges[] = {0, 1, 2, 3, 7, 1000, k2to31 - 1, k2to31, k2to31 + 1, std::int64_t{1} << 32,
                                  k2to62, k2to62 + 16, std::numeric_limits<std::int64_t>::max(), -1,
                                  std::numeric_limits<std::int64_t>::min()};
    for (int round = 0; round < 20000; ++round) {
        std::vector<std::int64_t> shape(rng.next() % 6);
        for (auto& d : shape) {
            const std::uint64_t pick = rng.next() % 4;
            d = pick == 0 ? edges[rng.next() % std::size(edges)]
                          : static_cast<std::int64_t>(rng.next() >> (rng.next() % 64));
        }
        const std::size_t element_size = std::size_t{1} << (rng.next() % 4);
        const Wide count = reference_count(shape);
        const auto checked = checked_element_count(shape);
        if (count < 0 || count > std::numeric_limits<std::int64_t>::max()) {
            EXPECT_FALSE(checked.has_value());
        } else {
            ASSERT_TRUE(checked.has_value());
            EXPECT_EQ(*checked, static_cast<std::int64_t>(count));
        }
        const auto bytes = checked_byte_size(shape, element_size);
        const bool fits = count >= 0 && count * static_cast<Wide>(element_size) <= kMaxTensorBytes;
        EXPECT_EQ(bytes.has_value(), fits);
        if (bytes && fits) {
            EXPECT_EQ(static_cast<Wide>(*bytes), count * static_cast<Wide>(element_size));
        }
        if (fits) {
            EXPECT_EQ(byte_size_or_throw("x", shape, element_size), *bytes);
        } else {
            EXPECT_THROW(byte_size_or_throw("x", shape, element_size), UserError);
        }
    }
}

}  // namespace
}  // namespace inferbench
